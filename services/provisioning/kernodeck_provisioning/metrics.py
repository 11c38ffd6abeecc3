"""Provisioning's own metrics (the kit adds entrypoint timings, events and the outbox)."""

from prometheus_client import Counter, Histogram

HOLDS = Counter("kernodeck_capacity_holds_total", "Capacity hold requests by outcome", ["outcome"])
DELIVERIES = Counter("kernodeck_deliveries_total", "Rentals delivered (ready) or failed", ["outcome"])
NODE_REFUSALS = Counter(
    "kernodeck_node_refusals_total", "Deliveries a node refused, by step; the node leaves service", ["step"]
)
DELIVERY_STEP_SECONDS = Histogram(
    "kernodeck_delivery_step_seconds",
    "Time of each delivery step on a node",
    ["step"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900),
)
RECLAIM_FAILURES = Counter("kernodeck_reclaim_failures_total", "Ends of term whose node could not be reclaimed yet")
RECLAIM_SURVIVORS = Counter(
    "kernodeck_reclaim_survivors_total",
    "Reclaims (an ended term, an undone delivery) that found a process of the rental alive; the node left service",
)
NODE_CHECKS = Counter(
    "kernodeck_node_checks_total", "Checks of what a node provides to keep rentals apart, by outcome", ["isolation"]
)
