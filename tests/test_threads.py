"""pipeline/storage/threads.py: parts worked on two threads come back in order, errors in turn."""

import threading
import time

import pytest

from pipeline.storage.threads import in_order


def test_results_come_in_the_parts_order_whichever_finishes_first():
    def slow_evens(part: int) -> tuple[int, str]:
        if part % 2 == 0:
            time.sleep(0.01)  # the odd part after it finishes first
        return part, threading.current_thread().name

    results = list(in_order(slow_evens, range(20), ahead=3))
    assert [part for part, _ in results] == list(range(20))
    assert len({name for _, name in results}) == 2  # both threads worked


def test_an_error_is_raised_when_its_part_comes_and_later_parts_are_not_begun():
    begun = []

    def fail_at_three(part: int) -> int:
        begun.append(part)
        if part == 3:
            raise ValueError("part 3")
        return part

    got = []
    with pytest.raises(ValueError, match="part 3"):
        for value in in_order(fail_at_three, range(100), ahead=2):
            got.append(value)
    assert got == [0, 1, 2]
    assert max(begun) < 10  # at most `ahead` parts were begun past the one consumed


def test_stopping_early_cancels_what_was_not_begun():
    begun = []
    results = in_order(lambda part: begun.append(part) or part, range(1000), ahead=4)
    assert next(results) == 0
    results.close()
    assert len(begun) < 10
