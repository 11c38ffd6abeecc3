"""Stable error codes and the one exception type that crosses the RPC boundary.

A service raises `ServiceError`; nameko serialises its args, and the gateway
turns them back into a problem+json response whose status comes from the code.
"""

from enum import StrEnum


class ErrorCode(StrEnum):
    VALIDATION_ERROR = "validation_error"
    EMAIL_TAKEN = "email_taken"
    INVALID_CREDENTIALS = "invalid_credentials"
    UNAUTHENTICATED = "unauthenticated"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    RATE_UNAVAILABLE = "rate_unavailable"
    METHOD_UNAVAILABLE = "method_unavailable"
    INSUFFICIENT_BALANCE = "insufficient_balance"
    OUT_OF_CAPACITY = "out_of_capacity"
    INVALID_STATE = "invalid_state"
    ALREADY_EXISTS = "already_exists"
    TOO_MANY_REQUESTS = "too_many_requests"
    SERVICE_UNAVAILABLE = "service_unavailable"
    SECRET_IN_REQUEST = "secret_in_request"
    SSH_KEY_REQUIRED = "ssh_key_required"
    HOLD_LIMIT_REACHED = "hold_limit_reached"  # the account's unpaid orders hold as many GPUs as it may
    UNPAID_ORDERS_LIMIT = "unpaid_orders_limit"  # the account has as many unpaid orders open as it may
    HOLDS_COOLING_OFF = "holds_cooling_off"  # too many of the account's intents expired unpaid lately


HTTP_STATUS = {
    ErrorCode.VALIDATION_ERROR: 422,
    ErrorCode.EMAIL_TAKEN: 409,
    ErrorCode.INVALID_CREDENTIALS: 401,
    ErrorCode.UNAUTHENTICATED: 401,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.RATE_UNAVAILABLE: 503,
    ErrorCode.METHOD_UNAVAILABLE: 409,
    ErrorCode.INSUFFICIENT_BALANCE: 409,
    ErrorCode.OUT_OF_CAPACITY: 409,
    ErrorCode.INVALID_STATE: 409,
    ErrorCode.ALREADY_EXISTS: 409,
    ErrorCode.TOO_MANY_REQUESTS: 429,
    ErrorCode.SERVICE_UNAVAILABLE: 503,
    ErrorCode.SECRET_IN_REQUEST: 422,
    ErrorCode.SSH_KEY_REQUIRED: 422,
    ErrorCode.HOLD_LIMIT_REACHED: 409,
    ErrorCode.UNPAID_ORDERS_LIMIT: 409,
    ErrorCode.HOLDS_COOLING_OFF: 429,
}


class ServiceError(Exception):
    """A refusal a caller can act on.

    `errors` lists field-level problems as {"field", "message"} dicts;
    `retry_after` (seconds) accompanies TOO_MANY_REQUESTS.
    """

    def __init__(
        self,
        code: str,
        detail: str,
        errors: list[dict] | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(str(code), detail, errors or [], retry_after)
        self.code = ErrorCode(code)
        self.detail = detail
        self.errors = errors or []
        self.retry_after = retry_after

    @classmethod
    def field(cls, field: str, message: str) -> "ServiceError":
        return cls(ErrorCode.VALIDATION_ERROR, message, [{"field": field, "message": message}])

    def __str__(self) -> str:
        return f"{self.code}: {self.detail}"


class EventTooEarly(Exception):
    """An event came before one it depends on: its consumer retries it for as long as it takes, never counting
    it as a failure of the event (which would set it aside as a dead letter)."""
