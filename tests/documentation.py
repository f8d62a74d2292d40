"""The project's documentation as the tests read it: the README and CONTRIBUTING.md, then the
site's pages (docs/) in the order of mkdocs.yml's nav, so that a command, SQL block or reader
line moved from the README into a page is still run (tests/test_readme.py). The site shows
CONTRIBUTING.md and CHANGELOG.md through pages that hold only a marker
(docs/hooks/generated.py); the changelog's commands are history, not run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pages() -> list[Path]:
    """The README and CONTRIBUTING.md, then every page of the site's nav, in order."""
    nav = re.findall(r"^\s*- [^:\n]+: (\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), flags=re.M)
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md"] + [ROOT / "docs" / name for name in nav]


def name(page: Path) -> str:
    return str(page.relative_to(ROOT))


#: Each page's text, by its path from the repository's root.
TEXTS = {name(page): page.read_text() for page in pages()}


def sql_blocks() -> dict[str, str]:
    """Every ```sql block, once (the first page that shows it names it), by page and number."""
    found: dict[str, str] = {}
    for page, text in TEXTS.items():
        for i, block in enumerate(re.findall(r"```sql\n(.*?)```", text, flags=re.S)):
            if block not in found.values():
                found[f"{page}:{i}"] = block
    return found


def holding(text: str) -> str:
    """The first page's text that holds `text`; AssertionError where none does."""
    for page in TEXTS.values():
        if text in page:
            return page
    raise AssertionError(f"no page of the documentation holds {text!r}")
