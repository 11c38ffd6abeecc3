"""Support's request bodies (unknown fields refused) and presenters. Texts are returned as the customer
typed them, as JSON strings: clients show them as text, never as HTML."""

from typing import Literal

from pydantic import Field, StrictInt, StrictStr

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
    # The bounds support enforces, stated here for the OpenAPI document (support still checks every rule,
    # and the secrets: 422 secret_in_request).
    order_id: StrictStr | None = Field(None, description="the order it is about (an extension needs it)")
    topup_id: StrictStr | None = Field(None, description="or the top-up; with neither, it is about the account")
    kind: Literal["incident", "extension", "question"]
    message: StrictStr = Field(max_length=4000, description="plain text, never rendered as HTML")
    failed_at: StrictStr | None = Field(None, description="incident: when it failed, RFC 3339 with offset")
    launch_command: StrictStr | None = Field(None, max_length=1000, description="incident")
    versions: StrictStr | None = Field(None, max_length=1000, description="incident: interpreter, framework...")
    first_error: StrictStr | None = Field(None, max_length=8000, description="incident: the first full error")
    minimal_example: StrictStr | None = Field(None, max_length=8000, description="incident")
    extra_days: StrictInt | None = Field(None, json_schema_extra={"enum": [3, 7, 30]}, description="extension")
    configuration: StrictStr | None = Field(
        None, max_length=1000, description="extension: the wanted change of configuration (model, lots...)"
    )
    due_by: StrictStr | None = Field(None, description="extension (required): RFC 3339, within 60 days")

    def details(self) -> dict:
        return {name: getattr(self, name) for name in DETAIL_FIELDS if getattr(self, name) is not None}


class NewSupportAnswer(Body):
    text: StrictStr = Field(max_length=4000)


class ExtensionConfirmation(Body):
    note: StrictStr | None = None


class ConfigurationConfirmation(Body):
    """A change of configuration in the catalog's terms: it becomes a new order, priced by the catalog."""

    model: StrictStr = Field(description="a model id of the catalog")
    lots: StrictInt = Field(ge=1, le=10)
    duration_days: StrictInt = Field(json_schema_extra={"enum": [3, 7, 30]})
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
