"""The events that let a customer follow a crypto payment: its instructions, then each status it reaches."""

from kernodeck_chains.amounts import format_amount
from kernodeck_contracts.events import PaymentInstructionsCreated, PaymentStatusChanged
from kernodeck_contracts.statuses import TransferStatus
from kernodeck_payments.domain.intents import PaymentIntent, Purpose, RecordedTransfer, normalize_token
from kernodeck_payments.domain.methods import find_method


def subject(intent: PaymentIntent) -> dict:
    """What the intent pays for, as the events and the RPC answers name it (an extension with its order)."""
    return {
        "purpose": intent.purpose,
        "order_id": intent.order_id if intent.purpose == Purpose.EXTENSION else _reference(intent, Purpose.ORDER),
        "topup_id": _reference(intent, Purpose.TOPUP),
        "extension_id": _reference(intent, Purpose.EXTENSION),
    }


def _reference(intent: PaymentIntent, purpose: Purpose) -> str | None:
    return intent.reference_id if intent.purpose == purpose else None


def instructions_created(intent: PaymentIntent) -> PaymentInstructionsCreated:
    method = find_method(intent.asset, intent.network)
    return PaymentInstructionsCreated(
        payment_id=intent.id,
        account_id=intent.account_id,
        **subject(intent),
        asset=intent.asset,
        network=intent.network,
        amount=format_amount(intent.amount, method.decimals),
        amount_base_units=intent.amount,
        amount_usd_cents=intent.amount_usd_cents,
        expires_at=intent.expires_at,
    )


def status_changed(intent: PaymentIntent, previous: str, transfers: list[RecordedTransfer]) -> PaymentStatusChanged:
    """`intent` has just moved from `previous` to its status; `transfers` are those on its address."""
    token = normalize_token(intent.network, intent.token)
    counted = [t.confirmations for t in transfers if t.token == token and t.state != TransferStatus.REVERTED]
    return PaymentStatusChanged(
        payment_id=intent.id,
        account_id=intent.account_id,
        **subject(intent),
        status=intent.status,
        previous_status=previous,
        confirmations=max(counted, default=0),
        required_confirmations=intent.required_confirmations,
    )
