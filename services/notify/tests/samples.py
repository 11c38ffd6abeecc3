"""One event of each kind notify tells, as the services emit them (built from libs/contracts)."""

from datetime import UTC, datetime

from kernodeck_contracts.events import (
    BalanceCredited,
    BalanceDebited,
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

ACCOUNT = "a" * 32
ORDER = "0f" * 16
TOPUP = "7b" * 16
WHEN = datetime(2026, 12, 1, 14, 5, tzinfo=UTC)


def order_created(account_id: str = ACCOUNT, order_id: str = ORDER) -> OrderCreated:
    return OrderCreated(
        order_id=order_id,
        account_id=account_id,
        model_id="b200",
        duration_days=7,
        lots=2,
        total_gpus=4,
        preparation="pytorch",
        total_usd_cents=1_234_50,
    )


def status_changed(status: str, previous: str, purpose: str = "order", **ids) -> PaymentStatusChanged:
    ids = ids or ({"topup_id": TOPUP} if purpose == "topup" else {"order_id": ORDER})
    return PaymentStatusChanged(
        payment_id="p1",
        account_id=ACCOUNT,
        purpose=purpose,
        status=status,
        previous_status=previous,
        confirmations=1,
        required_confirmations=2,
        **ids,
    )


def instructions(purpose: str = "order") -> PaymentInstructionsCreated:
    ids = {"topup_id": TOPUP} if purpose == "topup" else {"order_id": ORDER}
    return PaymentInstructionsCreated(
        payment_id="p1",
        account_id=ACCOUNT,
        purpose=purpose,
        asset="USDT",
        network="tron",
        amount="1234.5",
        amount_base_units=1_234_500_000,
        amount_usd_cents=1_234_50,
        expires_at=WHEN,
        **ids,
    )


# (event, the kind of message it brings)
EVERY_KIND = [
    (order_created(), "order_created"),
    (
        OrderStatusChanged(
            order_id=ORDER,
            account_id=ACCOUNT,
            status="cancelled",
            previous_status="awaiting_payment",
            reason="cancelled_unpaid",
        ),
        "order_cancelled",
    ),
    (instructions(), "payment_instructions"),
    (instructions("topup"), "payment_instructions_topup"),
    (status_changed("seen", "awaiting_transfer"), "payment_seen"),
    (status_changed("settled", "confirming"), "payment_settled"),
    (status_changed("underpaid", "confirming"), "payment_underpaid"),
    (status_changed("overpaid", "confirming"), "payment_overpaid"),
    (status_changed("late", "expired"), "payment_late"),
    (status_changed("expired", "awaiting_transfer"), "payment_expired"),
    (status_changed("in_review", "seen"), "payment_in_review"),
    (BalanceCredited(account_id=ACCOUNT, amount_usd_cents=500, reason="overpayment"), "balance_credited"),
    (BalanceCredited(account_id=ACCOUNT, amount_usd_cents=10_000, reason="topup"), "balance_credited_topup"),
    (BalanceDebited(account_id=ACCOUNT, amount_usd_cents=1_234_50, order_id=ORDER), "balance_debited"),
    (ProvisioningStarted(order_id=ORDER, account_id=ACCOUNT), "provisioning_started"),
    (RentalReady(order_id=ORDER, account_id=ACCOUNT, delivered_at=WHEN, starts_at=WHEN, ends_at=WHEN), "rental_ready"),
    (RentalEnding(order_id=ORDER, account_id=ACCOUNT, ends_at=WHEN, hours_left=24), "rental_ending"),
    (RentalExtended(order_id=ORDER, account_id=ACCOUNT, extension_id="e1", ends_at=WHEN), "rental_extended"),
    (RentalEnded(order_id=ORDER, account_id=ACCOUNT, ended_at=WHEN), "rental_ended"),
    (ProvisioningFailed(order_id=ORDER, account_id=ACCOUNT, reason="no_ssh_public_key: none"), "provisioning_failed"),
    (
        SupportRequestAnswered(
            request_id="r1", order_id=ORDER, account_id=ACCOUNT, kind="incident", answer="Fixed: try again."
        ),
        "support_request_answered",
    ),
    (
        SupportRequestAnswered(
            request_id="r2", order_id=None, topup_id=TOPUP, account_id=ACCOUNT, kind="question", answer="Credited."
        ),
        "support_request_answered_elsewhere",
    ),
    (
        ExtensionConfirmed(
            extension_id="e1", order_id=ORDER, account_id=ACCOUNT, extra_days=7, price_usd_cents=900_00, due_by=WHEN
        ),
        "extension_confirmed",
    ),
]
