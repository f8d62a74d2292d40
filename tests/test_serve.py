"""`tablebase serve`: the HTTP API answers as the library does, on every position of small
rulesets, its errors are one JSON sentence with the right status, and a ruleset rebuilt
under it is still answered. Each server runs as `tablebase serve --port 0` in a process of
its own, stopped with SIGTERM as a service manager stops it."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pipeline import Tablebases
from pipeline.games.rulesets import Ruleset
from pipeline.products.probe import Probe
from tests.documentation import holding

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("starlette", reason="the serve extra: pip install 'tablebase[serve]' (make dev installs it)")


@contextmanager
def serving(data: Path, *options: str) -> Iterator[str]:
    """The address of a server over `data`, stopped (and its end checked) afterwards."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "serve", "--port", "0", "--data", str(data), *options],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stderr.readline()  # the address, once the socket listens
        found = re.search(r"(http://127\.0\.0\.1:\d+)/api/rulesets", line)
        assert found, f"no address in {line!r}: {process.stderr.read() if process.poll() is not None else ''}"
        yield found[1]
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert line + err == line + "error: terminated: the server stopped\n", err


def children(pid: int) -> set[int]:
    """The processes `pid` started that still run (Linux's /proc)."""
    found = Path(f"/proc/{pid}/task/{pid}/children")
    return {int(child) for child in found.read_text().split()} if found.exists() else set()


def running(pid: int) -> bool:
    """The process runs (not ended, nor a zombie left for its parent to reap)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def get(base: str, path: str, **query: str) -> tuple[int, Any]:
    """The status and JSON body of GET `path`."""
    url = base + urllib.parse.quote(path) + ("?" + urllib.parse.urlencode(query) if query else "")
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        assert error.headers["content-type"] == "application/json"
        return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def server(built: Path) -> Iterator[str]:
    with serving(built) as base:
        yield base


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


def moves(probed: Probe) -> list[dict[str, Any]]:
    """The probe's moves as the API writes them: each with its outcome for the mover."""
    return as_json([{**dataclasses.asdict(move), "outcome": move.outcome} for move in probed.moves])


def test_rulesets_lists_the_catalog(server, built):
    status, body = get(server, "/api/rulesets")
    assert status == 200
    rows = Tablebases(built).catalog()
    assert body == as_json([{**dict(row), "params": dict(row.params)} for row in rows])
    assert [row["params"]["rows"] for row in body if row["ruleset"] == "sticks:rows=2"] == ["2"]


@pytest.mark.parametrize("ruleset", ["chopsticks", "chopsticks:overflow=rollover", "sticks:rows=2"])
def test_every_position_answers_as_probe_and_sql_say(server, built, ruleset):
    tables = Tablebases(built)
    rows = tables.sql("SELECT * FROM tablebase WHERE ruleset = $ruleset", {"ruleset": ruleset}).to_pylist()
    columns = [field.name for field in dataclasses.fields(Probe)]  # the probe's every field is shown
    decoded = {"chopsticks": ["mover", "opponent"], "sticks": ["rows"]}[ruleset.split(":")[0]]
    assert rows
    for row in rows:
        status, body = get(server, f"/api/rulesets/{ruleset}", position=row["position"], columns="true")
        assert status == 200, body
        probed = tables.probe(ruleset, row["position"])
        expected = dataclasses.asdict(probed)
        assert {name: body[name] for name in columns if name != "moves"} == as_json(
            {name: expected[name] for name in columns if name != "moves"}
        )
        assert body["moves"] == moves(probed)
        assert body["game_over"] is (not probed.moves)
        assert (body["value"], body["remoteness"]) == (row["value"], row["remoteness"])
        assert body["columns"] == as_json({name: row[name] for name in decoded})


def test_every_positions_picture_is_its_games_drawing(server, built):
    """The explorer's pictures: each position of chopsticks drawn as `tablebase draw` draws
    it, under its canonical text; the start by name too."""
    rules = Ruleset.parse("chopsticks")
    rows = Tablebases(built).sql("SELECT position FROM tablebase WHERE ruleset = $ruleset", {"ruleset": rules.id})
    texts = [row["position"] for row in rows.to_pylist()]
    assert texts
    for text in texts + ["start"]:
        status, body = get(server, "/api/rulesets/chopsticks/picture", position=text)
        canonical = rules.game.start(rules) if text == "start" else text
        assert status == 200, body
        assert body == {"ruleset": "chopsticks", "position": canonical, "picture": rules.game.draw(rules, canonical)}


