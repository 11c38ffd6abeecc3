"""How far behind its node a watcher is, and when that counts as lagging.

One failed answer is not an outage: providers time out, throttle and race
at the tip every day. The watcher reports `lagging` only when its limits are
really exceeded: more blocks behind than allowed (while the node does not
answer, counting the blocks it has likely made since it last did, one per
block time), or longer than allowed since it last had every block. A node
that never answered, or a chain it cannot follow, is lagging at once.
"""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Lag:
    node_height: int
    scanned_height: int
    blocks: int
    seconds: int
    lagging: bool


@dataclass(frozen=True)
class Limits:
    blocks: int  # blocks behind the node
    seconds: int  # seconds since the watcher last had every block of its node
    block_seconds: float  # the network's block time, to count the blocks made while the node is silent


@dataclass
class Progress:
    """The active watcher's view: the node's last known height and the last scanned one."""

    since: datetime  # when the watcher started, or last had every block of its node
    node_height: int | None = None
    scanned_height: int | None = None
    reachable: bool = False
    silent_since: datetime | None = None  # the first failure since the node last answered
    # No remembered block is on the node's chain (a reorganisation too deep): lagging, however well the
    # node answers, until a pass reaches its tip again.
    stuck: bool = False
    checked: bool = False  # whether a pass has tried the node yet: before that there is nothing to report

    def node_answered(self, height: int) -> None:
        self.node_height, self.reachable, self.checked, self.silent_since = height, True, True, None

    def node_failed(self, now: datetime) -> None:
        """The node did not answer (or not usefully): lagging once the limits say so, not at once."""
        if self.reachable or self.silent_since is None:
            self.silent_since = now
        self.reachable, self.checked = False, True

    def scanned(self, height: int, now: datetime) -> None:
        self.scanned_height = height
        if self.following and self.node_height is not None and height >= self.node_height:
            self.since = now

    @property
    def following(self) -> bool:
        return self.reachable and not self.stuck

    def tip_reached(self, height: int, now: datetime) -> None:
        """A pass scanned up to the node's tip: its chain is followed again."""
        self.stuck = False
        self.scanned(height, now)

    def lag(self, now: datetime, limits: Limits) -> Lag:
        scanned = self.scanned_height or 0
        node = max(self.node_height or 0, scanned)
        caught_up = self.following and scanned >= node
        seconds = 0 if caught_up else max(int((now - self.since).total_seconds()), 0)
        blocks = node - scanned
        if not self.reachable and self.silent_since is not None:
            blocks += int((now - self.silent_since).total_seconds() // limits.block_seconds)
        lagging = self.stuck or self.node_height is None or blocks > limits.blocks or seconds > limits.seconds
        return Lag(node, scanned, blocks, seconds, lagging)


def backoff_delay(failures: int, initial: float, cap: float) -> float:
    """Seconds before the next try after `failures` failures in a row: doubling from `initial`, at most `cap`."""
    return min(cap, initial * 2 ** min(max(failures - 1, 0), 30))
