"""Progress of long stages, reported on stderr through the `tablebase` logger."""

from __future__ import annotations

import logging
import time

log = logging.getLogger("tablebase")

#: The innermost stage an exception last left (e.g. "solve chopsticks"), for error messages.
failed_in: list[str] = []


class Timer:
    """Reports `what` with its elapsed time when the block ends."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self) -> "Timer":
        self.start = time.perf_counter()
        failed_in.clear()
        log.info("%s …", self.what)
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
        if exc[0] is None:
            log.info("%s: done in %.2f s", self.what, self.seconds)
        elif not failed_in:
            failed_in.append(self.what)
