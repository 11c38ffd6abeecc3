"""A watcher's match timed against the parse of the same block, run after run, in this thread's CPU time.

Each run parses the node's answer as the watcher does (`json.loads`, fractions
as Decimal), then matches what it just parsed (nothing cached: as the watcher
meets a block), each timed in CPU time, as the shared machines this runs on
are often loaded. The ratio is taken run by run, so the baseline and the match
see the same load, and the median run is reported.
"""

import gc
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

RUNS = 15
TARGET = 0.10


@dataclass(frozen=True)
class MatchTiming:
    parse_ms: float  # median
    match_ms: float  # median
    ratio: float  # median of each run's match / parse
    result: Any  # the last run's match

    def verdict(self) -> str:
        return f"match / parse alone (CPU): {self.ratio:.1%} [target < {TARGET:.0%}: {'ok' if self.ratio < TARGET else 'MISSED'}]"


def parse(bodies: list[bytes]) -> list[Any]:
    return [json.loads(body, parse_float=Decimal) for body in bodies]


def match_against_parse(bodies: list[bytes], match: Callable[[list[Any]], Any], runs: int = RUNS) -> MatchTiming:
    """`match(parsed)` on the freshly parsed `bodies` (the node's answers for one block), against their parse."""
    parses, matches, ratios, result = [], [], [], None
    for _ in range(runs):
        gc.collect()  # the last run's objects freed before, not during, this run's parse
        started = time.thread_time()
        parsed = parse(bodies)
        parsed_at = time.thread_time()
        result = match(parsed)
        matched_at = time.thread_time()
        del parsed
        parses.append(parsed_at - started)
        matches.append(matched_at - parsed_at)
        ratios.append(matches[-1] / parses[-1])
    return MatchTiming(
        statistics.median(parses) * 1000, statistics.median(matches) * 1000, statistics.median(ratios), result
    )
