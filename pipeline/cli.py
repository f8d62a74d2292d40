"""The `tablebase` command's entry point: every failure a user can cause becomes one line.

The commands live in pipeline/commands.py (`sql` and `query` in pipeline/sql_commands.py)
and are imported inside the error boundary, so that even a Ctrl-C while Python loads them
ends in one line. Exit status: 0 done, 1 an
error, 2 a malformed command line (Typer's usage errors and UsageError), 130 interrupted
(SIGINT), 143 terminated (SIGTERM), whatever the command was doing (pipeline.core.signals).
`--debug` (or TABLEBASE_DEBUG=1) shows the traceback as well.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import traceback
from typing import TYPE_CHECKING, cast

from pipeline.core import explain, signals
from pipeline.core.explain import (
    Terminated,
    address_space,
    describe,
    interrupted,
    loaded,
    out_of_memory,
    plugin_failure,
    ran_out_of_memory,
)
from pipeline.storage.imports import hide_pandas, show_pandas

if TYPE_CHECKING:
    import click
    import typer


def _interrupt(*_: object) -> None:
    # noted: a C extension's import it breaks (NumPy's) fails as an ImportError that does
    # not carry the KeyboardInterrupt, and DuckDB may turn it into an error of its own
    signals.note(signal.SIGINT)
    raise KeyboardInterrupt


def _terminate(*_: object) -> None:
    signals.note(signal.SIGTERM)  # DuckDB may turn the exception into its own interrupt
    raise Terminated()


#: Ctrl-C that Python dropped: raised inside a callback, it is printed and ignored.
_dropped: list[BaseException] = []


def _unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """A Ctrl-C landing in importlib's module-lock callback while the commands load is
    printed as "Exception ignored in …" and dropped, and the command went on to finish.
    Noted instead, to be raised once the commands have loaded; anything else as before."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        _dropped.append(unraisable.exc_value)
        return
    sys.__unraisablehook__(unraisable)


def main() -> None:
    """Run the command line; one line on stderr for every error it can explain."""
    arguments = sys.argv[1:]
    if "--debug" in arguments[: arguments.index("--") if "--" in arguments else None]:  # before the commands load
        os.environ["TABLEBASE_DEBUG"] = "1"
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _interrupt)
    signals.watch(interrupted)  # for a main thread held in C (DuckDB, a FIFO), where handlers never run
    sys.unraisablehook = _unraisable
    explain.command = command_run(arguments)
    global _last_words
    # made now, while there is memory: where memory runs out, even describing it can fail
    _last_words = f"error: {out_of_memory()}\n".encode()
    limit = address_space()
    if limit is not None and limit < LIBRARIES:  # NumPy's BLAS would end the process in its own words
        leave(
            f"tablebase needs at least {LIBRARIES >> 20} MiB of address space to load its libraries and this "
            f"process may have {limit >> 20} MiB (ulimit -v): raise the limit, or lift it (ulimit -v unlimited)",
            1,
        )
    stdout = sys.stdout
    try:
        small_pages()
        reuse_freed_memory()
        hide_pandas()
        require_address_space()
        utf8_arguments(arguments)
        app = command_line(arguments)
        from pipeline.storage.output import checked_stdout

        if _dropped:
            raise KeyboardInterrupt
        sys.stdout = checked_stdout(stdout)
        # named as the error lines name it, however it was started (`python -m pipeline`)
        status = app(prog_name="tablebase", standalone_mode=False)
        # in the command's words (the server's "the server stopped"), taken before they are reset
        ending = interrupted() if status == 130 or signals.status() else None
    except BaseException as error:  # the one place errors become a line
        try:
            message, status = line_for(error)
            if message is not None:
                leave(message, status)
        except MemoryError:
            say_out_of_memory()
        except Exception:  # describing failed: where memory ran out, an import may fail for want of it
            if ran_out_of_memory(error):
                say_out_of_memory()
            raise
        raise
    finally:
        sys.stdout = stdout
        show_pandas()
        explain.command = None  # main run in a process that goes on (a test) leaves the library's words as they were
    if ending is not None:  # Typer turns Ctrl-C into exit status 130, silently
        leave(ending, signals.status() or 130)  # and a signal ends a command that finished meanwhile
    sys.exit(status or 0)


#: The commands whose invocation builds an app of their own (pipeline/sql_commands.py): they
#: load only the package's reading path, so that a sub-second statement starts about as
#: fast as DuckDB's own Python does (BENCHMARKS.md, "Start-up, round three").
READING_COMMANDS = ("sql", "query")


#: The top level's options that may stand before a reading command on its own command line:
#: the global flags (-qv among them) and the version. Any other (-h: the whole help) takes
#: the whole command line.
_BEFORE_READING = re.compile(r"-[qvV]+|--(quiet|verbose|debug|version)")


