"""Notify's own metrics, beside the kit's events consumed, duplicates and dead letters."""

from prometheus_client import Counter, Gauge, Histogram

SENT = Counter("kernodeck_notify_messages_sent_total", "Messages the Bot API accepted, by kind", ["kind"])
FAILED = Counter(
    "kernodeck_notify_messages_failed_total",
    "Messages given up: the chat blocked the bot (and what waited for it), or Telegram refused them",
    ["reason"],
)
RETRIED = Counter(
    "kernodeck_notify_send_retries_total",
    "Sends to do again: rate limited (429), the Bot API unavailable, or in doubt after the process stopped mid-send",
    ["reason"],
)
OLDEST_WAITING = Gauge(
    "kernodeck_notify_oldest_waiting_seconds", "Age of the oldest message waiting to be sent; 0 when none waits"
)
DELIVERY_SECONDS = Histogram(
    "kernodeck_notify_delivery_seconds",
    "From a message's queuing to the Bot API's acceptance",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800),
)
READY = Gauge("kernodeck_notify_ready", "1 once the event queue is bound and the Bot API has answered getMe")
