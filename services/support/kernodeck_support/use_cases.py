"""Support's use cases, on a unit of work (the database's in the service, plain objects in tests).

What support asks other services comes in as functions: `order_of(account_id, order_id)` is the order as
orders shows it to its owner (not_found for anyone else), `topup_of(account_id, topup_id)` likewise a top-up as
payments shows it, `price_of(order, extra_days)` the catalog's price in cents of the order's lots for that many
more days, `order_for(account_id, configuration, like)` a new order of `configuration` recorded by orders for the
account (priced by the catalog), delivered like the order `like`.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import (
    Event,
    ExtensionConfirmed,
    ExtensionPaid,
    ExtensionPaymentRefused,
    PaymentSettled,
    RentalExtended,
    RentalExtensionRefused,
    SupportRequestAnswered,
    SupportRequestOpened,
)
from kernodeck_contracts.money import format_usd
from kernodeck_contracts.timeline import TimelineCode
from kernodeck_kit.paging import Page
from kernodeck_kit.types import rfc3339
from kernodeck_kit.units import Units
from kernodeck_support.domain import (
    Answer,
    Extension,
    ExtensionStatus,
    RequestStatus,
    SupportRequest,
    answer,
    check_extendable,
    check_request,
    check_subject,
    decide,
    move_extension,
    payable_refusal,
)

OrderOf = Callable[[str, str], dict]
TopupOf = Callable[[str, str], dict]
PriceOf = Callable[[dict, int], int]
OrderFor = Callable[[str, "Configuration", dict], dict]


@dataclass(frozen=True)
class Configuration:
    """A change of configuration as an operator confirms it, in the catalog's terms."""

    model: str
    lots: int
    duration_days: int


class SupportUnit(Protocol):
    def add_request(self, request: SupportRequest) -> None: ...
    def get_request(self, request_id: str, lock: bool = False) -> SupportRequest | None: ...
    def requests_of(self, account_id: str, page: Page) -> list[SupportRequest]: ...
    def requests_by_status(self, status: RequestStatus, page: Page) -> list[SupportRequest]: ...

    def save_request(self, request: SupportRequest) -> None: ...
    def add_answer(self, request_id: str, reply: Answer) -> None: ...
    def add_extension(self, extension: Extension) -> None: ...
    def get_extension(self, extension_id: str, lock: bool = False) -> Extension | None: ...
    def extensions_of(self, order_ids: list[str]) -> list[Extension]: ...
    def save_extension(self, extension: Extension) -> None: ...
    def emit(self, event: Event) -> None: ...


def open_request(
    units: Units[SupportUnit],
    request_id: str,
    account_id: str,
    about: tuple,
    kind,
    message,
    fields: dict,
    now: datetime,
    order_of: OrderOf,
    topup_of: TopupOf,
) -> SupportRequest:
    """Record a customer's request about one of their orders, one of their top-ups (`about` is the pair of ids,
    either or neither given: neither is the account). Nothing is stored when any rule is broken: bad fields
    (validation_error), a secret (secret_in_request), another's order or top-up (not_found), an extension of an
    order that cannot be extended (invalid_state)."""
    order_id, topup_id = about
    message, details = check_request(kind, message, fields, now)
    check_subject(kind, order_id, topup_id)
    if order_id is not None:
        order = order_of(account_id, order_id)
        if kind == "extension":
            check_extendable(order, now)
    if topup_id is not None:
        topup_of(account_id, topup_id)
    request = SupportRequest(
        id=request_id,
        account_id=account_id,
        order_id=order_id,
        topup_id=topup_id,
        kind=kind,
        message=message,
        details=details,
        created_at=now,
        updated_at=now,
    )
    with units.transaction() as unit:
        unit.add_request(request)
        unit.emit(
            SupportRequestOpened(
                request_id=request_id, order_id=order_id, topup_id=topup_id, account_id=account_id, kind=kind
            )
        )
    return request


def customer_requests(units: Units[SupportUnit], account_id: str, page: Page) -> list[SupportRequest]:
    """One page of the account's requests with their answers, newest first (one more when there is more)."""
    with units.transaction() as unit:
        return unit.requests_of(account_id, page)


