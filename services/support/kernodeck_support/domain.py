"""Support rules: what a request may carry, how it is answered, how an extension moves. No I/O."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.statuses import OrderStatus
from kernodeck_contracts.timeline import TimelineCode
from kernodeck_support.leaks import secrets_in

KINDS = ("incident", "extension", "question")
EXTRA_DAYS = (3, 7, 30)
INCIDENT_FIELDS = ("failed_at", "launch_command", "versions", "first_error", "minimal_example")
EXTENSION_FIELDS = ("extra_days", "configuration", "due_by")
# Characters at most, per text field; the gateway's body limit bounds the whole request besides.
LIMITS = {
    "message": 4000,
    "launch_command": 1000,
    "versions": 1000,
    "first_error": 8000,
    "minimal_example": 8000,
    "configuration": 1000,
    "answer": 4000,
}
# A due date further ahead than this is a typing error, not a plan.
MAX_DUE_AHEAD = timedelta(days=60)
# When something failed may be given a little ahead of our clock (the customer's clock is not ours).
CLOCK_SKEW = timedelta(minutes=5)
# An extension lengthens a live rental: the order is ready and its end ahead. Unpaid, still being
# delivered, ended, cancelled or failed orders cannot be extended.
EXTENDABLE = (OrderStatus.READY,)
# Control characters other than tab and newlines: nothing a person types, and PostgreSQL refuses NUL.
_CONTROL = {chr(c) for c in range(32)} - {"\t", "\n", "\r"} | {"\x7f"}


class RequestStatus(StrEnum):
    OPEN = "open"
    ANSWERED = "answered"


class ExtensionStatus(StrEnum):
    CONFIRMED = "confirmed"  # priced by the catalog, payable until its due date
    PAID = "paid"  # provisioning moves the end
    APPLIED = "applied"  # the rental's end moved
    REFUNDED = "refunded"  # paid, but the rental could no longer take it: credited to the balance


# A confirmed extension moves only forward, along these arrows.
EXTENSION_MOVES = {
    ExtensionStatus.CONFIRMED: {ExtensionStatus.PAID, ExtensionStatus.REFUNDED},
    ExtensionStatus.PAID: {ExtensionStatus.APPLIED, ExtensionStatus.REFUNDED},
    ExtensionStatus.APPLIED: set(),
    ExtensionStatus.REFUNDED: set(),
}


@dataclass(frozen=True)
class Details:
    """What a request carries besides its message: the FAQ's incident fields, or the extension's wish."""

    failed_at: datetime | None = None
    launch_command: str | None = None
    versions: str | None = None
    first_error: str | None = None
    minimal_example: str | None = None
    extra_days: int | None = None
    configuration: str | None = None
    due_by: datetime | None = None


@dataclass(frozen=True)
class Answer:
    """An operator's words (`text`), and what support itself says with them (`code` and `params`, a timeline
    answer code: an extension confirmed or refused, a change of configuration confirmed)."""

    at: datetime
    author_id: str
    text: str
    code: TimelineCode | None = None
    params: dict = field(default_factory=dict)


@dataclass
class SupportRequest:
    """A customer's request about an order, a top-up, or (with neither) the account."""

    id: str
    account_id: str
    order_id: str | None
    kind: str
    message: str
    details: Details
    created_at: datetime
    status: RequestStatus = RequestStatus.OPEN
    answers: list[Answer] = field(default_factory=list)
    decision: str | None = None  # an extension request's: "confirmed" or "refused"
    updated_at: datetime | None = None
    topup_id: str | None = None


def request_key(request: SupportRequest) -> tuple:
    """Where a request stands in its lists (kernodeck_kit.paging)."""
    return request.created_at, request.id


@dataclass
class Extension:
    id: str
    request_id: str
    order_id: str
    account_id: str
    extra_days: int
    price_usd_cents: int
    due_by: datetime
    status: ExtensionStatus
    created_at: datetime
    updated_at: datetime
    payment_id: str | None = None  # the payment that paid it


