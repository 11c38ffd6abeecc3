"""How far behind its node a watcher is, and when that counts as lagging."""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Lag:
    node_height: int
    scanned_height: int
    blocks: int
    seconds: int
    lagging: bool


@dataclass
class Progress:
    """The active watcher's view: the node's last known height and the last scanned one."""

    since: datetime  # when the watcher started, or last had every block of its node
    node_height: int | None = None
    scanned_height: int | None = None
    reachable: bool = False
    # No remembered block is on the node's chain (a reorganisation too deep): lagging, however well the
    # node answers, until a pass reaches its tip again.
    stuck: bool = False
    checked: bool = False  # whether a pass has tried the node yet: before that there is nothing to report

    def node_answered(self, height: int) -> None:
        self.node_height, self.reachable, self.checked = height, True, True

    def node_failed(self) -> None:
        """The node did not answer, or its chain cannot be followed: lagging until a pass succeeds."""
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

    def lag(self, now: datetime, max_blocks: int, max_seconds: int) -> Lag:
        scanned = self.scanned_height or 0
        node = max(self.node_height or 0, scanned)
        caught_up = self.following and scanned >= node
        seconds = 0 if caught_up else max(int((now - self.since).total_seconds()), 0)
        blocks = node - scanned
        lagging = not self.following or blocks > max_blocks or seconds > max_seconds
        return Lag(node, scanned, blocks, seconds, lagging)


def backoff_delay(failures: int, initial: float, cap: float) -> float:
    """Seconds before the next try after `failures` failures in a row: doubling from `initial`, at most `cap`."""
    return min(cap, initial * 2 ** min(max(failures - 1, 0), 30))
