"""Which events a customer hears about, and what each message says. No I/O.

`notice_for(event)` turns an event into a `Notice`: what happened (`kind`), the
template that tells it, the values it shows and the page it links to; None when
the event changes nothing the customer needs to be told (it may still update
notify's own copies). One change is told once: a crypto payment is confirmed by
`payment_status_changed`, a balance payment by `balance_debited`, a top-up by
`balance_credited`, and the order's own status changes that provisioning
announces (provisioning, ready, ended, failed) by provisioning's events.

What the order's page and timeline say, Telegram says in the same words: an
order's news is its timeline entry (`kernodeck_contracts.timeline`, built from
the event as orders builds it), a payment's status and a credit's reason are the
catalogue's (`kernodeck_contracts.texts`), the same texts the page shows.
"""

from dataclasses import dataclass, field
from datetime import datetime

from kernodeck_contracts import timeline
from kernodeck_contracts.events import (
    BalanceCredited,
    BalanceDebited,
    Event,
    ExtensionConfirmed,
    OrderCreated,
    OrderStatusChanged,
    PaymentInstructionsCreated,
    PaymentStatusChanged,
    ProvisioningFailed,
    ProvisioningStarted,
    RentalEnded,
    RentalEnding,
    RentalExtended,
    RentalReady,
    SupportRequestAnswered,
)
from kernodeck_contracts.money import format_usd
from kernodeck_contracts.statuses import OrderStatus, PaymentStatus
from kernodeck_contracts.texts import time_text
from kernodeck_contracts.timeline import Said, TimelineCode

# The app's pages, addressed by the hash (the gateway serves one document at /).
BALANCE_PAGE = "/#/balance"
SUPPORT_PAGE = "/#/support"

# Every kind of message an event can bring, and the template that tells it.
TEMPLATE_OF = {
    "order_created": "order_created",
    "order_cancelled": "order_news",
    "payment_instructions": "payment_instructions",
    "payment_instructions_topup": "payment_instructions_topup",
    "payment_seen": "payment_news",
    "payment_settled": "payment_news",
    "payment_underpaid": "payment_news",
    "payment_overpaid": "payment_news",
    "payment_late": "payment_news",
    "payment_expired": "payment_news",
    "payment_in_review": "payment_news",
    "balance_credited": "balance_credited",
    "balance_credited_topup": "balance_credited_topup",
    "balance_debited": "balance_debited",
    "provisioning_started": "order_news",
    "rental_ready": "order_news",
    "rental_ending": "order_news",
    "rental_extended": "order_news",
    "rental_ended": "order_news",
    "provisioning_failed": "order_news",
    "support_request_answered": "order_news",
    "support_request_answered_elsewhere": "news",  # about a top-up or the account
    "extension_confirmed": "order_news",
}
EVENT_KINDS = tuple(TEMPLATE_OF)
EVENT_TEMPLATES = tuple(sorted(set(TEMPLATE_OF.values())))
# What a payment is for, said after "for" in the payment messages.
SUBJECTS = ("subject_order", "subject_extension", "subject_topup")
# Payment statuses told as they are reached; `confirming` right after `awaiting_transfer` reads as seen.
PAYMENT_KINDS = {
    PaymentStatus.SEEN: "payment_seen",
    PaymentStatus.SETTLED: "payment_settled",
    PaymentStatus.UNDERPAID: "payment_underpaid",
    PaymentStatus.OVERPAID: "payment_overpaid",
    PaymentStatus.LATE: "payment_late",
    PaymentStatus.EXPIRED: "payment_expired",
    PaymentStatus.IN_REVIEW: "payment_in_review",
}


@dataclass(frozen=True)
class Notice:
    """A message to every chat of `account_id` about what happened (`kind`), linking to `path`.

    Its template (TEMPLATE_OF) shows `values`; `phrases` name other templates whose text fills a value
    (`{subject}`), and `said` catalogue texts (`kernodeck_contracts.texts`: a key and its parameters) that do,
    so that each reads in the chat's language.
    """

    kind: str
    account_id: str
    path: str
    values: dict[str, str | int] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)
    said: dict[str, tuple[str, dict]] = field(default_factory=dict)

    @property
    def template(self) -> str:
        return TEMPLATE_OF[self.kind]


def order_page(order_id: str) -> str:
    return f"/#/orders/{order_id}"


def topup_page(topup_id: str) -> str:
    return f"/#/topups/{topup_id}"


def moment(value: datetime) -> str:
    """A time as every message shows it, the same in each language: 2026-12-01 14:05 UTC."""
    return time_text(value)


def usd(cents: int) -> str:
    return f"{format_usd(cents)} USD"


def notice_for(event: Event) -> Notice | None:
    handler = _HANDLERS.get(type(event))
    return handler(event) if handler else None


def _news(kind: str, event, said: Said) -> Notice:
    """The order's timeline entry, told as its news."""
    values = {"order_id": event.order_id}
    return Notice(kind, event.account_id, order_page(event.order_id), values, said={"news": _key(said)})


