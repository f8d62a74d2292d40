"""tablebase: solve small two-player games completely and publish the results as Parquet."""

# The version and its release date, said once: the package, every catalog row
# (pipeline_version) and a published bundle's metadata carry them. CHANGELOG.md's top entry
# and the root CITATION.cff name the same two (tests/test_bundle_metadata.py holds them
# together); raise all three with each release.
__version__ = "0.19.0"
__released__ = "2026-11-27"

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for type checkers; at run time __getattr__ loads them when asked for
    from pipeline.core.errors import TablebaseError
    from pipeline.tablebases import Tablebases

#: What `import pipeline` offers, loaded when first asked for: the command line's start
#: does not pay for it.
__all__ = ["TablebaseError", "Tablebases", "__released__", "__version__"]


def __getattr__(name: str) -> object:
    if name == "Tablebases":
        from pipeline.tablebases import Tablebases

        return Tablebases
    if name == "TablebaseError":
        from pipeline.core.errors import TablebaseError

        return TablebaseError
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
