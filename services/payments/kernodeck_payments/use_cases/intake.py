"""Opening a payment intent: method checks, locked rate, amount, a fresh address, on a unit of work
(the database's in the service, plain objects in tests)."""

from datetime import datetime
from typing import Protocol
from uuid import uuid4

from sqlmodel import SQLModel

from kernodeck_chains.derivation import derive_deposit_address
from kernodeck_chains.networks import chain_params
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import AddressWatched, Event
from kernodeck_contracts.statuses import PaymentStatus
from kernodeck_kit.units import Units
from kernodeck_payments.availability import RATE_UNAVAILABLE, MethodBoard
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.amounts import crypto_amount
from kernodeck_payments.domain.intents import Purpose, address_key, check_address_cap
from kernodeck_payments.domain.methods import Method, token_contract
from kernodeck_payments.store.tables import PaymentIntent
from kernodeck_payments.tracking import instructions_created


class IntakeUnit(Protocol):
    def board(self, now: datetime) -> MethodBoard:
        """Everything the methods need right now (switches, rates, watchers, the Solana pool)."""

    def open_intents(self, account_id: str, now: datetime) -> list[PaymentIntent]:
        """The account's intents still open (store/intents.open_intents_of), oldest first."""

    def unfunded_issued_since(self, account_id: str, network: str, since: datetime) -> list[datetime]:
        """When the account's intents on `network` created since `since` whose address received nothing of the
        intent's own asset were created, oldest first (a foreign token's dust funds nothing)."""

    def take_index(self, network: str) -> int:
        """The network's next derivation index, never handed out twice."""

    def take_solana_address(self, intent_id: str) -> str | None:
        """An unused address of the operator's pool, now the intent's; None when the pool is empty."""

    def add(self, row: SQLModel) -> None: ...
    def emit(self, event: Event) -> None: ...


def open_payment(
    units: Units[IntakeUnit],
    settings: PaymentsSettings,
    method: Method,
    purpose: Purpose,
    account_id: str,
    reference_id: str,
    usd_cents: int,
    now: datetime,
    *also: SQLModel,
    order_id: str | None = None,
    deadline: datetime | None = None,
) -> PaymentIntent:
    """Record a complete intent (and `also`, the top-up it pays) or refuse: no instructions are ever half made.
    `order_id` is the order an extension's intent extends; `deadline` the intent's, when sooner than the TTL.

    The same method asked again for the same order (extension) gives its open intent back, unchanged."""
    with units.transaction() as unit:
        open_now = unit.open_intents(account_id, now)
        same = same_open_intent(open_now, method, purpose, reference_id, now)
        if same is not None:
            return same
        _check_limits(open_now, settings, reference_id)
        window = settings.unfunded_addresses_window
        issued = unit.unfunded_issued_since(account_id, method.network, now - window)
        check_address_cap(issued, settings.unfunded_addresses_per_network, window, method.network, now)
        board = unit.board(now)
        for row in also:
            unit.add(row)
        reason = board.reason(method)
        if reason == RATE_UNAVAILABLE:
            raise ServiceError(
                ErrorCode.RATE_UNAVAILABLE, f"no valid {method.rate_symbol} exchange rate right now; try again shortly"
            )
        if reason is not None:
            raise ServiceError(
                ErrorCode.METHOD_UNAVAILABLE, f"{method.asset} on {method.network} is unavailable: {reason}"
            )
        rate = board.rate(method)
        intent_id = uuid4().hex
        address, index = _allocate_address(unit, settings, method, intent_id)
        row = PaymentIntent(
            id=intent_id,
            purpose=purpose,
            account_id=account_id,
            reference_id=reference_id,
            order_id=order_id,
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
            status=PaymentStatus.AWAITING_TRANSFER,
            expires_at=deadline or now + settings.intent_ttl,
            watch_until=(deadline or now + settings.intent_ttl) + settings.monitoring_window,
            created_at=now,
            updated_at=now,
        )
        unit.add(row)
        unit.emit(
            AddressWatched(
                network=row.network,
                address=row.address,
                payment_id=row.id,
                watch_until=row.watch_until,
                required_confirmations=row.required_confirmations,
                token=row.token,
            )
        )
        unit.emit(instructions_created(row))
        return row


def same_open_intent(
    open_now: list[PaymentIntent], method: Method, purpose: Purpose, reference_id: str, now: datetime
) -> PaymentIntent | None:
    for intent in open_now:
        if (intent.purpose, intent.reference_id, intent.asset, intent.network) == (
            purpose,
            reference_id,
            method.asset,
            method.network,
        ) and intent.expires_at > now:
            return intent
    return None


def _check_limits(open_now: list[PaymentIntent], settings: PaymentsSettings, reference_id: str) -> None:
    if sum(intent.reference_id == reference_id for intent in open_now) >= settings.open_intents_per_order:
        raise ServiceError(
            ErrorCode.INVALID_STATE,
            f"this order has {settings.open_intents_per_order} open payments already: "
            "pay one of them or let one expire",
        )
    if len(open_now) >= settings.open_intents_per_account:
        raise ServiceError(
            ErrorCode.INVALID_STATE,
            f"this account has {settings.open_intents_per_account} open payments already: "
            "pay one of them or let one expire",
        )


def _allocate_address(
    unit: IntakeUnit, settings: PaymentsSettings, method: Method, intent_id: str
) -> tuple[str, int | None]:
    if method.network == "solana":
        address = unit.take_solana_address(intent_id)
        if address is None:
            raise ServiceError(ErrorCode.METHOD_UNAVAILABLE, "SOL on solana is unavailable: address_pool_empty")
        return address, None
    index = unit.take_index(method.network)
    params = chain_params(method.network, settings.chain(method.network))
    derived = derive_deposit_address(method.network, settings.xpub(method.network), index, params)
    return derived.address, index
