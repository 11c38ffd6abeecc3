"""Support's own Prometheus metrics (the kit's count entrypoints, events and the outbox)."""

from prometheus_client import Counter

REQUESTS_OPENED = Counter(
    "kernodeck_support_requests_opened_total", "Support requests recorded, by kind and what about", ["kind", "about"]
)
SECRETS_REFUSED = Counter(
    "kernodeck_support_secrets_refused_total", "Support requests refused because they seemed to hold a secret"
)
ANSWERS = Counter("kernodeck_support_answers_total", "Operators' answers to support requests", ["kind"])
EXTENSIONS = Counter(
    "kernodeck_support_extensions_total",
    "Extensions confirmed, paid, applied or refunded, and changes of configuration confirmed",
    ["status"],
)
