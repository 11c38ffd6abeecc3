"""Opening a payment intent (with the top-up it pays, for a top-up): method checks, locked rate, amount, a fresh
address, on a unit of work (the database's in the service, plain objects in tests)."""

import logging
from datetime import datetime
from typing import Protocol
from uuid import uuid4

from kernodeck_chains.derivation import derive_deposit_address
from kernodeck_chains.networks import chain_params
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import AddressWatched, Event
from kernodeck_contracts.statuses import PaymentStatus
from kernodeck_kit.units import Units
from kernodeck_payments.availability import RATE_UNAVAILABLE, MethodBoard
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.amounts import crypto_amount
from kernodeck_payments.domain.intents import PaymentIntent, PaymentRequest, Purpose, address_key, check_address_cap
from kernodeck_payments.domain.methods import Method, find_method, token_contract
from kernodeck_payments.domain.topups import Topup, check_topup_amount
from kernodeck_payments.tracking import instructions_created

log = logging.getLogger(__name__)


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

    def solana_pool_left(self) -> int:
        """How many addresses of the operator's pool are still unused."""

    def add_intent(self, intent: PaymentIntent) -> None: ...
    def add_topup(self, topup: Topup) -> None: ...
    def emit(self, event: Event) -> None: ...


def open_payment(
    units: Units[IntakeUnit], settings: PaymentsSettings, request: PaymentRequest, now: datetime
) -> PaymentIntent:
    """Record a complete intent for `request` or refuse: no instructions are ever half made.

    The same method asked again for the same order (extension) gives its open intent back, unchanged."""
    with units.transaction() as unit:
        return _open(unit, settings, request, now)


def open_topup(
    units: Units[IntakeUnit], settings: PaymentsSettings, account_id: str, cents: int, asset, network, now: datetime
) -> tuple[Topup, PaymentIntent]:
    """A top-up of `cents` (one of its sizes) and its intent in the method, recorded together or not at all."""
    topup = Topup(id=uuid4().hex, account_id=account_id, amount_usd_cents=check_topup_amount(cents), created_at=now)
    request = PaymentRequest(find_method(asset, network), Purpose.TOPUP, account_id, topup.id, topup.amount_usd_cents)
    with units.transaction() as unit:
        unit.add_topup(topup)
        return topup, _open(unit, settings, request, now)


def _open(unit: IntakeUnit, settings: PaymentsSettings, request: PaymentRequest, now: datetime) -> PaymentIntent:
    method = request.method
    open_now = unit.open_intents(request.account_id, now)
    same = same_open_intent(open_now, method, request.purpose, request.reference_id, now)
    if same is not None:
        return same
    _check_limits(open_now, settings, request.reference_id)
    window = settings.unfunded_addresses_window
    issued = unit.unfunded_issued_since(request.account_id, method.network, now - window)
    check_address_cap(issued, settings.unfunded_addresses_per_network, window, method.network, now)
    board = unit.board(now)
    reason = board.reason(method)
    if reason == RATE_UNAVAILABLE:
        raise ServiceError(
            ErrorCode.RATE_UNAVAILABLE, f"no valid {method.rate_symbol} exchange rate right now; try again shortly"
        )
    if reason is not None:
        raise ServiceError(ErrorCode.METHOD_UNAVAILABLE, f"{method.asset} on {method.network} is unavailable: {reason}")
    rate = board.rate(method)
    intent_id = uuid4().hex
    address, index = _allocate_address(unit, settings, method, intent_id)
    deadline = request.deadline or now + settings.intent_ttl
    intent = PaymentIntent(
        id=intent_id,
        purpose=request.purpose,
        account_id=request.account_id,
        reference_id=request.reference_id,
        order_id=request.order_id,
        asset=method.asset,
        network=method.network,
        address=address,
        address_key=address_key(method.network, address),
        derivation_index=index,
        amount=crypto_amount(request.usd_cents, rate.price, method),
        amount_usd_cents=request.usd_cents,
        rate=rate.usd,
        rate_source=rate.source,
        token=token_contract(method, settings.chain(method.network), settings.token_overrides()),
        required_confirmations=settings.confirmations(method.network),
        status=PaymentStatus.AWAITING_TRANSFER,
        expires_at=deadline,
        watch_until=deadline + settings.monitoring_window,
        settled_at=None,
        reported_at=None,
        created_at=now,
        updated_at=now,
    )
    unit.add_intent(intent)
    unit.emit(
        AddressWatched(
            network=intent.network,
            address=intent.address,
            payment_id=intent.id,
            watch_until=intent.watch_until,
            required_confirmations=intent.required_confirmations,
            token=intent.token,
        )
    )
    unit.emit(instructions_created(intent))
    return intent


def check_solana_pool(units: Units[IntakeUnit], settings: PaymentsSettings) -> int:
    """How many addresses the Solana pool (each given once) has left; a warning when it runs low."""
    with units.transaction() as unit:
        left = unit.solana_pool_left()
    if left < settings.solana_pool_low:
        log.warning("the Solana address pool is running low", extra={"unused": left})
    return left


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
