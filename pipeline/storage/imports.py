"""pandas kept out of the command's process.

pyarrow, where pandas is installed (the test and Spark extras install it), imports it on
its first conversion of anything, to ask whether the input is a pandas object: 0.3 s of
every command, a tenth of a build of sticks:rows=9. The commands never give Arrow a pandas
object, so the command line hides pandas from its own process (pyarrow then works as it
does where pandas is not installed) and shows it again for the Spark engine, whose
driver checks that pandas is there.
"""

from __future__ import annotations

import sys


class _Hidden:
    """An import finder for which pandas is not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden: pipeline/storage/imports.py)", name=name)
        return None


_HIDDEN = _Hidden()


def hide_pandas() -> None:
    """From now on, in this process, `import pandas` fails, unless it was imported already."""
    if "pandas" not in sys.modules and _HIDDEN not in sys.meta_path:
        sys.meta_path.insert(0, _HIDDEN)


def show_pandas() -> None:
    """pandas importable again."""
    if _HIDDEN in sys.meta_path:
        sys.meta_path.remove(_HIDDEN)
