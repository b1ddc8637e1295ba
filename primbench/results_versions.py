"""The results.json schema's versions: the one this primbench writes and every one it reads (what each added:
`primbench.results`' docstring). A module of its own so that the format readers' error can name them without
importing the results model, which imports the readers."""

RESULTS_VERSION = "4.11.0"
KNOWN_VERSIONS = ("4.0.0", "4.1.0", "4.2.0", "4.3.0", "4.4.0", "4.5.0", "4.6.0", "4.7.0", "4.8.0", "4.9.0",
                  "4.10.0", "4.11.0")