def command_line(arguments: list[str]) -> typer.Typer:
    """The command line this invocation needs: the reading commands alone for `sql` and
    `query`, else every command (the help included). The top level's options are all flags,
    so the command is the first word that is no option."""
    at = next((i for i, argument in enumerate(arguments) if not argument.startswith("-")), len(arguments))
    before = arguments[:at]
    if at < len(arguments) and arguments[at] in READING_COMMANDS and all(map(_BEFORE_READING.fullmatch, before)):
        from pipeline import sql_commands
        from pipeline.command_group import new_app

        app = new_app()
        sql_commands.register(app)
        return app
    from pipeline.commands import app as whole

    return whole


#: Commands that check the address-space limit themselves (build and estimate, against
#: each ruleset's estimate) or start no DuckDB or Arrow threads.
CHECKED = ("build", "estimate", "games", "rulesets", "check-game", "version")


def require_address_space() -> None:
    """One line, before any work, where `ulimit -v` leaves less address space than
    DuckDB's and Arrow's threads reserve: under it they crashed (a segmentation fault) or
    failed in words that blamed a data file."""
    arguments = sys.argv[1:]
    command = next((argument for argument in arguments if not argument.startswith("-")), None)
    if command is None or command in CHECKED or {"--help", "-h"} & set(arguments) or address_space() is None:
        return  # no limit (as nearly always): estimate's import, a third of a second, is not paid
    from pipeline.stages.estimate import require_address_space as require

    require()


def utf8_arguments(arguments: list[str]) -> None:
    """UsageError for an argument that is not UTF-8 text (Python keeps its bytes as lone
    surrogates, '\\udcff'), before any command sees it: every command hands its texts and
    paths to DuckDB (which fails with std::bad_cast on such a path), Arrow or a UTF-8 file
    (the catalog, a bundle's metadata), and each failed in a traceback of its own."""
    from pipeline.core.params import quoted, utf8

    for number, argument in enumerate(arguments, start=1):
        previous = arguments[number - 2] if number > 1 else ""
        option = previous.startswith("-") and "=" not in previous
        utf8(argument, f"the value of {previous}" if option else f"argument {number} ({quoted(argument)})")


def small_pages() -> None:
    """NumPy asks Linux for transparent huge pages for every array of 4 MiB or more. On the
    virtual machines measured (CHANGELOG.md, 0.5, "Measured") faulting a huge page in costs so
    much that the stages spent as long in the kernel as in NumPy: verify's NumPy pass over
    chopsticks:fingers=15,hands=4 took 13.9 s with them (10.7 s of it in the kernel) and
    7.9 s without. TABLEBASE_HUGEPAGES=1 keeps NumPy's default, and so does a
    NUMPY_MADVISE_HUGEPAGE the user set.

    Through NumPy's documented NUMPY_MADVISE_HUGEPAGE, which it reads when it is imported,
    so this runs before anything imports NumPy; its private `_set_madvise_hugepage` is not
    where NumPy 1.26 keeps it (numpy.core, not numpy._core), and the command failed there."""
    if os.environ.get("TABLEBASE_HUGEPAGES") != "1":
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


#: glibc's mallopt parameters: the size from which a block is its own mapping, and how
#: much free memory at the top of the heap is handed back to the system.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: The largest mmap threshold glibc takes on 64-bit systems.
MMAP_THRESHOLD_MAX = 32 << 20


def reuse_freed_memory() -> None:
    """The stages make and drop NumPy arrays of a few MB at a time (a part of the moves
    each). glibc gives such blocks back to the system when they are freed, so every part
    faulted its memory in afresh: chopsticks:fingers=15,hands=4's moves took 1.9 s in the
    kernel for 9.8 s in NumPy, and 5 s with two threads making them (CHANGELOG.md,
    0.8, "Measured"). Kept for reuse instead (blocks up to 32 MB, glibc's limit): 0.1 s. Only
    where the C library is glibc, and not where the user set glibc's MALLOC_ variables."""
    if sys.platform != "linux" or any(name.startswith("MALLOC_") for name in os.environ):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 - raises AttributeError off glibc: glibc only (musl has no mallopt parameters to set)
    except (OSError, AttributeError):
        return
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)
    mallopt(M_TRIM_THRESHOLD, 1 << 30)