def requests_in(units: Units[SupportUnit], status, page: Page) -> list[SupportRequest]:
    """One page of the operators' queue: the requests in `status` (open ones by default), oldest first
    (`page` asked oldest_first; one more when there is more)."""
    try:
        wanted = RequestStatus(status or RequestStatus.OPEN)
    except ValueError:
        raise ServiceError.field("status", "status must be open or answered") from None
    with units.transaction() as unit:
        return unit.requests_by_status(wanted, page)


def get_request(units: Units[SupportUnit], request_id) -> SupportRequest:
    with units.transaction() as unit:
        return _found(unit.get_request(request_id) if isinstance(request_id, str) else None)


def answer_request(units: Units[SupportUnit], operator_id: str, request_id, text, now: datetime) -> SupportRequest:
    """An operator's answer: the customer sees it under the request and in the order's timeline."""
    with units.transaction() as unit:
        request = _found(unit.get_request(request_id, lock=True) if isinstance(request_id, str) else None)
        _reply(unit, request, operator_id, text, now)
        return request


def confirm_extension(
    units: Units[SupportUnit],
    operator_id: str,
    request_id,
    note,
    now: datetime,
    extension_id: str,
    order_of: OrderOf,
    price_of: PriceOf,
) -> Extension:
    """Confirm an extension request: priced from the catalog (the lot price for the added days times lots),
    payable like an order until the request's due date. Refused for an order that is over or past due."""
    request = get_request(units, request_id)
    decide(request, "confirmed", now)  # checked before asking anyone; again below, under the lock
    order = order_of(request.account_id, request.order_id)
    check_extendable(order, now)
    days = request.details.extra_days
    price = price_of(order, days)
    with units.transaction() as unit:
        request = unit.get_request(request.id, lock=True)
        decide(request, "confirmed", now)
        extension = Extension(
            id=extension_id,
            request_id=request.id,
            order_id=request.order_id,
            account_id=request.account_id,
            extra_days=days,
            price_usd_cents=price,
            due_by=request.details.due_by,
            status=ExtensionStatus.CONFIRMED,
            created_at=now,
            updated_at=now,
        )
        unit.add_extension(extension)
        unit.emit(
            ExtensionConfirmed(
                extension_id=extension.id,
                order_id=extension.order_id,
                account_id=extension.account_id,
                extra_days=days,
                price_usd_cents=price,
                due_by=extension.due_by,
            )
        )
        terms = {"days": days, "price_usd": format_usd(price), "due_by": rfc3339(extension.due_by)}
        _reply(unit, request, operator_id, note, now, "note", TimelineCode.EXTENSION_CONFIRMED, terms)
        return extension


def confirm_configuration(
    units: Units[SupportUnit],
    operator_id: str,
    request_id,
    configuration: Configuration,
    note,
    now: datetime,
    order_of: OrderOf,
    order_for: OrderFor,
) -> SupportRequest:
    """Confirm an extension request's change of configuration: a rental's machine is not rebuilt while it runs,
    so the change is a new machine, a new order of `configuration` at the catalog's price (recorded by orders for
    the customer, with the order's SSH key and preparation), which the customer pays and receives like any order;
    the current machine runs until its own end. Refused for an order that is over or past the request's due
    date, or, by orders, for a configuration the catalog refuses or cannot deliver now."""
    request = get_request(units, request_id)
    decide(request, "confirmed", now, configuration=True)  # checked before asking anyone; again under the lock
    order = order_of(request.account_id, request.order_id)
    check_extendable(order, now)
    created = order_for(request.account_id, configuration, order)
    summary = created["summary"]
    terms = {
        "new_order_id": created["id"],
        "lots": summary["lots"],
        "model_name": summary["model_name"],
        "days": summary["duration_days"],
        "total_usd": format_usd(summary["total_usd_cents"]),
    }
    with units.transaction() as unit:
        request = unit.get_request(request.id, lock=True)
        decide(request, "confirmed", now, configuration=True)
        _reply(unit, request, operator_id, note, now, "note", TimelineCode.CONFIGURATION_CONFIRMED, terms)
        return request


