"""What the RPC methods return: JSON-friendly dicts, integers for money."""

from kernodeck_chains.amounts import format_amount
from kernodeck_chains.uris import payment_uri
from kernodeck_contracts.statuses import PaymentStatus, TransferStatus
from kernodeck_kit.types import rfc3339
from kernodeck_payments.domain.intents import PaymentIntent, RecordedTransfer, normalize_token
from kernodeck_payments.domain.methods import find_method
from kernodeck_payments.domain.reviews import ReviewItem
from kernodeck_payments.domain.topups import Topup
from kernodeck_payments.store.tables import ReviewAudit
from kernodeck_payments.tracking import subject


def payment_view(intent: PaymentIntent, transfers: list[RecordedTransfer], ethereum_chain_id: int) -> dict:
    method = find_method(intent.asset, intent.network)
    # Another asset sent to this address is not this payment: it waits in the review queue.
    counted = [t for t in transfers if t.token == normalize_token(intent.network, intent.token)]
    live = [t for t in counted if t.state != TransferStatus.REVERTED]
    received = sum(t.amount for t in live)
    confirmed = sum(t.amount for t in live if t.state == TransferStatus.CONFIRMED)
    chain_id = ethereum_chain_id if intent.network == "ethereum" else None
    return {
        "id": intent.id,
        "purpose": intent.purpose,
        **subject(intent),
        "account_id": intent.account_id,
        "asset": intent.asset,
        "network": intent.network,
        "address": intent.address,
        "amount_base_units": intent.amount,
        "amount": format_amount(intent.amount, method.decimals),
        "amount_usd_cents": intent.amount_usd_cents,
        "rate": intent.rate,
        "uri": payment_uri(method, intent.address, intent.amount, intent.token, chain_id),
        "expires_at": rfc3339(intent.expires_at),
        "status": intent.status,
        "reported_at": rfc3339(intent.reported_at),
        "received_base_units": received,
        "received_amount": format_amount(received, method.decimals),
        "confirmed_base_units": confirmed,
        "confirmed_amount": format_amount(confirmed, method.decimals),
        "required_confirmations": intent.required_confirmations,
        "transfers": [
            {
                "txid": t.txid,
                "index": t.index,
                "amount_base_units": t.amount,
                "amount": format_amount(t.amount, method.decimals),
                "confirmations": t.confirmations,
                "state": t.state,
            }
            for t in counted
        ],
        "created_at": rfc3339(intent.created_at),
    }


def topup_view(topup: Topup, payment: dict, credited_usd_cents: int | None = None) -> dict:
    """`credited_usd_cents`: what its settlement credited to the balance (the amount asked at the lower of the
    locked and the current rate), once it has."""
    return {
        "id": topup.id,
        "amount_usd_cents": topup.amount_usd_cents,
        "status": "credited"
        if payment["status"] in (PaymentStatus.SETTLED, PaymentStatus.OVERPAID)
        else payment["status"],
        "credited_usd_cents": credited_usd_cents,
        "created_at": rfc3339(topup.created_at),
        "payment": payment,
    }


def review_view(item: ReviewItem, audit: list[ReviewAudit]) -> dict:
    return {
        "id": item.id,
        "reason": item.reason,
        "status": item.status,
        "payment_id": item.intent_id,
        "account_id": item.account_id,
        "transfer_key": item.transfer_key,
        "transfers": item.transfers,
        "decision": item.decision,
        "amount_usd_cents": item.amount_usd_cents,
        "note": item.note,
        "created_at": rfc3339(item.created_at),
        "resolved_at": rfc3339(item.resolved_at),
        "resolved_by": item.resolved_by,
        "audit": [{"at": rfc3339(a.at), "actor": a.actor, "action": a.action, "detail": a.detail} for a in audit],
    }
