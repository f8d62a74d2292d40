"""A static HTTP server over a folder that honours Range, as a static host does, and counts
what it sends: the static explorer's tests and benchmarks/static_explorer.py read a bundle
through it. Python's http.server sends whole files and ignores Range, and DuckDB-WASM reads
a remote Parquet file by ranges (its footer, then the row groups a query needs).

    with ranged(folder) as server:
        server.url            # http://127.0.0.1:PORT/
        server.requests       # every request answered: (method, path, Range header, bytes sent)

One range a request (`bytes=A-B`, `bytes=A-`, `bytes=-N`), which is what DuckDB-WASM asks;
a request for several ranges is answered with the whole file, as RFC 9110 allows.
"""

from __future__ import annotations

import http.server
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

RANGE = re.compile(r"bytes=(\d*)-(\d*)$")


@dataclass
class Served:
    """The server's address and what it sent, request by request."""

    url: str
    requests: list[tuple[str, str, str | None, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ranged(self) -> list[tuple[str, str, str | None, int]]:
        """The requests answered with part of a file (206)."""
        with self.lock:
            return [request for request in self.requests if request[2] is not None]

    def sent(self) -> int:
        """The bytes of files sent so far."""
        with self.lock:
            return sum(request[3] for request in self.requests)


class _Handler(http.server.SimpleHTTPRequestHandler):
    served: Served

    def log_message(self, format: str, *args: object) -> None:  # the tests' output stays quiet
        pass

    def end_headers(self) -> None:
        # a static host's usual answer: the explorer's page and script are asked again, not
        # taken from a cache filled by an earlier test
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def send_head(self):  # type: ignore[no-untyped-def]
        header = self.headers.get("Range")
        path = Path(self.translate_path(self.path))
        match = RANGE.match(header.strip()) if header else None
        self._remaining: int | None = None
        if match is None or not path.is_file() or match.groups() == ("", ""):
            self._log(None, path)
            return super().send_head()
        size = path.stat().st_size
        first, last = match.groups()
        if first == "":  # the last N bytes
            start, end = max(size - int(last), 0), size - 1
        else:
            start, end = int(first), min(int(last), size - 1) if last else size - 1
        if start >= size or start > end:
            self.send_error(416, "Range Not Satisfiable")
            return None
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        handle = open(path, "rb")  # noqa: SIM115 (send_head's caller copies it and closes it)
        handle.seek(start)
        self._remaining = end - start + 1
        self._log(header, path, self._remaining if self.command == "GET" else 0)
        return handle

    def copyfile(self, source, outputfile) -> None:  # type: ignore[no-untyped-def]
        remaining = self._remaining
        if remaining is None:
            super().copyfile(source, outputfile)
            return
        while remaining > 0:
            chunk = source.read(min(remaining, 1 << 20))
            if not chunk:
                break
            outputfile.write(chunk)
            remaining -= len(chunk)

    def _log(self, header: str | None, path: Path, sent: int | None = None) -> None:
        if sent is None:  # a whole file (a folder's index.html), or an error
            whole = path / "index.html" if path.is_dir() else path
            sent = whole.stat().st_size if self.command == "GET" and whole.is_file() else 0
        with self.served.lock:
            self.served.requests.append((self.command, self.path, header, sent))


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


@contextmanager
def ranged(folder: Path | str) -> Iterator[Served]:
    """Serve `folder` on a free port of 127.0.0.1 until the block ends."""
    served = Served("")
    handler = type("Handler", (_Handler,), {"served": served, "extensions_map": _TYPES})
    server = _Server(("127.0.0.1", 0), partial(handler, directory=os.fspath(folder)))
    served.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


#: Types a browser insists on: a module script as JavaScript, the wasm as wasm (its streaming
#: compile refuses any other).
_TYPES = {
    **http.server.SimpleHTTPRequestHandler.extensions_map,
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".wasm": "application/wasm",
    ".parquet": "application/vnd.apache.parquet",
}
