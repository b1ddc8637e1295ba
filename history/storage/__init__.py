"""Where the history is kept: one contract (`history.storage.contract`), one module per
backend (each declares its `Store` class as ``BACKEND``: `contract.backends` finds them), the
tables and their columns (`schema`), and the one ingest that every backend's writer takes
(`ingest`)."""
