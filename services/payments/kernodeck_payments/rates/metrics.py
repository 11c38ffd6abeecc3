"""Prometheus metrics of the rate sources."""

from prometheus_client import Counter, Histogram

RATE_FETCH_TOTAL = Counter(
    "kernodeck_rate_fetch_total", "Rate source fetches, by outcome (ok, error)", ["source", "outcome"]
)
RATE_FETCH_SECONDS = Histogram(
    "kernodeck_rate_fetch_seconds",
    "Time one rate source took to answer, or to fail",
    ["source"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
