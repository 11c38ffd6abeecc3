"""What an order's timeline says, as a code with parameters: orders writes them, the gateway serves them, the web
page and notify render them in the customer's language from the same catalogue (`kernodeck_contracts.texts`,
key `timeline.<code>`), and orders keeps the English rendering as the entry's `detail`.

The builders below are the one place an event becomes an entry, so that the page and Telegram say the same thing.
Parameter values are JSON scalars; their names say how they are shown (see `texts`).
"""

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from kernodeck_contracts import texts


class TimelineCode(StrEnum):
    ORDER_RECORDED = "order_recorded"
    PAYMENT_REPORTED = "payment_reported"  # network
    PAID_CRYPTO = "paid_crypto"  # asset, network
    PAID_BALANCE = "paid_balance"
    PREPARING = "preparing"
    READY = "ready"  # ends_at
    ENDED = "ended"
    CANCELLED_BY_CUSTOMER = "cancelled_by_customer"
    CANCELLED_UNPAID = "cancelled_unpaid"
    FAILED_NO_SSH_KEY = "failed_no_ssh_key"
    FAILED_NO_NODE = "failed_no_node"
    FAILED_CAPACITY_LOST = "failed_capacity_lost"
    FAILED = "failed"
    RENTAL_ENDING = "rental_ending"  # hours, ends_at
    RENTAL_EXTENDED = "rental_extended"  # ends_at
    SUPPORT_INCIDENT = "support_incident"
    SUPPORT_QUESTION = "support_question"
    SUPPORT_EXTENSION = "support_extension"
    SUPPORT_ANSWERED = "support_answered"  # text: the operator's words, shown as written
    EXTENSION_CONFIRMED = "extension_confirmed"  # days, price_usd, due_by
    EXTENSION_REFUSED = "extension_refused"  # text
    EXTENSION_PAID = "extension_paid"  # days
    CONFIGURATION_CONFIRMED = "configuration_confirmed"  # new_order_id, lots, model_name, days, total_usd
    NOTE = "note"  # text: an entry of a form written before codes, kept as it was


# The parameters each code's text uses: every language's text has exactly these placeholders (a test holds them).
PARAMS: dict[TimelineCode, tuple[str, ...]] = {
    TimelineCode.PAYMENT_REPORTED: ("network",),
    TimelineCode.PAID_CRYPTO: ("asset", "network"),
    TimelineCode.READY: ("ends_at",),
    TimelineCode.RENTAL_ENDING: ("hours", "ends_at"),
    TimelineCode.RENTAL_EXTENDED: ("ends_at",),
    TimelineCode.SUPPORT_ANSWERED: ("text",),
    TimelineCode.EXTENSION_CONFIRMED: ("days", "price_usd", "due_by"),
    TimelineCode.EXTENSION_REFUSED: ("text",),
    TimelineCode.EXTENSION_PAID: ("days",),
    TimelineCode.CONFIGURATION_CONFIRMED: ("new_order_id", "lots", "model_name", "days", "total_usd"),
    TimelineCode.NOTE: ("text",),
}

# What provisioning's failure reasons (`<reason>: <detail>`) read as.
_FAILURES = {
    "no_ssh_public_key": TimelineCode.FAILED_NO_SSH_KEY,
    "no_node_passed": TimelineCode.FAILED_NO_NODE,
    "capacity_lost": TimelineCode.FAILED_CAPACITY_LOST,
}
_SUPPORT_KINDS = {
    "incident": TimelineCode.SUPPORT_INCIDENT,
    "question": TimelineCode.SUPPORT_QUESTION,
    "extension": TimelineCode.SUPPORT_EXTENSION,
}
# What support's own answers may say besides an operator's words (the words are the answer's text).
ANSWER_CODES = (
    TimelineCode.EXTENSION_CONFIRMED,
    TimelineCode.EXTENSION_REFUSED,
    TimelineCode.CONFIGURATION_CONFIRMED,
)


@dataclass(frozen=True)
class Said:
    """A code and its parameters: one timeline entry's words, or one support answer's."""

    code: TimelineCode
    params: dict[str, str | int] = field(default_factory=dict)

    def text(self, language: str = "en") -> str:
        return texts.render(language, f"timeline.{self.code}", self.params)


def _time(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def paid(method: str) -> Said:
    """`method` as payments names it: "balance", or "<asset>/<network>"."""
    if method == "balance":
        return Said(TimelineCode.PAID_BALANCE)
    asset, _, network = method.partition("/")
    return Said(TimelineCode.PAID_CRYPTO, {"asset": asset, "network": network})


def payment_reported(network: str) -> Said:
    return Said(TimelineCode.PAYMENT_REPORTED, {"network": network})


def ready(ends_at: datetime) -> Said:
    return Said(TimelineCode.READY, {"ends_at": _time(ends_at)})


def failed(reason: str) -> Said:
    """Provisioning's reason (`<code>: <detail>`) as an entry; the detail (a node's answer) is not the customer's."""
    return Said(_FAILURES.get(reason.split(":", 1)[0].strip(), TimelineCode.FAILED))


def cancelled(reason: str) -> Said:
    unpaid = reason in (TimelineCode.CANCELLED_UNPAID, "unpaid_timeout")
    return Said(TimelineCode.CANCELLED_UNPAID if unpaid else TimelineCode.CANCELLED_BY_CUSTOMER)


def rental_ending(hours: int, ends_at: datetime) -> Said:
    return Said(TimelineCode.RENTAL_ENDING, {"hours": hours, "ends_at": _time(ends_at)})


def rental_extended(ends_at: datetime) -> Said:
    return Said(TimelineCode.RENTAL_EXTENDED, {"ends_at": _time(ends_at)})


def support_request(kind: str) -> Said:
    return Said(_SUPPORT_KINDS.get(kind, TimelineCode.SUPPORT_QUESTION))


def of_answer(code: str | None, params: dict, text: str) -> Said | None:
    """A support answer as the order's timeline tells it: an operator's words, a refusal with its reason, a change
    of configuration confirmed; None for an extension's confirmation without a note (its own entry says it all)."""
    if code == TimelineCode.EXTENSION_REFUSED:
        return Said(TimelineCode.EXTENSION_REFUSED, {"text": text})
    if code == TimelineCode.CONFIGURATION_CONFIRMED:
        return Said(TimelineCode.CONFIGURATION_CONFIRMED, params)
    return Said(TimelineCode.SUPPORT_ANSWERED, {"text": text}) if text else None


def extension_confirmed(days: int, price_usd: str, due_by: datetime) -> Said:
    return Said(TimelineCode.EXTENSION_CONFIRMED, {"days": days, "price_usd": price_usd, "due_by": _time(due_by)})


def extension_paid(days: int) -> Said:
    return Said(TimelineCode.EXTENSION_PAID, {"days": days})