def test_start_is_the_default_position_and_columns_come_when_asked(server, built):
    status, body = get(server, "/api/rulesets/chopsticks")
    assert status == 200 and "columns" not in body
    assert body["position"] == Tablebases(built).probe("chopsticks", "start").position == "1-1|1-1"


def test_mainline_of_a_won_start_ends_at_a_finished_game(server, built):
    tables = Tablebases(built)
    status, body = get(server, "/api/rulesets/chopsticks/mainline")
    assert status == 200
    start = tables.probe("chopsticks")
    assert (body["value"], body["remoteness"]) == ("loss", 8) == (start.value, start.remoteness)
    assert len(body["mainline"]) == start.remoteness
    at = start
    for ply in body["mainline"]:  # each ply is the best move of the position before it
        best = at.moves[0]
        assert ply == as_json({**dataclasses.asdict(best), "outcome": best.outcome})
        at = tables.probe("chopsticks", best.position)
    assert not at.moves and body["end"] == at.position and body["stopped"] == "game over"


def test_mainline_of_a_draw_stops_where_a_position_comes_round(server, built):
    status, body = get(server, "/api/rulesets/chopsticks:overflow=rollover/mainline")
    assert status == 200
    assert body["value"] == "draw" and body["stopped"] == "repeated"
    line = [body["position"]] + [ply["position"] for ply in body["mainline"]]
    assert line[-1] in line[:-1] and len(set(line[:-1])) == len(line) - 1


@pytest.mark.parametrize(
    ("path", "query", "status", "words"),
    [
        ("/api/rulesets/nope", {}, 404, "unknown game 'nope'"),
        ("/api/rulesets/chopsticks:fingers=1", {}, 404, "fingers"),
        ("/api/rulesets/nim", {}, 404, "nim is not built"),
        ("/api/rulesets/nim/mainline", {}, 404, "nim is not built"),
        ("/api/rulesets/chopsticks", {"position": "9-9"}, 400, "malformed chopsticks position"),
        ("/api/rulesets/chopsticks", {"columns": "yes"}, 400, "columns=yes is not true or false"),
        ("/api/rulesets/chopsticks/mainline", {"position": "0-0|0-0"}, 400, "impossible chopsticks position"),
        ("/api/rulesets/sticks:rows=2", {"position": "1-2-3"}, 400, "is not a position of sticks:rows=2"),
        ("/api/nothing", {}, 404, "no such address"),
        ("/index.html", {}, 404, "no such address"),
        ("/../../etc/passwd", {}, 404, "no such address"),
        ("/explorer/../server.py", {}, 404, "no such address"),
        ("/explorer/pages.css", {}, 404, "no such address"),
        ("/api/rulesets/nim/picture", {}, 404, "nim is not built"),
        ("/api/rulesets/chopsticks/picture", {"position": "9-9"}, 400, "malformed chopsticks position"),
    ],
)
def test_errors_are_one_sentence_with_their_status(server, path, query, status, words):
    got, body = get(server, path, **query)
    assert got == status
    assert list(body) == ["error"] and words in body["error"]
    assert "\n" not in body["error"] and "Traceback" not in body["error"]


