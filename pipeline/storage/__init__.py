"""Storage and plumbing: Parquet files, DuckDB connections, threads, progress and output."""
