"""The version of primbench (one place: the package, results.json and the CLI read it)."""

__version__ = "0.1.0"