def test_only_get_is_answered(server):
    request = urllib.request.Request(server + "/api/rulesets", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 405
    assert json.loads(refused.value.read()) == {"error": "only GET is answered"}


def test_the_openapi_document_is_served(server):
    status, body = get(server, "/api/openapi.json")
    assert status == 200
    assert body["openapi"].startswith("3.")
    assert set(body["paths"]) == {
        "/api/rulesets",
        "/api/rulesets/{ruleset}",
        "/api/rulesets/{ruleset}/mainline",
        "/api/rulesets/{ruleset}/picture",
    }


def test_the_documented_requests_are_answered(server):
    """Each `curl` of the how-to page, asked of a running server (the page's commands are
    skipped by tests/test_readme.py, a server being needed)."""
    page = holding("tablebase serve --data data")
    requests = re.findall(r"curl -s '?http://127\.0\.0\.1:8000(/[^'\s]*)'?", page)
    assert len(requests) >= 3
    for request in requests:
        path, _, query = request.partition("?")
        status, _ = get(server, urllib.parse.unquote(path), **dict(urllib.parse.parse_qsl(query)))
        assert status == 200, request


def test_a_rebuild_under_the_server_is_answered_throughout(tmp_path):
    """Requests keep coming while the ruleset is rebuilt twice (its folder renamed away and
    a new one renamed in): every answer is whole, from one tablebase or the other."""
    tables = Tablebases(tmp_path)
    tables.build("chopsticks")
    expected = moves(tables.probe("chopsticks", "1-2|1-1"))
    answers: list[tuple[int, Any]] = []
    done = threading.Event()
    with serving(tmp_path) as base:

        def ask() -> None:
            while not done.is_set():
                answers.append(get(base, "/api/rulesets/chopsticks", position="1-2|1-1"))

        asker = threading.Thread(target=ask)
        asker.start()
        try:
            tables.build("chopsticks")
            answers.append(get(base, "/api/rulesets/chopsticks", position="1-2|1-1"))  # between two rebuilds
            tables.build("chopsticks")
        finally:
            done.set()
            asker.join()
        answers.append(get(base, "/api/rulesets/chopsticks", position="1-2|1-1"))
    assert len(answers) >= 3
    for status, body in answers:
        assert status == 200, body
        assert body["moves"] == expected


def test_a_lookup_past_its_time_is_answered_503(built):
    """--timeout bounds each request (a microsecond: no lookup ends in time; nothing is timed)."""
    with serving(built, "--timeout", "0.000001") as base:
        status, body = get(base, "/api/rulesets/chopsticks")
        assert status == 503
        assert body == {"error": "the lookup took longer than 1e-06 seconds: try again later"}
        assert get(base, "/api/openapi.json")[0] == 200  # what needs no lookup is answered


def test_without_the_extra_serve_says_what_to_install(built):
    script = (
        "import importlib.util, sys\n"
        "found = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: None if name == 'starlette' else found(name, *a)\n"
        f"sys.argv = ['tablebase', 'serve', '--data', {str(built)!r}]\n"
        "from pipeline.cli import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert (
        done.stderr
        == "error: tablebase serve needs starlette, which is not installed: pip install 'tablebase[serve]'\n"
    )


def test_a_folder_with_nothing_built_is_refused_before_listening(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "serve", "--port", "0", "--data", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: nothing is built in {tmp_path}") and done.stderr.count("\n") == 1


def test_a_folder_an_earlier_version_built_is_one_line_before_listening(built, tmp_path):
    """A data folder of 0.3.0 (no SHA256SUMS, a catalog without the index's and lookup's
    checksums) was a KeyError's traceback."""
    import pyarrow.parquet as pq

    old = tmp_path / "data"
    shutil.copytree(built, old, symlinks=True)
    (old / "SHA256SUMS").unlink()
    catalog = pq.read_table(old / "catalog.parquet")
    pq.write_table(catalog.drop_columns(["index_sha256", "lookup_sha256"]), old / "catalog.parquet")
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "serve", "--port", "0", "--data", str(old)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "has no index_sha256, lookup_sha256: rebuild the folder with `tablebase build --all" in done.stderr


@pytest.mark.parametrize(
    ("options", "status", "words"),
    [
        (["--port", "70000"], 2, "--port 70000 is not a port"),
        (["--port", "x"], 2, "invalid value for '--port'"),
        (["--timeout", "0"], 2, "--timeout 0 must be more than 0 seconds"),
        (["--processes", "0"], 2, "--processes 0 is not 1 to 64"),
        (["--data", "a" * 100_000], 1, "File name too long"),
        (["--data", "\n"], 1, "nothing is built in"),
        (["--host", "no.such.host.invalid"], 1, "no.such.host.invalid"),
    ],
)
def test_a_mistaken_option_is_one_line_before_listening(built, options, status, words):
    """serve runs until stopped, so tests/test_hostile_text.py cannot run it: its options'
    mistakes, hostile texts among them, end in one line here, before any port is held."""
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "serve", "--port", "0", "--data", str(built), *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == status, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert words in done.stderr


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="the processes are counted in Linux's /proc")
def test_several_processes_answer_and_one_that_dies_is_replaced(built):
    """--processes 2: both answer on the one port; one killed, another takes its place and
    the answers go on; SIGTERM stops them all, in the one line and status of one process."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "serve", "--port", "0", "--data", str(built), "--processes", "2"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stderr.readline()
        base = re.search(r"(http://127\.0\.0\.1:\d+)/api/rulesets", line)[1]
        assert "2 processes" in line
        truth = Tablebases(built).probe("chopsticks", "start")
        for _ in range(20):
            status, body = get(base, "/api/rulesets/chopsticks")
            assert (status, body["moves"]) == (200, moves(truth))
        servers = children(process.pid)
        assert len(servers) == 2, servers
        killed = min(servers)
        os.kill(killed, signal.SIGKILL)
        for _ in range(100):
            if len(children(process.pid) - {killed}) >= len(servers):
                break
            time.sleep(0.1)
        for _ in range(20):
            assert get(base, "/api/rulesets/chopsticks")[0] == 200
        replaced = children(process.pid)
        assert len(replaced) == 2 and killed not in replaced, replaced
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    # the log's one line for the process replaced, then the command line's one line
    assert (process.returncode, err) == (
        143,
        f"a process of the server ended (pid {killed}): another takes its place\n"
        "error: terminated: the server stopped\n",
    )
    assert not any(running(pid) for pid in replaced)


@pytest.mark.skipif(sys.platform != "linux", reason="a process's end signals its children on Linux (prctl)")
def test_the_processes_end_with_a_killed_server(built):
    """SIGKILL leaves the supervisor no time to stop its processes: each ends by itself,
    rather than answer on a port that no command holds any more."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "serve", "--port", "0", "--data", str(built), "--processes", "2"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stderr.readline()
    base = re.search(r"(http://127\.0\.0\.1:\d+)/api/rulesets", line)[1]
    assert get(base, "/api/rulesets")[0] == 200
    started = children(process.pid)
    process.kill()
    process.communicate(timeout=60)
    for _ in range(100):
        if not any(running(pid) for pid in started):
            break
        time.sleep(0.1)
    assert not any(running(pid) for pid in started), started
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(base + "/api/rulesets", timeout=5)


@pytest.mark.parametrize("processes", ["1", "2"])
def test_ctrl_c_stops_the_server_in_its_own_words(built, processes):
    """Ctrl-C in a terminal signals the whole process group: the server and each process it
    forked. It ends in the server's line, not a build's ("a ruleset is published whole…")."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "serve", "--port", "0", "--data", str(built), "--processes", processes],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        base = re.search(r"(http://127\.0\.0\.1:\d+)/api/rulesets", process.stderr.readline())[1]
        assert get(base, "/api/rulesets")[0] == 200
    finally:
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (130, "error: interrupted: the server stopped\n")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="--processes forks")
def test_processes_that_end_as_they_start_end_the_server_in_one_line():
    """A process that cannot serve (here: it fails at once) is forked again, but not for
    ever: three in a row ending within a second end the server, saying so."""
    from pipeline.core.errors import TablebaseError
    from pipeline.server import _Processes

    def fails(ready) -> None:
        raise RuntimeError("cannot serve")

    answering = _Processes(fails)
    answering.start(2)
    with pytest.raises(TablebaseError, match=r"the server's processes end as they start \(3 in a row\)"):
        answering.watch()
    assert answering.running == {}


@pytest.mark.parametrize("spread", [False, True])
def test_connections_the_server_accepts_send_at_once(spread):
    """Nagle's algorithm is off on every connection the server's socket accepts (as asyncio
    turns it off, for a socket whose proto says TCP): with it on, an answer's body, written
    after its headers, waited for the client's delayed ACK, 40 ms a lookup."""
    import asyncio
    import socket

    from pipeline.server import _socket

    listening = _socket(socket.AF_INET, spread)
    listening.bind(("127.0.0.1", 0))
    listening.listen(8)
    accepted: list[int] = []

    class Seen(asyncio.Protocol):
        def connection_made(self, transport) -> None:
            accepted.append(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def accept_one() -> None:
        server = await asyncio.get_running_loop().create_server(Seen, sock=listening)
        with socket.create_connection(listening.getsockname()[:2]):
            while not accepted:
                await asyncio.sleep(0.01)
        server.close()

    asyncio.run(asyncio.wait_for(accept_one(), 30))
    assert accepted and accepted[0] != 0