def check_request(kind, message, fields: dict, now: datetime) -> tuple[str, Details]:
    """The request's message and details, or a refusal naming every broken rule at once (validation_error),
    then, on well-formed input, every field that looks like it holds a secret (secret_in_request)."""
    errors = []
    if kind not in KINDS:
        errors.append({"field": "kind", "message": "kind must be incident, extension or question"})
    allowed = {"incident": INCIDENT_FIELDS, "extension": EXTENSION_FIELDS}.get(kind, ())
    for name in fields:
        if name not in INCIDENT_FIELDS + EXTENSION_FIELDS:
            errors.append({"field": name, "message": "unknown field"})
        elif fields[name] is not None and name not in allowed:
            errors.append({"field": name, "message": f"not part of a request of kind {kind}"})
    texts = {"message": message, **{n: fields.get(n) for n in LIMITS if n in allowed}}
    for name, value in texts.items():
        problem = text_problem(value, LIMITS[name], required=name == "message")
        if problem:
            errors.append({"field": name, "message": problem})
    failed_at = _moment(fields, "failed_at", errors)
    if failed_at is not None and failed_at > now + CLOCK_SKEW:
        errors.append({"field": "failed_at", "message": "failed_at is in the future"})
    extra_days, due_by = fields.get("extra_days"), None
    if kind == "extension":
        if extra_days is not None and (not _is_int(extra_days) or extra_days not in EXTRA_DAYS):
            errors.append({"field": "extra_days", "message": "extra_days must be 3, 7 or 30"})
        if extra_days is None and not fields.get("configuration"):
            errors.append({"field": "extra_days", "message": "name the extra days (3, 7 or 30) or a configuration"})
        due_by = _moment(fields, "due_by", errors, required=True)
        if due_by is not None and not now < due_by <= now + MAX_DUE_AHEAD:
            errors.append({"field": "due_by", "message": "due_by must be in the future, within 60 days"})
    if errors:
        raise ServiceError(ErrorCode.VALIDATION_ERROR, "the support request is not valid", errors)
    refuse_secrets({name: value for name, value in texts.items() if isinstance(value, str)}, "request")
    details = Details(
        failed_at=failed_at,
        due_by=due_by,
        extra_days=extra_days,
        **{name: fields.get(name) for name in LIMITS if name in allowed},
    )
    return message, details


def check_subject(kind, order_id, topup_id) -> None:
    """What a request is about: an order, a top-up, or neither (the account); an extension needs its order."""
    errors = [
        {"field": name, "message": f"{name} must be an id"}
        for name, value in (("order_id", order_id), ("topup_id", topup_id))
        if value is not None and (not isinstance(value, str) or not value)
    ]
    if order_id is not None and topup_id is not None:
        errors.append({"field": "topup_id", "message": "a request is about an order or a top-up, not both"})
    if kind == "extension" and order_id is None:
        errors.append({"field": "order_id", "message": "an extension is asked for an order: name it"})
    if errors:
        raise ServiceError(ErrorCode.VALIDATION_ERROR, "the support request is not valid", errors)


def refuse_secrets(texts: dict[str, str], sent: str) -> None:
    """A secret_in_request refusal naming each of `texts` that looks like it holds a secret, never the text;
    `sent`: what they make up (a customer's "request", an operator's "answer")."""
    leaks = secrets_in(texts, sent)
    if leaks:
        raise ServiceError(
            ErrorCode.SECRET_IN_REQUEST,
            f"the {sent} seems to contain a secret (a password, key or token): support never needs one."
            f" Remove it and send the {sent} again; nothing was stored.",
            leaks,
        )


def text_problem(value, limit: int, required: bool = False) -> str | None:
    """Why `value` cannot be a text field of at most `limit` characters, or None."""
    if value is None:
        return "required" if required else None
    if not isinstance(value, str):
        return "must be text"
    if required and not value.strip():
        return "must not be blank"
    if len(value) > limit:
        return f"at most {limit} characters"
    if any(c in _CONTROL for c in value):
        return "contains control characters"
    return None


