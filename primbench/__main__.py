"""``python -m primbench``: the same command line as ``primbench``."""

from primbench.cli import main

if __name__ == "__main__":
    main()
