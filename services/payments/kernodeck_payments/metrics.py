"""The payments service's own metrics (the kit's cover entrypoints and events)."""

from prometheus_client import Counter

INTENTS_OPENED = Counter("kernodeck_payment_intents_total", "Payment intents opened", ["asset", "network", "purpose"])
PAYMENTS_SETTLED = Counter("kernodeck_payments_settled_total", "Intents settled", ["asset", "network", "purpose"])
REVIEWS_OPENED = Counter("kernodeck_review_items_total", "Items queued for an operator", ["reason"])
