"""The library's exceptions. The CLI turns each into one line on stderr and a non-zero exit."""


class TablebaseError(Exception):
    """Base class of every error a user's input or data can cause."""


class RulesetError(TablebaseError, ValueError):
    """An unknown game or parameter, or a parameter value out of range."""


class PositionError(TablebaseError, ValueError):
    """A position text that is malformed or names no position of the ruleset."""


class DataError(TablebaseError):
    """A data file that is missing, unreadable or inconsistent."""


class VerificationError(TablebaseError):
    """A solved ruleset whose values contradict each other or the rules."""


class OutputError(TablebaseError):
    """Output that cannot be written where it was asked for: a full disk or device, a folder
    named as a file, a result Parquet cannot hold."""


class ReaderGone(OutputError):
    """Standard output's reader closed the pipe (`| head`): not a failure of the command."""
