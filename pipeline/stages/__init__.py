"""The stages: enumerate -> solve -> verify -> export, each reading and writing Parquet."""
