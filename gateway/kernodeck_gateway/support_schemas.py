"""Support's request bodies (unknown fields refused) and presenters. Texts are returned as the customer
typed them, as JSON strings: clients show them as text, never as HTML."""

from typing import Literal

from pydantic import StrictInt, StrictStr

from kernodeck_contracts.money import format_usd
from kernodeck_gateway.schemas import Body, present_payment

# What support checks itself (kinds of fields, sizes, times, secrets), passed on as given.
DETAIL_FIELDS = (
    "failed_at",
    "launch_command",
    "versions",
    "first_error",
    "minimal_example",
    "extra_days",
    "configuration",
    "due_by",
)


class NewSupportRequest(Body):
    order_id: StrictStr
    kind: Literal["incident", "extension", "question"]
    message: StrictStr
    failed_at: StrictStr | None = None  # RFC 3339
    launch_command: StrictStr | None = None
    versions: StrictStr | None = None
    first_error: StrictStr | None = None
    minimal_example: StrictStr | None = None
    extra_days: StrictInt | None = None  # 3, 7 or 30
    configuration: StrictStr | None = None
    due_by: StrictStr | None = None  # RFC 3339

    def details(self) -> dict:
        return {name: getattr(self, name) for name in DETAIL_FIELDS if getattr(self, name) is not None}


class NewSupportAnswer(Body):
    text: StrictStr


class ExtensionConfirmation(Body):
    note: StrictStr | None = None


class ExtensionRefusal(Body):
    reason: StrictStr


def present_extension(extension: dict, payments: list[dict]) -> dict:
    return {
        "id": extension["id"],
        "request_id": extension["request_id"],
        "extra_days": extension["extra_days"],
        "price_usd": format_usd(extension["price_usd_cents"]),
        "due_by": extension["due_by"],
        "status": extension["status"],
        "payments": [present_payment(p) for p in payments],
    }
