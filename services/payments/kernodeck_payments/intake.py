"""Opening a payment intent: method checks, locked rate, amount, a fresh address."""

from datetime import datetime
from uuid import uuid4

from kernodeck_chains.derivation import derive_deposit_address
from kernodeck_chains.networks import chain_params
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import AddressWatched
from kernodeck_kit.outbox import Tx
from kernodeck_payments.availability import RATE_UNAVAILABLE, MethodBoard
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.amounts import crypto_amount
from kernodeck_payments.domain.intents import IntentStatus, Purpose, address_key
from kernodeck_payments.domain.methods import Method, token_contract
from kernodeck_payments.store.addresses import take_index, take_solana_address
from kernodeck_payments.store.tables import PaymentIntent


def open_intent(
    tx: Tx,
    settings: PaymentsSettings,
    board: MethodBoard,
    method: Method,
    purpose: Purpose,
    account_id: str,
    reference_id: str,
    usd_cents: int,
    now: datetime,
) -> PaymentIntent:
    """Record a complete intent or refuse: no instructions are ever half made."""
    reason = board.reason(method)
    if reason == RATE_UNAVAILABLE:
        raise ServiceError(
            ErrorCode.RATE_UNAVAILABLE, f"no valid {method.rate_symbol} exchange rate right now; try again shortly"
        )
    if reason is not None:
        raise ServiceError(ErrorCode.METHOD_UNAVAILABLE, f"{method.asset} on {method.network} is unavailable: {reason}")
    rate = board.rate(method)
    intent_id = uuid4().hex
    address, index = _allocate_address(tx, settings, method, intent_id)
    row = PaymentIntent(
        id=intent_id,
        purpose=purpose,
        account_id=account_id,
        reference_id=reference_id,
        asset=method.asset,
        network=method.network,
        address=address,
        address_key=address_key(method.network, address),
        derivation_index=index,
        amount=crypto_amount(usd_cents, rate.price, method),
        amount_usd_cents=usd_cents,
        rate=rate.usd,
        rate_source=rate.source,
        token=token_contract(method, settings.chain(method.network), settings.token_overrides()),
        required_confirmations=settings.confirmations(method.network),
        status=IntentStatus.AWAITING_TRANSFER,
        expires_at=now + settings.intent_ttl,
        watch_until=now + settings.intent_ttl + settings.monitoring_window,
        created_at=now,
        updated_at=now,
    )
    tx.session.add(row)
    tx.emit(
        AddressWatched(
            network=row.network,
            address=row.address,
            payment_id=row.id,
            watch_until=row.watch_until,
            required_confirmations=row.required_confirmations,
            token=row.token,
        )
    )
    return row


def _allocate_address(tx: Tx, settings: PaymentsSettings, method: Method, intent_id: str) -> tuple[str, int | None]:
    if method.network == "solana":
        address = take_solana_address(tx.session, intent_id)
        if address is None:
            raise ServiceError(ErrorCode.METHOD_UNAVAILABLE, "SOL on solana is unavailable: address_pool_empty")
        return address, None
    index = take_index(tx.session, method.network)
    params = chain_params(method.network, settings.chain(method.network))
    derived = derive_deposit_address(method.network, settings.xpub(method.network), index, params)
    return derived.address, index
