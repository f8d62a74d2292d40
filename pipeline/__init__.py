"""tablebase: solve small two-player games completely and publish the results as Parquet."""

__version__ = "0.3.0"
