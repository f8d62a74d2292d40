"""tablebase: solve small two-player games completely and publish the results as Parquet."""

# The version and its release date, said once: the package, every catalog row
# (pipeline_version) and a published bundle's metadata carry them. CHANGELOG.md's top entry
# and the root CITATION.cff name the same two (tests/test_bundle_metadata.py holds them
# together); raise all three with each release.
__version__ = "0.13.0"
__released__ = "2026-11-26"
