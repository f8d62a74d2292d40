"""Work on NumPy and Arrow arrays spread over the machine's two cores, results in order.

NumPy's sorts, gathers and arithmetic and the Parquet reader let go of the GIL, so two
threads each working on its own part run side by side.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Threads working at once: the 2-core machines the pipeline is measured on.
WORKERS = 2


def in_order(work: Callable[[T], R], parts: Iterable[T], ahead: int = 4) -> Iterator[R]:
    """work(part) for each part, yielded in the parts' order, on WORKERS threads: at most
    `ahead` parts begun and not yet consumed. An error in a part is raised when its turn
    comes; leaving early (an error, or the consumer stopping) cancels the parts not begun."""
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        pending: deque[Future] = deque()
        try:
            for part in parts:
                pending.append(pool.submit(work, part))
                if len(pending) >= ahead:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