def line_for(error: BaseException) -> tuple[str | None, int]:
    """The one line and exit status for what ended the command; None to let it end as it
    would (a command's own exit, or what is not ours to explain)."""
    after_signal = signals.status()
    if after_signal is not None:  # whatever the signal made fail (an open() it broke: EINTR), it ended the command
        return interrupted(), after_signal
    if isinstance(error, SystemExit):  # a plug-in's sys.exit() must not end a command unexplained
        return plugin_failure(error), 1
    if isinstance(error, loaded("pipeline.core.errors", "ReaderGone")):
        reader_gone()
    usage = usage_line(error)
    if usage is not None:
        return usage, 2
    if isinstance(error, loaded("typer", "TyperException")) and hasattr(error, "show"):  # the help, for no command
        error.show()
        sys.exit(getattr(error, "exit_code", 2))
    message, status = describe(error)
    if message is not None and os.environ.get("TABLEBASE_DEBUG"):
        traceback.print_exc()
    return message, status


def usage_line(error: BaseException) -> str | None:
    """A malformed command line Typer found (an unknown option, a missing argument, a value
    of the wrong form) as one line that names the command's help; None for anything else,
    and for no command at all, which shows the help itself."""
    usage = loaded("typer._click.exceptions", "UsageError") + loaded("click.exceptions", "UsageError")
    if not isinstance(error, usage) or type(error).__name__ == "NoArgsIsHelpError":
        return None
    # Typer words a value outside a choice "Value error, 'x' is not one of …": the words after it say it all
    # Typer's copy of click's UsageError words itself as click's does (loaded() finds both by name)
    message = cast("click.UsageError", error).format_message().replace("Value error, ", "").rstrip(".")
    ctx = getattr(error, "ctx", None)
    help_for = f": see `{ctx.command_path} --help`" if ctx is not None else ""
    return f"{message[:1].lower()}{message[1:]}{help_for}"


#: The out-of-memory line, encoded at the start, for when memory runs out while an error is described.
_last_words = b"error: out of memory\n"


def say_out_of_memory() -> None:
    """Write the line made at the start, with nothing new to allocate, and exit 1."""
    try:  # noqa: SIM105 - contextlib.suppress would allocate, and memory is what ran out
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - whatever is left unwritten, the line must go out
        pass
    os.write(2, _last_words)
    os._exit(1)


#: Address space the libraries take once loaded (measured: 410 MiB with NumPy, pyarrow,
#: DuckDB and Typer; below about 400 MiB an import fails, or OpenBLAS ends the process).
LIBRARIES = 512 << 20


def leave(message: str, status: int) -> None:
    """Print the one line and exit with `status`. After Ctrl-C, at once: a signal left
    pending by an extension module (DuckDB's handler) would otherwise end the process
    by SIGINT during shutdown, with status -2 instead of 130."""
    if status in (130, 143):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signals.leave(message, status)  # the watcher may be ending the process too: one line
    print(f"error: {bounded(message)}", file=sys.stderr)
    sys.exit(status)


#: A word of an error line (a path, a name, a position: text without spaces) longer than
#: this is quoted by its first QUOTED characters; a line longer than LONGEST_LINE is cut.
LONGEST_WORD, QUOTED, LONGEST_LINE = 200, 80, 2000
#: Characters that end a line or drive a terminal, written as Python escapes (\n) in an error line.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def bounded(message: str) -> str:
    """`message` on one line, with what it quotes of a user's text cut short: a
    100,000-character path or identifier, quoted whole by the OS's or DuckDB's words, made
    lines of 100 KB.
    The messages of our own cut what they quote sooner (pipeline.core.params.quoted)."""

    def cut(word: re.Match[str]) -> str:
        text = word[0].rstrip(":;,.!?)]}'\"")  # the punctuation after it kept: `path: reason`
        return f"{text[:QUOTED]}… ({len(text):,} characters){word[0][len(text) :]}"

    # a line break or terminal escape in a path or name would make more lines, or none
    message = CONTROL.sub(lambda character: repr(character[0])[1:-1], message)
    message = re.sub(rf"\S{{{LONGEST_WORD + 1},}}", cut, message)
    if len(message) > LONGEST_LINE:
        message = f"{message[:LONGEST_LINE]}… ({len(message):,} characters in all)"
    return message


def reader_gone() -> None:
    """Standard output's reader left (`tablebase sql … | head`): end as Unix tools do, by
    SIGPIPE, quietly (status 141 in the shell). A line on stderr would be noise after
    output the reader chose to cut short; exit 0 would tell `set -o pipefail` scripts the
    output was whole. The error unwound first, so scratch is removed as after any error."""
    sys.stderr.flush()
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGPIPE)
    os._exit(1)  # where there is no SIGPIPE


def command_run(arguments: list[str]) -> str:
    """`tablebase <command>` as run (the top level's options are all flags, so the command
    is the first word not an option), for a line that says what to run again."""
    words = [word for word in arguments if not word.startswith("-")]
    return f"`tablebase {words[0]}`" if words and re.fullmatch("[a-z][a-z-]*", words[0]) else "the command"