def check_extendable(order: dict, now: datetime) -> None:
    """An extension needs a live rental: a ready order before its end."""
    ends_at = (order.get("rental") or {}).get("ends_at")
    if order["status"] not in EXTENDABLE:
        raise ServiceError(ErrorCode.INVALID_STATE, f"an order that is {order['status']} cannot be extended")
    if ends_at is not None and datetime.fromisoformat(ends_at) <= now:
        raise ServiceError(ErrorCode.INVALID_STATE, "the rental is over: it cannot be extended")


def answer(
    request: SupportRequest,
    author_id: str,
    text,
    now: datetime,
    field: str = "text",
    code: TimelineCode | None = None,
    params: dict | None = None,
) -> Answer:
    """An answer: an operator's words, with what support says (`code`, `params`) when it decides; `field` names
    the words in a refusal (an answer's `text`, a refusal's `reason`, a confirmation's `note`, which may be left
    out): a secret is refused as in a request."""
    optional = code in (TimelineCode.EXTENSION_CONFIRMED, TimelineCode.CONFIGURATION_CONFIRMED)
    text = "" if optional and text is None else text
    problem = text_problem(text, LIMITS["answer"], required=not optional)
    if problem:
        raise ServiceError.field(field, problem)
    if text:
        refuse_secrets({field: text}, "answer")
    reply = Answer(at=now, author_id=author_id, text=text, code=code, params=params or {})
    request.answers.append(reply)
    request.status = RequestStatus.ANSWERED
    request.updated_at = now
    return reply


def decide(request: SupportRequest, decision: str, now: datetime, configuration: bool = False) -> None:
    """An operator's decision on an extension request, once, before its due date: its extra days confirmed, its
    change of configuration confirmed (`configuration`), or the request refused."""
    if request.kind != "extension":
        raise ServiceError(ErrorCode.INVALID_STATE, "only an extension request is confirmed or refused")
    if request.decision is not None:
        raise ServiceError(ErrorCode.INVALID_STATE, f"this extension was {request.decision} already")
    if decision == "confirmed" and not configuration and request.details.extra_days is None:
        raise ServiceError(ErrorCode.INVALID_STATE, "this request asks for no extra days: confirm its configuration")
    if decision == "confirmed" and configuration and not request.details.configuration:
        raise ServiceError(ErrorCode.INVALID_STATE, "this request asks for no change of configuration")
    if decision == "confirmed" and now > request.details.due_by:
        raise ServiceError(ErrorCode.INVALID_STATE, "the request is past its due date: it cannot be confirmed")
    request.decision = decision
    request.updated_at = now


def move_extension(extension: Extension, target: ExtensionStatus, now: datetime) -> None:
    if target not in EXTENSION_MOVES[extension.status]:
        raise ServiceError(ErrorCode.INVALID_STATE, f"a {extension.status} extension cannot become {target}")
    extension.status = target
    extension.updated_at = now


def payable_refusal(extension: Extension | None, order: dict, now: datetime) -> str | None:
    """Why a settled payment cannot pay this extension of `order` (as orders shows it), or None."""
    if extension is None:
        return "unknown_extension"
    if extension.status != ExtensionStatus.CONFIRMED:
        return f"extension_{extension.status}"
    if now > extension.due_by:
        return "past_due_date"
    try:
        check_extendable(order, now)
    except ServiceError:
        return f"order_{order['status']}" if order["status"] not in EXTENDABLE else "rental_over"
    return None


def _moment(fields: dict, name: str, errors: list, required: bool = False) -> datetime | None:
    value = fields.get(name)
    if value is None:
        if required:
            errors.append({"field": name, "message": "required"})
        return None
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        errors.append({"field": name, "message": "an RFC 3339 time with its offset, e.g. 2026-12-01T10:00:00Z"})
        return None
    return moment


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
