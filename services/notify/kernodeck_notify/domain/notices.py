"""Which events a customer hears about, and what each message says. No I/O.

`notice_for(event)` turns an event into a `Notice`: a template kind, the
values it shows and the page it links to; None when the event changes
nothing the customer needs to be told (it may still update notify's own
copies). One change is told once: a crypto payment is confirmed by
`payment_status_changed`, a balance payment by `balance_debited`, a top-up by
`balance_credited`, and the order's own status changes that provisioning
announces (provisioning, ready, ended, failed) by provisioning's events.
"""

from dataclasses import dataclass, field
from datetime import datetime

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

BALANCE_PAGE = "/balance"

# Every kind of message an event can bring (each has a template in every language).
EVENT_KINDS = (
    "order_created",
    "order_cancelled",
    "payment_instructions",
    "payment_instructions_topup",
    "payment_seen",
    "payment_settled",
    "payment_underpaid",
    "payment_overpaid",
    "payment_late",
    "payment_expired",
    "payment_in_review",
    "balance_credited",
    "balance_credited_topup",
    "balance_debited",
    "provisioning_started",
    "rental_ready",
    "rental_ending_hour",
    "rental_ending_hours",
    "rental_extended",
    "rental_ended",
    "provisioning_failed",
    "support_request_answered",
    "extension_confirmed",
)
# What a payment is for, said after "for" in the payment messages.
SUBJECTS = ("subject_order", "subject_extension", "subject_topup")
# Why the balance was credited (payments' `reason`); any other reason reads as `credit_other`.
CREDIT_REASONS = ("overpayment", "underpayment", "late_transfer", "refused_payment", "review")
CREDIT_PHRASES = (*(f"credit_{reason}" for reason in CREDIT_REASONS), "credit_other")
# Payment statuses told as they are reached; `confirming` right after `awaiting_transfer` reads as seen.
PAYMENT_KINDS = {
    "seen": "payment_seen",
    "settled": "payment_settled",
    "underpaid": "payment_underpaid",
    "overpaid": "payment_overpaid",
    "late": "payment_late",
    "expired": "payment_expired",
    "in_review": "payment_in_review",
}


@dataclass(frozen=True)
class Notice:
    """A message to every chat of `account_id`: template `kind` with `values`, linking to `path`.

    `phrases` name other templates whose text fills a value (`{subject}`, `{reason}`), so
    that each reads in the chat's language.
    """

    kind: str
    account_id: str
    path: str
    values: dict[str, str | int] = field(default_factory=dict)
    phrases: dict[str, str] = field(default_factory=dict)


def order_page(order_id: str) -> str:
    return f"/orders/{order_id}"


def moment(value: datetime) -> str:
    """A time as every message shows it, the same in each language: 2026-12-01 14:05 UTC."""
    return value.strftime("%Y-%m-%d %H:%M UTC")


def usd(cents: int) -> str:
    return f"{format_usd(cents)} USD"


def notice_for(event: Event) -> Notice | None:
    handler = _HANDLERS.get(type(event))
    return handler(event) if handler else None


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
    if event.status != "cancelled":
        return None
    return Notice("order_cancelled", event.account_id, order_page(event.order_id), {"order_id": event.order_id})


def _subject(purpose: str, order_id: str | None) -> tuple[str, str, dict]:
    """The phrase naming what a payment is for, its page, and the values the phrase needs."""
    if purpose == "topup" or order_id is None:
        return "subject_topup", BALANCE_PAGE, {}
    phrase = "subject_extension" if purpose == "extension" else "subject_order"
    return phrase, order_page(order_id), {"order_id": order_id}


def _payment_instructions(event: PaymentInstructionsCreated) -> Notice:
    values = {
        "amount": event.amount,
        "asset": event.asset,
        "network": event.network,
        "deadline": moment(event.expires_at),
        "amount_usd": usd(event.amount_usd_cents),
    }
    phrase, path, subject_values = _subject(event.purpose, event.order_id)
    if phrase == "subject_topup":
        return Notice("payment_instructions_topup", event.account_id, path, values)
    return Notice("payment_instructions", event.account_id, path, {**values, **subject_values}, {"subject": phrase})


def _payment_status_changed(event: PaymentStatusChanged) -> Notice | None:
    status = event.status
    if status == "confirming" and event.previous_status == "awaiting_transfer":
        status = "seen"
    kind = PAYMENT_KINDS.get(status)
    phrase, path, subject_values = _subject(event.purpose, event.order_id)
    if kind is None or (kind == "payment_settled" and phrase == "subject_topup"):
        return None  # a top-up is told once credited (balance_credited)
    values = {**subject_values, "confirmations": event.required_confirmations}
    return Notice(kind, event.account_id, path, values, {"subject": phrase})


def _balance_credited(event: BalanceCredited) -> Notice:
    values = {"amount": usd(event.amount_usd_cents)}
    if event.reason == "topup":
        return Notice("balance_credited_topup", event.account_id, BALANCE_PAGE, values)
    reason = f"credit_{event.reason}" if event.reason in CREDIT_REASONS else "credit_other"
    return Notice("balance_credited", event.account_id, BALANCE_PAGE, values, {"reason": reason})


def _balance_debited(event: BalanceDebited) -> Notice:
    purpose = "extension" if event.extension_id else "order"
    phrase, path, subject_values = _subject(purpose, event.order_id)
    values = {**subject_values, "amount": usd(event.amount_usd_cents)}
    return Notice("balance_debited", event.account_id, path, values, {"subject": phrase})


def _of_order(kind: str):
    def notice(event) -> Notice:
        return Notice(kind, event.account_id, order_page(event.order_id), {"order_id": event.order_id})

    return notice


def _rental_ready(event: RentalReady) -> Notice:
    values = {"order_id": event.order_id, "ends_at": moment(event.ends_at)}
    return Notice("rental_ready", event.account_id, order_page(event.order_id), values)


def _rental_ending(event: RentalEnding) -> Notice:
    kind = "rental_ending_hour" if event.hours_left == 1 else "rental_ending_hours"
    values = {"order_id": event.order_id, "ends_at": moment(event.ends_at), "hours": event.hours_left}
    return Notice(kind, event.account_id, order_page(event.order_id), values)


def _rental_extended(event: RentalExtended) -> Notice:
    values = {"order_id": event.order_id, "ends_at": moment(event.ends_at)}
    return Notice("rental_extended", event.account_id, order_page(event.order_id), values)


def _extension_confirmed(event: ExtensionConfirmed) -> Notice:
    values = {"order_id": event.order_id, "days": event.extra_days, "price": usd(event.price_usd_cents)}
    return Notice("extension_confirmed", event.account_id, order_page(event.order_id), values)


_HANDLERS = {
    OrderCreated: _order_created,
    OrderStatusChanged: _order_status_changed,
    PaymentInstructionsCreated: _payment_instructions,
    PaymentStatusChanged: _payment_status_changed,
    BalanceCredited: _balance_credited,
    BalanceDebited: _balance_debited,
    ProvisioningStarted: _of_order("provisioning_started"),
    RentalReady: _rental_ready,
    RentalEnding: _rental_ending,
    RentalExtended: _rental_extended,
    RentalEnded: _of_order("rental_ended"),
    ProvisioningFailed: _of_order("provisioning_failed"),
    SupportRequestAnswered: _of_order("support_request_answered"),
    ExtensionConfirmed: _extension_confirmed,
}
TOLD_EVENTS = tuple(_HANDLERS)
