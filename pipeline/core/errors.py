"""The library's exceptions. The CLI turns each into one line on stderr and a non-zero exit."""

import errno


class TablebaseError(Exception):
    """Base class of every error a user's input or data can cause."""


class UsageError(TablebaseError, ValueError):
    """A command line of the wrong form: an argument or option missing, or a value that
    cannot be one of it (the CLI exits 2, as for the usage errors Typer finds)."""


class RulesetError(TablebaseError, ValueError):
    """An unknown game or parameter, or a parameter value out of range."""


class PositionError(TablebaseError, ValueError):
    """A position text that is malformed or names no position of the ruleset."""


class DataError(TablebaseError):
    """A data file that is missing, unreadable or inconsistent."""


class NotBuiltError(DataError):
    """The ruleset asked for (or any) is not built in the data folder: nothing is wrong
    with the folder, it lacks it (the server answers 404, not 503)."""


class ContractError(DataError):
    """A game's member gave back what the game contract does not allow (a plug-in's bug)."""


class VerificationError(TablebaseError):
    """A solved ruleset whose values contradict each other or the rules."""


class UnfinishedError(TablebaseError):
    """Rulesets published whole, but data/tablebases.duckdb beside them could not be
    rewritten: says what is published and how to finish; the reason is its __cause__."""


def full_disk(error: BaseException) -> bool:
    """Whether `error` says the disk is full (an OSError, or a message of DuckDB or Arrow)."""
    return getattr(error, "errno", None) == errno.ENOSPC or "no space left" in str(error).lower()


class OutputError(TablebaseError):
    """Output that cannot be written where it was asked for: a full disk or device, a folder
    named as a file, a result Parquet cannot hold."""


class ReaderGone(OutputError):
    """Standard output's reader closed the pipe (`| head`): not a failure of the command."""


class OutOfMemory(TablebaseError):
    """Memory (or the address space `ulimit -v` allows) ran out: DuckDB's, Arrow's or Python's."""


class PluginError(TablebaseError):
    """A game plug-in's own code failed (raised, or gave back what cannot be used)."""


class EngineError(TablebaseError):
    """An engine failed in its own words (Spark's: a lost executor, a JVM that would not start)."""
