"""`tablebase serve`: a read-only HTTP JSON API over a data folder, on Starlette and uvicorn.

    GET /api/rulesets                              the catalog, one object a built ruleset
    GET /api/rulesets/{ruleset}?position=TEXT      a position's value, remoteness and moves
                                                   (&columns=true: its decoded columns too)
    GET /api/rulesets/{ruleset}/mainline?position= the best line from it to the end
    GET /api/rulesets/{ruleset}/picture?position=  the position drawn by its game, as SVG text
    GET /api/openapi.json                          this API described (OpenAPI 3.1)
    GET /                                          the explorer: a page that walks any
                                                   ruleset through the API (pipeline/explorer/)

Every answer is `Tablebases.probe`'s and `Tablebases.catalog`'s, as JSON: the server sits
above the library's face (a layer of its own, under the commands) so that its answers and
its errors are the library's. Errors are `{"error": "one sentence"}`: 404 for an unknown
ruleset or one not built, 400 for a malformed or unreachable position, 503 for a lookup
that took too long or a data folder that fails its checksums, never a traceback.

With `processes` above 1, that many processes answer on the one socket: a lookup's Python
holds one process's interpreter lock, so one process answers with one core: about 155
lookups a second on connect:cols=5,rows=6, two processes 200-230 (BENCHMARKS.md). This
process opens every built ruleset's index and lookup first (their footers: 0.84 GB on that
billion-position ruleset), then forks the processes, which share those pages rather than
each read its own (two: 1.05-1.12 GiB in all, where processes started afresh took 1.86 GiB);
it starts again one that dies, and ends them all as it ends (`_Processes`).

Safe to leave running: each lookup runs in a worker thread, at most `workers` at once, and
is answered 503 after `timeout` seconds (the thread finishes its lookup in the background:
a DuckDB scan cannot be stopped from outside it); uvicorn refuses connections past
`connections` with 503. Nothing but the data folder's published files is read, and only
through the library (no SQL from the client); the explorer's three files are the only
others served, found by name in the package, never by a path the client gives. A ruleset
rebuilt while the server runs is published by renaming its folder (pipeline.datadir.layout):
each answer is read between two looks at its files' inode, size and times, and read again
when they differ, so it comes whole from the old tablebase or whole from the new.

The server's packages are the `serve` extra: pip install 'tablebase[serve]'.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, Any, TypeVar

from pipeline.core.errors import DataError, NotBuiltError, PositionError, RulesetError, TablebaseError
from pipeline.games.rulesets import Ruleset
from pipeline.storage import parts
from pipeline.tablebases import Tablebases

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response

    from pipeline.products.probe import Move, Probe

T = TypeVar("T")

log = logging.getLogger(__name__)

#: Seconds a lookup (a position, or a whole mainline) may take before it is answered 503.
TIMEOUT = 10.0
#: Lookups run at once: each is a DuckDB scan on its own connection, and this machine's
#: kind has 2 cores; more would only queue inside DuckDB.
WORKERS = 4
#: Connections and requests in flight uvicorn accepts before answering 503 at once.
CONNECTIONS = 64
#: A mainline stops after this many plies (a drawn game never ends).
MAX_PLIES = 1000
#: Times an answer is read again when the ruleset's files changed while it was read.
RETRIES = 5
#: The explorer's files (pipeline/explorer/), the only files served: by these names alone.
EXPLORER = {"index.html": "text/html", "explorer.js": "text/javascript", "explorer.css": "text/css"}


class MissingLibrary(TablebaseError):
    """The `serve` extra is not installed."""


class AddressError(TablebaseError):
    """The address asked for cannot be listened on (taken, or not this machine's)."""


def require_libraries() -> None:
    """Fail in one line, before any work, where the `serve` extra is not installed."""
    missing = [name for name in ("starlette", "uvicorn", "anyio") if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingLibrary(
            f"tablebase serve needs {', '.join(missing)}, which is not installed: pip install 'tablebase[serve]'"
        )


# -- the answers, as JSON-ready dicts -----------------------------------------------------


def _stamps(tables: Tablebases, rules: Ruleset) -> list[tuple[int, ...] | None]:
    """What identifies the ruleset's published files as they are now: a rebuild renames a
    new folder into place, so every file it publishes has another inode and ctime."""
    files = tables.store.published(rules)
    stamps: list[tuple[int, ...] | None] = []
    for path in (files.tablebase, files.transitions, files.index, files.lookup):
        try:
            for file in parts.parts(path):  # a folder of parts: each part's
                found = os.stat(file)
                stamps.append((found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns))
        except (OSError, DataError):
            stamps.append(None)
    return stamps


def _steady(tables: Tablebases, rules: Ruleset, read: Callable[[], T]) -> T:
    """`read()`, done again where the ruleset's files changed while it ran (a rebuild
    published between two of its reads), so that its answer comes from one tablebase."""
    for attempt in range(RETRIES):
        before = _stamps(tables, rules)
        try:
            answer = read()
        except NotBuiltError:
            raise
        except DataError:
            # for an instant while a rebuild publishes, the ruleset has no folder at all
            if attempt + 1 == RETRIES or (_stamps(tables, rules) == before and None not in before):
                raise
            time.sleep(0.02 * (attempt + 1))
            continue
        if _stamps(tables, rules) == before:
            return answer
    raise DataError(f"{rules.id} was rebuilt {RETRIES} times while it was read: ask again")


def _move(move: Move) -> dict[str, Any]:
    """One move: its label, the child's text, the child's value and remoteness for the
    player to move there (as probe says them), and `outcome`, the value for the mover."""
    # by hand: dataclasses.asdict copies each field deeply, which flat fields do not need
    return {
        "move": move.move,
        "position": move.position,
        "value": move.value,
        "remoteness": move.remoteness,
        "outcome": move.outcome,
    }


def _columns(tables: Tablebases, rules: Ruleset, position: str) -> dict[str, Any]:
    """The position's decoded columns (the game's `columns`), read from its tablebase file
    by id, found as probe finds it (pipeline/products/probe.py `find`)."""
    from pipeline.products.probe import connection, find

    names = list(rules.game.columns)
    files = tables.store.published(rules)
    with connection() as con:
        found = find(str(files.index), str(files.lookup), position)
        if found is None:
            return {}
        select = ", ".join(f'"{name}"' for name in names)  # the game's own declared names
        row = con.execute(
            f"SELECT {select} FROM read_parquet(?) WHERE id = ?", [parts.sql_source(files.tablebase), found["id"]]
        ).fetchone()
    return dict(zip(names, row)) if row is not None else {}


def position_answer(tables: Tablebases, ruleset: str, position: str = "start", columns: bool = False) -> dict[str, Any]:
    """A position's answer: probe's value, remoteness and moves best first, whether the
    game is over there, and with `columns` the position's decoded columns (one more scan
    of the tablebase: a third more time a lookup, measured, so only when asked)."""
    rules = Ruleset.parse(ruleset)

    def read() -> dict[str, Any]:
        found = tables.probe(rules, position)
        return _probed(found) | ({"columns": _columns(tables, rules, found.position)} if columns else {})

    return _steady(tables, rules, read)


def _probed(found: Probe) -> dict[str, Any]:
    return {
        "ruleset": found.ruleset,
        "position": found.position,
        "value": found.value,
        "remoteness": found.remoteness,
        "game_over": not found.moves,
        "note": found.note,
        "moves": [_move(move) for move in found.moves],
    }


def mainline_answer(
    tables: Tablebases, ruleset: str, position: str = "start", max_plies: int = MAX_PLIES
) -> dict[str, Any]:
    """The principal variation from `position`: the best move, again and again, until the
    game is over, a position comes round again (a draw's loop), or `max_plies`; `stopped`
    says which ("game over", "repeated", "max plies")."""
    rules = Ruleset.parse(ruleset)

    def read() -> dict[str, Any]:
        found = tables.probe(rules, position)
        line: list[dict[str, Any]] = []
        seen = {found.position}
        current = found
        stopped = "game over"
        while current.moves:
            if len(line) == max_plies:
                stopped = "max plies"
                break
            best = current.moves[0]
            line.append(_move(best))
            if best.position in seen:
                stopped = "repeated"
                break
            seen.add(best.position)
            current = tables.probe(rules, best.position)
        return {
            "ruleset": found.ruleset,
            "position": found.position,
            "value": found.value,
            "remoteness": found.remoteness,
            "mainline": line,
            "end": line[-1]["position"] if line else found.position,
            "stopped": stopped,
        }

    return _steady(tables, rules, read)


def picture_answer(tables: Tablebases, ruleset: str, position: str = "start") -> dict[str, Any]:
    """The position drawn by its game (`Game.draw`), as inline SVG the explorer puts into
    its page: no lookup, only the text made canonical, so it costs the same on any board.
    A ruleset not built is refused as a lookup is; a drawing a page may not hold is
    refused as `tablebase draw` refuses it (pipeline/products/pictures.py)."""
    from pipeline.products.pictures import PictureError, picture_problem

    rules = Ruleset.parse(ruleset)
    if not any(row.ruleset == rules.id for row in tables.catalog()):
        raise NotBuiltError(
            f"{rules.id} is not built in {tables.store.root}: build it with `tablebase build {rules.id}`, "
            "or name the folder it was built in with --data"
        )
    text = rules.game.start(rules) if position == "start" else rules.game.canonical_position(rules, position)
    picture = rules.game.draw(rules, text)
    problem = picture_problem(picture)
    if problem is not None:
        raise PictureError(f"{rules.game_name} on {rules.id}: draw() of {text!r} {problem}")
    return {"ruleset": rules.id, "position": text, "picture": picture}


def rulesets_answer(tables: Tablebases) -> list[dict[str, Any]]:
    """The catalog's rows, each a JSON object of its columns (params as an object)."""
    return [{**dict(row), "params": dict(row.params)} for row in tables.catalog()]


# -- HTTP ---------------------------------------------------------------------------------


def status_of(error: BaseException) -> int:
    """The HTTP status of a library error: the user's ruleset or position, or the server's."""
    if isinstance(error, RulesetError | NotBuiltError):
        return 404
    if isinstance(error, PositionError):
        return 400
    return 503  # a damaged or half-published folder, a lookup too slow: the server's trouble


def openapi() -> dict[str, Any]:
    """The API described as OpenAPI 3.1, written by hand: Starlette generates none, and
    three endpoints do not need FastAPI's pydantic to describe them."""
    from pipeline import __version__

    error = {"description": "", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}

    def errors(**statuses: str) -> dict[str, Any]:
        return {status.removeprefix("s"): {**error, "description": words} for status, words in statuses.items()}

    ruleset = {"name": "ruleset", "in": "path", "required": True, "schema": {"type": "string"}}
    position = {
        "name": "position",
        "in": "query",
        "required": False,
        "schema": {"type": "string", "default": "start"},
        "description": "A position's text (as `tablebase probe` takes it); start names the start.",
    }
    columns = {
        "name": "columns",
        "in": "query",
        "required": False,
        "schema": {"type": "boolean", "default": False},
        "description": "true: the answer holds the position's decoded columns too (one more scan).",
    }
    move = {
        "type": "object",
        "properties": {
            "move": {"type": "string"},
            "position": {"type": "string", "description": "the position the move leads to"},
            "value": {"type": "string", "description": "that position's value for the player to move there"},
            "remoteness": {"type": ["integer", "null"]},
            "outcome": {"type": "string", "description": "the move's value for the player making it"},
        },
    }
    answer = {
        "type": "object",
        "properties": {
            "ruleset": {"type": "string"},
            "position": {"type": "string"},
            "value": {"enum": ["win", "loss", "tie", "draw"], "description": "for the player to move"},
            "remoteness": {"type": ["integer", "null"], "description": "plies to the end; null for a draw"},
            "game_over": {"type": "boolean"},
            "note": {"type": ["string", "null"]},
            "columns": {"type": "object", "description": "the position's decoded columns (with columns=true)"},
            "moves": {"type": "array", "items": {"$ref": "#/components/schemas/Move"}, "description": "best first"},
        },
    }
    line = {
        "type": "object",
        "properties": {
            "ruleset": {"type": "string"},
            "position": {"type": "string"},
            "value": {"type": "string"},
            "remoteness": {"type": ["integer", "null"]},
            "mainline": {"type": "array", "items": {"$ref": "#/components/schemas/Move"}},
            "end": {"type": "string"},
            "stopped": {"enum": ["game over", "repeated", "max plies"]},
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "tablebase", "version": __version__, "description": "Solved games, one position at a time."},
        "paths": {
            "/api/rulesets": {
                "get": {
                    "summary": "Every built ruleset's catalog row",
                    "responses": {"200": {"description": "the catalog"}, **errors(s503="a damaged data folder")},
                }
            },
            "/api/rulesets/{ruleset}": {
                "get": {
                    "summary": "A position's value, remoteness and every move, best first",
                    "parameters": [ruleset, position, columns],
                    "responses": {
                        "200": {
                            "description": "the position",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Position"}}},
                        },
                        **errors(s400="no such position", s404="no such ruleset built", s503="too slow or damaged"),
                    },
                }
            },
            "/api/rulesets/{ruleset}/picture": {
                "get": {
                    "summary": "The position drawn by its game, as inline SVG (no lookup)",
                    "parameters": [ruleset, position],
                    "responses": {
                        "200": {
                            "description": "the picture",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Picture"}}},
                        },
                        **errors(s400="a malformed position", s404="no such ruleset built"),
                    },
                }
            },
            "/api/rulesets/{ruleset}/mainline": {
                "get": {
                    "summary": "The best line from a position to the end",
                    "parameters": [ruleset, position],
                    "responses": {
                        "200": {
                            "description": "the line",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Mainline"}}},
                        },
                        **errors(s400="no such position", s404="no such ruleset built", s503="too slow or damaged"),
                    },
                }
            },
        },
        "components": {
            "schemas": {
                "Error": {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]},
                "Move": move,
                "Position": answer,
                "Mainline": line,
                "Picture": {
                    "type": "object",
                    "properties": {
                        "ruleset": {"type": "string"},
                        "position": {"type": "string", "description": "the position's canonical text"},
                        "picture": {"type": "string", "description": "an <svg> element: shapes and text alone"},
                    },
                },
            }
        },
    }


def application(data: str | os.PathLike[str], timeout: float = TIMEOUT, workers: int = WORKERS) -> Starlette:
    """The API over the data folder `data`, as an ASGI application."""
    import anyio
    import anyio.to_thread
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    tables = Tablebases(data)
    limiter = anyio.CapacityLimiter(workers)

    def failure(status: int, sentence: str) -> JSONResponse:
        return JSONResponse({"error": sentence}, status_code=status)

    async def answered(read: Callable[[], Any]) -> JSONResponse:
        try:
            with anyio.fail_after(timeout):
                # abandoned on timeout: the thread ends its scan alone, its answer dropped
                body = await anyio.to_thread.run_sync(read, abandon_on_cancel=True, limiter=limiter)
        except TimeoutError:
            return failure(503, f"the lookup took longer than {timeout:g} seconds: try again later")
        except TablebaseError as error:
            return failure(status_of(error), str(error))
        except Exception:  # a bug of ours: logged in full, the client told one line
            log.exception("failed to answer")
            return failure(500, "the server failed to answer: its log says why")
        return JSONResponse(body)

    async def rulesets(request: Request) -> JSONResponse:
        return await answered(lambda: rulesets_answer(tables))

    async def position(request: Request) -> JSONResponse:
        ruleset, text = request.path_params["ruleset"], request.query_params.get("position", "start")
        columns = request.query_params.get("columns", "false")
        if columns not in ("true", "false"):
            return failure(400, f"columns={columns} is not true or false")
        return await answered(lambda: position_answer(tables, ruleset, text, columns == "true"))

    async def mainline(request: Request) -> JSONResponse:
        ruleset, text = request.path_params["ruleset"], request.query_params.get("position", "start")
        return await answered(lambda: mainline_answer(tables, ruleset, text))

    async def picture(request: Request) -> JSONResponse:
        ruleset, text = request.path_params["ruleset"], request.query_params.get("position", "start")
        return await answered(lambda: picture_answer(tables, ruleset, text))

    async def described(request: Request) -> JSONResponse:
        return JSONResponse(openapi())

    explorer = resources.files("pipeline") / "explorer"

    async def page(request: Request) -> Response:
        name = request.path_params.get("name", "index.html")
        if name not in EXPLORER:
            return failure(404, f"no such address: {request.url.path} (see /api/openapi.json)")
        # no-cache: a browser asks again, so a page served by an upgraded server is the new one
        headers = {"Cache-Control": "no-cache"}
        return Response((explorer / name).read_bytes(), media_type=EXPLORER[name], headers=headers)

    async def not_found(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        words = {404: f"no such address: {request.url.path} (see /api/openapi.json)", 405: "only GET is answered"}
        return failure(error.status_code, words.get(error.status_code, str(error.detail)))

    routes = [
        Route("/api/rulesets", rulesets),
        Route("/api/openapi.json", described),
        Route("/api/rulesets/{ruleset}", position),
        Route("/api/rulesets/{ruleset}/mainline", mainline),
        Route("/api/rulesets/{ruleset}/picture", picture),
        Route("/", page),
        Route("/explorer/{name}", page),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: not_found})


def serve(
    data: str | os.PathLike[str],
    host: str = "127.0.0.1",
    port: int = 8000,
    timeout: float = TIMEOUT,
    workers: int = WORKERS,
    ready: Callable[[str], None] = print,
    processes: int = 1,
) -> None:
    """Serve the API on `host`:`port` (0: a free port) until interrupted, from `processes`
    processes; `ready` is told the address once the socket listens."""
    require_libraries()
    import uvicorn

    if processes > 1 and not hasattr(os, "fork"):
        raise TablebaseError(f"--processes {processes} needs fork (Linux, macOS): serve with one process here")
    tables = Tablebases(data)
    tables.catalog()  # a folder with nothing built, or damaged, is refused before listening
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # several processes on Linux: a socket each on the one port (SO_REUSEPORT), among which
    # the kernel spreads the connections. On one shared socket the process that last
    # answered takes the next connection too: one of two processes did 75 % of 8 clients'
    # work (61 % so).
    spread = processes > 1 and sys.platform == "linux" and hasattr(socket, "SO_REUSEPORT")
    sock = _socket(family, spread)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise AddressError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    if not spread:  # else the port is held here, and each process listens on it
        sock.listen(128)
    address = sock.getsockname()
    bound = address[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    line = (
        f"serving {data} on http://{shown}:{bound}/api/rulesets "
        f"(the API: /api/openapi.json; the explorer: http://{shown}:{bound}/; Ctrl-C stops)"
    )
    if processes == 1:
        ready(line)
        uvicorn.Server(_config(application(data, timeout, workers))).run(sockets=[sock])
        return
    _preload(tables)

    def serve_one(ready: Callable[[], None]) -> None:
        listening = sock
        if spread:
            listening = _socket(family, spread)
            listening.bind(address)
            listening.listen(128)
        ready()
        uvicorn.Server(_config(application(data, timeout, workers))).run(sockets=[listening])

    answering = _Processes(serve_one)
    answering.start(processes)
    ready(line.replace("; Ctrl-C", f"; {processes} processes; Ctrl-C"))
    answering.watch()


def _socket(family: socket.AddressFamily, spread: bool) -> socket.socket:
    # IPPROTO_TCP named, not left 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only
    # on connections accepted from a socket whose proto says TCP. With it on, an answer's
    # body, written after its headers, waited for the client's delayed ACK: 40 ms added to
    # every lookup, which held 8 clients to 140 lookups a second whatever the processes
    made = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    made.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if spread:
        made.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    return made


def _config(app: Any) -> Any:
    """uvicorn's settings: CONNECTIONS at once, no access log, warnings and errors alone."""
    import uvicorn

    return uvicorn.Config(
        app, limit_concurrency=CONNECTIONS, timeout_keep_alive=5, access_log=False, log_level="warning"
    )


def _preload(tables: Tablebases) -> None:
    """Open the index and lookup of each built ruleset whose files are whole (the largest
    first, as many as a process keeps open: probe.OPENED), so that the processes forked
    next share their footers. A ruleset that fails its checksums is left to the lookups,
    which answer 503 saying why."""
    from pipeline.datadir.check import trusted
    from pipeline.products.probe import OPENED, preload

    for row in sorted(tables.catalog(), key=lambda row: row.positions, reverse=True)[:OPENED]:
        try:
            files = trusted(tables.store, Ruleset.parse(row.ruleset))
        except TablebaseError:
            continue
        preload(str(files.index), str(files.lookup))


class _Processes:
    """The processes answering, forked from this one, each running `serve_one` until it
    ends. One that ends by itself is forked again; STARTS_FAILED of them in a row ending
    within a second of their start mean that none can serve, and end the server. This
    process ending (a signal's exception in `watch`) ends them first; killed, it leaves
    each a SIGTERM (Linux's PR_SET_PDEATHSIG), rather than answer on alone."""

    STARTS_FAILED = 3

    def __init__(self, serve_one: Callable[[Callable[[], None]], None]):
        self.serve_one, self.parent = serve_one, os.getpid()
        self.running: dict[int, float] = {}  # pid: when it was started (monotonic)

    def start(self, count: int = 1) -> None:
        """Fork `count` processes, and return once each listens (or has ended)."""
        for _ in range(count):
            reader, writer = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(reader)
                self._child(writer)
            os.close(writer)
            with os.fdopen(reader, "rb") as said:
                said.read(1)  # a byte once it listens; nothing if it ended first
            self.running[pid] = time.monotonic()

    def _child(self, ready: int) -> None:
        """In the forked process: uvicorn's own handling of signals, in place of this
        command's (whose watcher thread is the parent's alone: signals must not wake it)."""
        code = 0
        try:
            signal.set_wakeup_fd(-1)
            for number in (signal.SIGINT, signal.SIGTERM):
                signal.signal(number, signal.SIG_DFL)
            if sys.platform == "linux":
                import ctypes

                ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: a SIGTERM when the parent ends
            if os.getppid() == self.parent:  # else it ended before that was asked

                def listening() -> None:
                    os.write(ready, b"1")
                    os.close(ready)

                self.serve_one(listening)
        except BaseException:
            log.exception("a process of the server failed")
            code = 1
        finally:
            logging.shutdown()
            os._exit(code)

    def watch(self) -> None:
        """Fork again each process that ends, until this one is stopped (the command
        line's handlers raise on SIGINT and SIGTERM), then end them all."""
        failed = 0
        try:
            while True:
                pid, _ = os.waitpid(-1, 0)
                started = self.running.pop(pid, None)
                if started is None:
                    continue
                failed = failed + 1 if time.monotonic() - started < 1 else 0
                if failed >= self.STARTS_FAILED:
                    raise TablebaseError(
                        f"the server's processes end as they start ({failed} in a row): its log above says why"
                    )
                log.warning("a process of the server ended (pid %d): another takes its place", pid)
                self.start()
        finally:
            self.stop()

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM to each process; SIGKILL to any still running `grace` seconds later."""
        for pid in self.running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.running:
            for pid in list(self.running):
                with contextlib.suppress(ChildProcessError):
                    if os.waitpid(pid, os.WNOHANG)[0] == 0:
                        if time.monotonic() < deadline:
                            continue
                        os.kill(pid, signal.SIGKILL)
                        os.waitpid(pid, 0)
                self.running.pop(pid)
            time.sleep(0.02)
