"""The watchers' metrics, per network (the kit's cover entrypoints and the outbox)."""

from prometheus_client import Counter, Gauge, Histogram

NODE_HEIGHT = Gauge("kernodeck_watcher_node_height", "The node's newest block, as last seen", ["network"])
SCANNED_HEIGHT = Gauge("kernodeck_watcher_scanned_height", "The newest block scanned", ["network"])
LAG_BLOCKS = Gauge("kernodeck_watcher_lag_blocks", "Blocks the node has that are not scanned yet", ["network"])
LAG_SECONDS = Gauge("kernodeck_watcher_lag_seconds", "Seconds since the watcher last had every block", ["network"])
LAGGING = Gauge("kernodeck_watcher_lagging", "1 while the watcher reports itself lagging", ["network"])
ACTIVE = Gauge("kernodeck_watcher_active", "1 in the replica that holds the scan lock", ["network"])
TRANSFERS = Counter("kernodeck_watcher_transfers_total", "Transfer events emitted, by kind", ["network", "event"])
UNREADABLE_TRANSACTIONS = Counter(
    "kernodeck_watcher_unreadable_transactions_total",
    "Transactions of a shape the watcher cannot read, skipped (each logged with its txid)",
    ["network"],
)
UNSEEN = Gauge(
    "kernodeck_watcher_unseen_transfers",
    "1 while the watcher cannot see a kind of transfer with its node (internal_eth, internal_trx): the method is"
    " degraded, the balance check its backstop",
    ["network", "kind"],
)
BALANCE_MISMATCHES = Counter(
    "kernodeck_watcher_balance_mismatches_total",
    "Watched addresses found holding more than the transfers seen (each a review item in payments)",
    ["network"],
)
REORGS = Counter("kernodeck_watcher_reorgs_total", "Reorganisations rolled back", ["network"])
RPC_ERRORS = Counter("kernodeck_watcher_rpc_errors_total", "Node calls that failed", ["network", "call"])
RPC_SECONDS = Histogram(
    "kernodeck_watcher_rpc_seconds",
    "Time spent in a node call (a call may be several RPC requests)",
    ["network", "call"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
BLOCK_NOTIFICATIONS = Counter(
    "kernodeck_watcher_block_notifications_total", "Blocks the node announced (ZMQ hashblock, newHeads)", ["scheme"]
)
NOTIFY_FAILURES = Counter(
    "kernodeck_watcher_block_notification_failures_total",
    "Times the block notification listener lost its node (it polls meanwhile and reconnects)",
    ["scheme"],
)
