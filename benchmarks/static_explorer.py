"""Bytes the explorer with no server fetches a lookup: DuckDB-WASM in Chromium reading a
ruleset's index.parquet and lookup.parquet over HTTP range requests.

    .venv/bin/python benchmarks/static_explorer.py RULESET --data DIR [--walk 10] [--jumps 10]

DIR is a data folder or a bundle; nothing is written into it. A bundle-like folder of
symbolic links to its catalog, index and lookup files, with the static explorer
(pipeline/products/explorer.py, DuckDB-WASM from `make duckdb-wasm`), is made in a temporary
folder and served by the test's Range-honouring server (tests/ranged.py). The page opens on
the ruleset's start (the first lookup, which reads each file's footer), then plays the
best move --walk times and jumps to --jumps random positions (by the address, as a shared
link does), each time waiting until the page shows the position. Reported a lookup: bytes
and requests sent, by file, and the time until the page shows it; then whether every page's
moves (names, children, outcomes, best first) are those probe reads from the files.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.datadir.layout import BY_KIND, DataDir  # noqa: E402
from pipeline.games.rulesets import Ruleset  # noqa: E402
from pipeline.products.explorer import write_explorer  # noqa: E402
from tests.ranged import Served, ranged  # noqa: E402


def bundle_of_links(data: Path, rules: Ruleset, folder: Path) -> None:
    """The ruleset's catalog, index and lookup files linked where a bundle has them, and the explorer."""
    store = DataDir(data)
    os.symlink(store.catalog.resolve(), folder / "catalog.parquet")
    files = store.files(rules.folder)
    for kind in ("index", "lookup"):
        target = folder / BY_KIND.file(rules.folder, kind)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(files.path(kind).resolve(), target)
    write_explorer(folder, lambda source, target: os.symlink(source.resolve(), target))


def random_positions(lookup: Path, count: int, seed: int) -> list[str]:
    """`count` positions of the lookup file, from row groups drawn at random."""
    draw = random.Random(seed)
    file = pq.ParquetFile(lookup)
    found = []
    for _ in range(count):
        rows = file.read_row_group(draw.randrange(file.num_row_groups), columns=["position"])["position"]
        found.append(rows[draw.randrange(len(rows))].as_py())
    return found


def expected(files, text: str) -> list[list[str]]:
    """The moves probe gives `text`, best first, as the page lists them: name, child, outcome.
    Read with probe's own functions on the files alone (probe itself would check the data
    folder's checksums, and may write their cache)."""
    from pipeline.products.probe import Move, best_first, find, lookup_rows

    row = find(str(files.index), str(files.lookup), text)
    assert row is not None, text
    children = lookup_rows(str(files.lookup), row["dst"])
    moves = [
        Move(move, *(children[dst][name] for name in ("position", "value", "remoteness")))
        for dst, move in zip(row["dst"], row["move"])
    ]
    return [[move.move, move.position, move.outcome] for move in sorted(moves, key=best_first)]


SHOWN = """() => [...document.querySelectorAll('#moves button')].map(b =>
  [b.querySelector('.name').textContent, b.dataset.position, b.className])"""


def measured(served: Served, act: Callable[[], object], page, text: str) -> dict:
    """Bytes, requests and seconds from `act()` until the page shows the position `text`."""
    from playwright.sync_api import expect

    before, started = len(served.requests), time.perf_counter()
    act()
    expect(page.locator("#position")).to_have_text(text, timeout=600_000)
    seconds = time.perf_counter() - started
    with served.lock:
        requests = served.requests[before:]
    shown = page.evaluate(SHOWN)
    by_file: dict[str, int] = {}
    for _, path, _, sent in requests:
        by_file[path] = by_file.get(path, 0) + sent
    return {
        "bytes": sum(by_file.values()),
        "requests": len(requests),
        "seconds": seconds,
        "files": by_file,
        "text": text,
        "shown": shown,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ruleset")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--walk", type=int, default=10, help="best moves played from the start")
    parser.add_argument("--jumps", type=int, default=10, help="random positions opened by address")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from tests.test_pages import chromium

    rules = Ruleset.parse(args.ruleset)
    jumps = random_positions(DataDir(args.data).files(rules.folder).lookup, args.jumps, args.seed)
    catalog = pq.read_table(DataDir(args.data).catalog, columns=["ruleset", "start"]).to_pylist()
    start = next(row["start"] for row in catalog if row["ruleset"] == rules.id)
    with tempfile.TemporaryDirectory(prefix="static-explorer-") as scratch:
        folder = Path(scratch)
        bundle_of_links(args.data, rules, folder)
        with ranged(folder) as served, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            page = browser.new_page()
            outside: list[str] = []
            page.on(
                "request", lambda request: None if request.url.startswith(served.url) else outside.append(request.url)
            )
            address = f"{served.url}#/{urllib.parse.quote(rules.id, safe=':=,')}/"
            first = measured(served, partial(page.goto, address + urllib.parse.quote(start, safe="")), page, start)
            print(
                f"page and first lookup: {first['bytes']:,} bytes in {first['requests']} requests, {first['seconds']:.1f} s"
            )
            for name, sent in sorted(first["files"].items()):
                print(f"  {name}: {sent:,}")
            lookups = []
            for _ in range(args.walk):
                best = page.locator("#moves button").first
                if best.count() == 0:
                    break
                target = best.get_attribute("data-position") or ""
                lookups.append(("walk", measured(served, best.click, page, target)))
            for text in jumps:
                go = f"location.hash = {address.split('#', 1)[1]!r} + encodeURIComponent({text!r})"
                lookups.append(("jump", measured(served, partial(page.evaluate, go), page, text)))
            browser.close()
    for kind, found in lookups:
        files = ", ".join(f"{Path(name).parent.parent.name}: {sent:,}" for name, sent in sorted(found["files"].items()))
        print(
            f"{kind}: {found['bytes']:,} bytes in {found['requests']} requests, {found['seconds'] * 1000:.0f} ms ({files})"
        )
    sizes = [found["bytes"] for _, found in lookups]
    times = [found["seconds"] for _, found in lookups]
    if sizes:
        print(
            f"after the first, {len(sizes)} lookups: bytes median {statistics.median(sizes):,.0f}, "
            f"max {max(sizes):,}, mean {statistics.mean(sizes):,.0f}; time median {statistics.median(times) * 1000:.0f} ms, "
            f"max {max(times) * 1000:.0f} ms"
        )
    files = DataDir(args.data).files(rules.folder)
    wrong = [found["text"] for _, found in lookups if found["shown"] != expected(files, found["text"])]
    print(f"positions whose moves differ from probe's reading of the files: {len(wrong)} of {len(lookups)} {wrong}")
    print(f"requests to anywhere else: {len(outside)}")


if __name__ == "__main__":
    main()
