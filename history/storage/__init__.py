"""Where the history is kept: one contract (`history.storage.contract`), one module per
backend (`duckdb_file`, `parquet`, `postgres`), the tables and their columns (`schema`), and
the one ingest that every backend's writer takes (`ingest`)."""