def _key(said: Said) -> tuple[str, dict]:
    return f"timeline.{said.code}", said.params


def _order_created(event: OrderCreated) -> Notice:
    return Notice(
        "order_created",
        event.account_id,
        order_page(event.order_id),
        {
            "order_id": event.order_id,
            "model": event.model_id,
            "lots": event.lots,
            "gpus": event.total_gpus,
            "days": event.duration_days,
            "total": usd(event.total_usd_cents),
        },
    )


def _order_status_changed(event: OrderStatusChanged) -> Notice | None:
    if event.status != OrderStatus.CANCELLED:
        return None
    return _news("order_cancelled", event, timeline.cancelled(event.reason))


def _subject(purpose: str, order_id: str | None, topup_id: str | None) -> tuple[str, str, dict]:
    """The phrase naming what a payment is for, its page, and the values the phrase needs."""
    if purpose == "topup" or order_id is None:
        return "subject_topup", topup_page(topup_id) if topup_id else BALANCE_PAGE, {}
    phrase = "subject_extension" if purpose == "extension" else "subject_order"
    return phrase, order_page(order_id), {"order_id": order_id}


def _payment_instructions(event: PaymentInstructionsCreated) -> Notice:
    values = {
        "amount": event.amount,
        "asset": event.asset,
        "deadline": moment(event.expires_at),
        "amount_usd": usd(event.amount_usd_cents),
    }
    said = {"network": (f"network.{event.network}", {})}
    phrase, path, subject_values = _subject(event.purpose, event.order_id, event.topup_id)
    if phrase == "subject_topup":
        return Notice("payment_instructions_topup", event.account_id, path, values, said=said)
    values = {**values, **subject_values}
    return Notice("payment_instructions", event.account_id, path, values, {"subject": phrase}, said)


def _payment_status_changed(event: PaymentStatusChanged) -> Notice | None:
    status = event.status
    if status == PaymentStatus.CONFIRMING and event.previous_status == PaymentStatus.AWAITING_TRANSFER:
        status = PaymentStatus.SEEN
    kind = PAYMENT_KINDS.get(status)
    phrase, path, subject_values = _subject(event.purpose, event.order_id, event.topup_id)
    if kind is None or (kind == "payment_settled" and phrase == "subject_topup"):
        return None  # a top-up is told once credited (balance_credited)
    said = {"status": (f"payment.{status}", {})}
    return Notice(kind, event.account_id, path, subject_values, {"subject": phrase}, said)


def _balance_credited(event: BalanceCredited) -> Notice:
    values = {"amount": usd(event.amount_usd_cents)}
    if event.reason == "topup":
        return Notice("balance_credited_topup", event.account_id, BALANCE_PAGE, values)
    return Notice(
        "balance_credited", event.account_id, BALANCE_PAGE, values, said={"reason": (f"ledger.{event.reason}", {})}
    )


def _balance_debited(event: BalanceDebited) -> Notice:
    purpose = "extension" if event.extension_id else "order"
    phrase, path, subject_values = _subject(purpose, event.order_id, None)
    values = {**subject_values, "amount": usd(event.amount_usd_cents)}
    return Notice("balance_debited", event.account_id, path, values, {"subject": phrase})


def _support_request_answered(event: SupportRequestAnswered) -> Notice | None:
    said = timeline.of_answer(event.code, event.params, event.answer)
    if said is None:
        return None  # an extension confirmed without a note: extension_confirmed tells it
    if event.order_id is not None:
        return _news("support_request_answered", event, said)
    path = topup_page(event.topup_id) if event.topup_id else SUPPORT_PAGE
    return Notice("support_request_answered_elsewhere", event.account_id, path, said={"news": _key(said)})


_HANDLERS = {
    OrderCreated: _order_created,
    OrderStatusChanged: _order_status_changed,
    PaymentInstructionsCreated: _payment_instructions,
    PaymentStatusChanged: _payment_status_changed,
    BalanceCredited: _balance_credited,
    BalanceDebited: _balance_debited,
    ProvisioningStarted: lambda e: _news("provisioning_started", e, Said(TimelineCode.PREPARING)),
    RentalReady: lambda e: _news("rental_ready", e, timeline.ready(e.ends_at)),
    RentalEnding: lambda e: _news("rental_ending", e, timeline.rental_ending(e.hours_left, e.ends_at)),
    RentalExtended: lambda e: _news("rental_extended", e, timeline.rental_extended(e.ends_at)),
    RentalEnded: lambda e: _news("rental_ended", e, Said(TimelineCode.ENDED)),
    ProvisioningFailed: lambda e: _news("provisioning_failed", e, timeline.failed(e.reason)),
    SupportRequestAnswered: _support_request_answered,
    ExtensionConfirmed: lambda e: _news(
        "extension_confirmed", e, timeline.extension_confirmed(e.extra_days, format_usd(e.price_usd_cents), e.due_by)
    ),
}
TOLD_EVENTS = tuple(_HANDLERS)
