"""A watcher's match timed against the parse of the same block, run after run, in this thread's CPU time.

Each run parses the node's answer as the watcher does (`json.loads`, fractions
as Decimal), then matches what it just parsed (nothing cached: as the watcher
meets a block), then frees it, each timed in CPU time, as the shared machines
this runs on are often loaded. The ratio is taken run by run, so the baseline
and the match see the same load, and the median run is reported; the target
is judged against the parse alone, without the free (which a timing of
`json.loads` alone counts in when it drops the result inside its clock).
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
    free_ms: float  # median: the parsed block freed
    ratio: float  # median of each run's match / parse
    ratio_with_free: float  # median of each run's match / (parse + free)
    result: Any  # the last run's match

    def verdict(self) -> str:
        verdict = "ok" if self.ratio < TARGET else "MISSED"
        return (
            f"match / parse alone (CPU): {self.ratio:.1%} [target < {TARGET:.0%}: {verdict}]; "
            f"match / (parse + free of the block, {self.free_ms:.1f} ms): {self.ratio_with_free:.1%}"
        )


def parse(bodies: list[bytes]) -> list[Any]:
    return [json.loads(body, parse_float=Decimal) for body in bodies]


def match_against_parse(bodies: list[bytes], match: Callable[[list[Any]], Any], runs: int = RUNS) -> MatchTiming:
    """`match(parsed)` on the freshly parsed `bodies` (the node's answers for one block), against their parse."""
    parses, matches, frees, result = [], [], [], None
    for _ in range(runs):
        gc.collect()  # nothing of the last run left for this run's parse to collect
        started = time.thread_time()
        parsed = parse(bodies)
        parsed_at = time.thread_time()
        result = match(parsed)
        matched_at = time.thread_time()
        del parsed
        freed_at = time.thread_time()
        parses.append(parsed_at - started)
        matches.append(matched_at - parsed_at)
        frees.append(freed_at - matched_at)
    timed = list(zip(parses, matches, frees, strict=True))
    return MatchTiming(
        statistics.median(parses) * 1000,
        statistics.median(matches) * 1000,
        statistics.median(frees) * 1000,
        statistics.median(m / p for p, m, _ in timed),
        statistics.median(m / (p + f) for p, m, f in timed),
        result,
    )
