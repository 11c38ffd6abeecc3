"""Reading ahead (chains/ahead.py): reads overlap and finish in any order, answers come back in height order, and
nothing read before the sequence broke is handed out after it."""

from __future__ import annotations

from collections import defaultdict

import eventlet
import pytest
from eventlet.event import Event

from kernodeck_watchers.chains.ahead import Ahead
from kernodeck_watchers.chains.base import BlockNotYet

pytestmark = pytest.mark.unit


class Reads:
    """A fetch that answers once its height's gate opens (at once where `gated` is False)."""

    def __init__(self, missing: set[int] | None = None, gated: bool = False):
        self.asked: list[int] = []
        self.finished: list[int] = []
        self.missing = missing or set()
        self.gates: dict[int, Event] = defaultdict(Event)
        self.gated = gated

    def __call__(self, height: int) -> str:
        self.asked.append(height)
        if self.gated:
            self.gates[height].wait()
        self.finished.append(height)
        if height in self.missing:
            raise BlockNotYet(f"no block at {height} yet")
        return f"block {height}"

    def open(self, heights: list[int]) -> None:
        """Open the gates one by one, each read answered before the next gate opens."""
        for height in heights:
            self.gates[height].send()
            eventlet.sleep(0.001)  # the hub wakes the released read first: it was scheduled earlier


def test_answers_come_in_height_order_though_the_reads_finish_out_of_order():
    reads = Reads(gated=True)
    ahead = Ahead(reads, window=4)
    eventlet.spawn(reads.open, [103, 102, 101, 100, *range(104, 112)])

    answers = [ahead.get(height, newest=111) for height in range(100, 112)]

    assert answers == [f"block {h}" for h in range(100, 112)]
    assert reads.finished[:4] == [103, 102, 101, 100]  # the first window, in flight together, newest first
    assert sorted(reads.asked) == list(range(100, 112))  # each read once, none past `newest`


def test_a_read_out_of_sequence_forgets_what_was_read_ahead():
    reads = Reads()
    ahead = Ahead(reads, window=4)
    assert [ahead.get(h, newest=110) for h in (100, 101)] == ["block 100", "block 101"]

    assert ahead.get(100, newest=110) == "block 100"  # a rewind: read again, not taken from before

    assert reads.asked.count(100) == 2 and reads.asked.count(102) == 2


def test_a_failed_read_ahead_is_read_again_when_asked_and_a_failure_then_is_raised():
    reads = Reads(missing={102})
    ahead = Ahead(reads, window=4)
    ahead.get(100, newest=103)
    reads.missing.clear()  # the block arrived after the read ahead missed it

    assert [ahead.get(h, newest=103) for h in (101, 102, 103)] == ["block 101", "block 102", "block 103"]
    assert reads.asked.count(102) == 2

    reads.missing.add(104)
    with pytest.raises(BlockNotYet):
        ahead.get(104, newest=107)
    assert ahead.get(105, newest=107) == "block 105"  # after a failure nothing read ahead is trusted
    assert reads.asked.count(105) == 2