def refuse_extension(units: Units[SupportUnit], operator_id: str, request_id, reason, now: datetime) -> SupportRequest:
    """Refuse an extension request; the reason is the answer the customer reads."""
    with units.transaction() as unit:
        request = _found(unit.get_request(request_id, lock=True) if isinstance(request_id, str) else None)
        decide(request, "refused", now)
        _reply(unit, request, operator_id, reason, now, "reason", TimelineCode.EXTENSION_REFUSED)
        return request


def order_extensions(units: Units[SupportUnit], account_id: str, order_ids: list[str]) -> list[Extension]:
    """The confirmed extensions of the account's orders among `order_ids`."""
    with units.transaction() as unit:
        return [e for e in unit.extensions_of(order_ids) if e.account_id == account_id]


def extension_payment_settled(
    units: Units[SupportUnit], event: PaymentSettled, now: datetime, order_of: OrderOf
) -> bool:
    """A settled payment for an extension: paid (provisioning moves the end) when the extension is still
    confirmed, within its due date, for a live rental; else the money goes back to the balance. True when paid."""
    try:
        order = order_of(event.account_id, event.order_id)
    except ServiceError as missing:
        if missing.code != ErrorCode.NOT_FOUND:
            raise
        order = {"status": "unknown", "rental": None}
    with units.consume(event) as unit:
        if unit is None:
            return False
        extension = unit.get_extension(event.extension_id, lock=True)
        if extension is not None and extension.account_id != event.account_id:
            extension = None
        refusal = payable_refusal(extension, order, now)
        if refusal is not None:
            if extension is not None and extension.status == ExtensionStatus.CONFIRMED:
                move_extension(extension, ExtensionStatus.REFUNDED, now)  # its due date or its rental is over
                unit.save_extension(extension)
            unit.emit(_refused(event.extension_id, event, event.payment_id, event.amount_usd_cents, refusal))
            return False
        move_extension(extension, ExtensionStatus.PAID, now)
        extension.payment_id = event.payment_id
        unit.save_extension(extension)
        unit.emit(
            ExtensionPaid(
                extension_id=extension.id,
                order_id=extension.order_id,
                account_id=extension.account_id,
                extra_days=extension.extra_days,
            )
        )
        return True


def extension_applied(units: Units[SupportUnit], event: RentalExtended, now: datetime) -> None:
    """Provisioning moved the rental's end."""
    with units.consume(event) as unit:
        extension = unit.get_extension(event.extension_id, lock=True) if unit is not None else None
        if extension is not None and extension.status == ExtensionStatus.PAID:
            move_extension(extension, ExtensionStatus.APPLIED, now)
            unit.save_extension(extension)


def extension_not_applied(units: Units[SupportUnit], event: RentalExtensionRefused, now: datetime) -> None:
    """The rental was over when the paid extension reached it: what was paid goes back to the balance."""
    with units.consume(event) as unit:
        extension = unit.get_extension(event.extension_id, lock=True) if unit is not None else None
        if extension is None or extension.status != ExtensionStatus.PAID:
            return
        move_extension(extension, ExtensionStatus.REFUNDED, now)
        unit.save_extension(extension)
        reason = f"rental_{event.reason}"
        unit.emit(_refused(extension.id, extension, extension.payment_id, extension.price_usd_cents, reason))


def _refused(extension_id: str, of, payment_id: str, cents: int, reason: str) -> ExtensionPaymentRefused:
    """Give `cents` paid by `payment_id` back to the balance; `of` names the order and account."""
    return ExtensionPaymentRefused(
        extension_id=extension_id,
        order_id=of.order_id,
        account_id=of.account_id,
        payment_id=payment_id,
        amount_usd_cents=cents,
        reason=reason,
    )


def _reply(
    unit: SupportUnit,
    request: SupportRequest,
    operator_id: str,
    text,
    now: datetime,
    field="text",
    code: TimelineCode | None = None,
    params: dict | None = None,
) -> None:
    reply = answer(request, operator_id, text, now, field, code, params)
    unit.add_answer(request.id, reply)
    unit.save_request(request)
    unit.emit(
        SupportRequestAnswered(
            request_id=request.id,
            order_id=request.order_id,
            topup_id=request.topup_id,
            account_id=request.account_id,
            kind=request.kind,
            answer=reply.text,
            code=reply.code,
            params=reply.params,
        )
    )


def _found(request: SupportRequest | None) -> SupportRequest:
    if request is None:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such support request")
    return request
