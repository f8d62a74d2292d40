"""What went wrong, in one sentence: the line the command line prints for an error, and
the TablebaseError a library call raises in its place.

Shared by pipeline.cli (a line and an exit status) and pipeline.tablebases (an exception
a notebook can catch), so that both say the same words. Nothing is imported to tell what an
error is: what is not loaded did not raise it (`loaded`).
"""

from __future__ import annotations

import errno
import os
import signal
import sys

from pipeline.core import errors, signals


class Terminated(BaseException):
    """SIGTERM (timeout, a service manager): unwound like Ctrl-C, so scratch is removed."""


def ran_out_of_memory(error: BaseException | None) -> bool:
    """Whether `error` says memory (or address space) ran out: a MemoryError, ENOMEM from
    the system as an import meets it, a library the loader could not map, or an error
    raised while handling one of those (an import that then finds no package metadata)."""
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, MemoryError) or (isinstance(error, OSError) and error.errno == errno.ENOMEM):
            return True
        if isinstance(error, ImportError) and any(words in str(error).lower() for words in DLOPEN_OUT_OF_MEMORY):
            return True
        error, seen = error.__context__, seen + 1
    return False


#: What the dynamic loader says, in an ImportError, when it has no room to map a library.
DLOPEN_OUT_OF_MEMORY = ("failed to map segment", "cannot allocate memory")


def loaded(module: str, *names: str) -> tuple[type, ...]:
    """The classes `names` of `module` if it is loaded, else none: an error can only be one
    of them if it is, and importing it to find out can fail where memory has run out."""
    found = sys.modules.get(module)
    return tuple(getattr(found, name) for name in names) if found is not None else ()


def out_of_memory(during: str = "") -> str:
    """The line for memory running out; it names the address-space limit (ulimit -v)
    where one is set, as that, not the machine, may be what ran out."""
    limit = address_space()
    raise_it = "" if limit is None else f", or raise the address-space limit (ulimit -v, now {limit >> 20:,} MiB)"
    memory = os.environ.get("TABLEBASE_MEMORY_LIMIT", "4GB")
    return (
        f"out of memory{during}: build a smaller ruleset, or give DuckDB less with "
        f"TABLEBASE_MEMORY_LIMIT (now {memory}) so it spills to disk{raise_it}"
    )


def address_space() -> int | None:
    """The address-space limit (ulimit -v) in bytes, None if there is none: as
    pipeline.stages.estimate.address_space_limit, which cannot be imported without DuckDB."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def plugin_failure(error: BaseException) -> str | None:
    """'the game plug-in … failed in …' where `error` came out of a game plug-in's code,
    else None."""
    games = sys.modules.get("pipeline.games")
    return games.plugin_failure(error) if games is not None else None


def interrupted() -> str:
    what = "terminated" if signal.SIGTERM in signals.received else "interrupted"
    if command == "`tablebase serve`":  # the server's usual end: it builds nothing, and writes nothing
        return f"{what}: the server stopped"
    if command in (
        "`tablebase sql`",
        "`tablebase query`",
    ):  # they build nothing; --output is written whole or not at all
        return f"{what}: the statement stopped, and nothing of its result was written"
    return f"{what}{where()}: a ruleset is published whole or not at all, and what was built before is kept"


def where() -> str:
    """' during <stage> <ruleset>' for the stage an error came out of, if any."""
    progress = sys.modules.get("pipeline.storage.progress")
    failed_in = progress.failed_in if progress is not None else []
    return f" during {failed_in[0]}" if failed_in else ""


#: The command running, as a line says to run it again (`tablebase draw`): set by
#: pipeline.cli.main; None in a library call, whose lines say "run it again".
command: str | None = None


def _command() -> str:
    return command or "it"


def describe(error: BaseException) -> tuple[str | None, int]:
    """The one line and exit status for `error`; None for what is not ours to explain.
    Nothing is imported to tell: what is not loaded did not raise it (`loaded`)."""
    if isinstance(error, loaded("typer", "Abort")):
        return "aborted", 1
    if isinstance(error, KeyboardInterrupt) or (signals.received and isinstance(error, ImportError)):
        return interrupted(), 130
    if isinstance(error, Terminated):
        return interrupted(), 143
    if ran_out_of_memory(error) or isinstance(
        error, loaded("duckdb", "OutOfMemoryException") + loaded("pyarrow", "ArrowMemoryError")
    ):
        return out_of_memory(where()), 1
    if isinstance(error, loaded("duckdb", "InterruptException")) or (
        isinstance(error, RuntimeError) and "interrupted" in str(error).lower()
    ):
        return interrupted(), signals.status() or 130
    if isinstance(error, errors.UnfinishedError):  # the reason, then what is published
        cause = error.__cause__
        reason = (
            "no space left on the disk"
            if cause is not None and errors.full_disk(cause)
            else str(cause or "failed").splitlines()[0]
        )
        return f"{reason}{where()}: {error}", 1
    if isinstance(error, errors.UsageError):
        return str(error), 2
    if isinstance(error, errors.TablebaseError):
        return str(error), 1
    if isinstance(error, OSError):
        name = f" {error.filename}" if error.filename else ""
        if error.errno == errno.ENOSPC:
            if error.filename2:  # a copy or a rename: the file being written is the second
                name = f" {error.filename2}"
            return (
                f"no space left on the disk{where()}{f' (writing{name})' if name else ''}: "
                f"free some and run {_command()} again",
                1,
            )
        return f"{error.strerror or error}{where()}{':' + name if name else ''}", 1
    plugin = plugin_failure(error)
    if plugin is not None:  # a plug-in's bug, before it is taken for a bad data file or SQL
        return plugin + where(), 1
    if isinstance(error, loaded("pyarrow", "ArrowException")):
        first = str(error).splitlines()[0]
        return f"a data file is not as this version writes it{where()} ({first}): see `tablebase check`", 1
    if isinstance(error, loaded("duckdb", "Error")):
        first = str(error).splitlines()[0]
        if "no space left" in first.lower():
            return f"no space left on the disk{where()}: {first}", 1
        return first + where(), 1
    engines = sys.modules.get("pipeline.engines")
    explained = engines.explain(error) if engines is not None else None
    if explained is not None:  # an engine's own error (Spark's), in its words
        what, why = explained
        return f"{what}{where()}: {why}", 1
    return None, 1


def as_error(error: Exception) -> Exception:
    """`error` as the TablebaseError a library call raises for it, in describe()'s words,
    or `error` itself where describe() does not explain it (a bug of ours) or it is an
    interrupt (DuckDB's, which the caller sees as it would Ctrl-C)."""
    if isinstance(error, errors.TablebaseError):
        return error
    message, status = describe(error)
    if message is None or status != 1 or signals.status() is not None:
        return error
    kind: type[errors.TablebaseError]
    if ran_out_of_memory(error) or isinstance(
        error, loaded("duckdb", "OutOfMemoryException") + loaded("pyarrow", "ArrowMemoryError")
    ):
        kind = errors.OutOfMemory
    elif errors.full_disk(error):
        kind = errors.OutputError
    elif not isinstance(error, OSError) and plugin_failure(error) is not None:
        kind = errors.PluginError
    elif isinstance(error, (OSError, *loaded("pyarrow", "ArrowException"), *loaded("duckdb", "Error"))):
        kind = errors.DataError
    else:
        kind = errors.EngineError
    return kind(message)
