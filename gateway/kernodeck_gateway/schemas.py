"""Request bodies (unknown fields refused) and the presenters of responses."""

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    WithJsonSchema,
)

from kernodeck_contracts.money import format_usd, parse_usd
from kernodeck_contracts.rpc import ListedModel


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


# The bounds the services enforce, stated here so that the OpenAPI document carries them (the services
# still check every rule: they are the authority, and other callers than the gateway reach them).
SshPublicKey = Annotated[StrictStr, Field(min_length=1, max_length=16_384, description="OpenSSH format")]


class OrderConfiguration(Body):
    model: StrictStr = Field(description="a model id of the catalog")
    duration_days: StrictInt = Field(json_schema_extra={"enum": [3, 7, 30]})
    lots: StrictInt = Field(ge=1, le=10)
    preparation: StrictStr = Field(description="a preparation id of the catalog")


class NewOrder(OrderConfiguration):
    # Checked by orders (an OpenSSH public key; a bounded description, only with `custom`).
    ssh_public_key: SshPublicKey | None = None
    preparation_note: StrictStr | None = Field(None, min_length=1, max_length=2000, description="only with `custom`")


class SshKey(Body):
    ssh_public_key: SshPublicKey


class NewNode(Body):
    host: StrictStr
    port: StrictInt = 22
    host_key: StrictStr
    model: StrictStr
    gpu_count: StrictInt
    note: StrictStr = ""


class NodeStateChange(Body):
    state: Literal["available", "draining", "maintenance", "retired"]
    note: StrictStr = ""


Name = Annotated[StrictStr, Field(min_length=1, max_length=100)]


class NewAccount(Body):
    first_name: Name
    last_name: Name
    email: StrictStr = Field(min_length=3, max_length=254)
    password: StrictStr = Field(min_length=15, max_length=128, description="15 to 128 characters")


class Credentials(Body):
    email: StrictStr
    password: StrictStr


# A USD decimal string in the request, integer cents once validated; the
# OpenAPI schema still shows the string.
UsdCents = Annotated[StrictStr, AfterValidator(parse_usd)]


class PaymentMethodChoice(Body):
    asset: StrictStr
    network: StrictStr


# Payments refuses any amount but these four; the gateway reads any USD text.
TOPUP_AMOUNTS = WithJsonSchema({"type": "string", "pattern": r"^(100|500|2000|10000)(\.0{1,2})?$"})


class NewTopup(PaymentMethodChoice):
    amount_usd: Annotated[UsdCents, TOPUP_AMOUNTS]


class ReviewResolution(Body):
    decision: Literal["credit_to_balance", "refunded_off_system", "dismissed"]
    amount_usd: UsdCents | None = None
    note: StrictStr


class MethodSwitch(Body):
    enabled: StrictBool


def present_account(account: dict) -> dict:
    return {k: account[k] for k in ("id", "first_name", "last_name", "email", "created_at")}


def present_quote(quote: dict) -> dict:
    return {
        "model": quote["model"],
        "model_name": quote["model_name"],
        "backend": quote["backend"],
        "duration_days": quote["duration_days"],
        "lots": quote["lots"],
        "gpus_per_lot": quote["gpus_per_lot"],
        "total_gpus": quote["total_gpus"],
        "preparation": quote["preparation"],
        "lot_price_usd": format_usd(quote["lot_price_usd_cents"]),
        "total_usd": format_usd(quote["total_usd_cents"]),
        **({"available": quote["available"]} if "available" in quote else {}),
    }


def present_model(model: ListedModel) -> dict:
    return {
        "id": model.id,
        "name": model.name,
        "vendor": model.vendor,
        "backend": model.backend,
        "memory_gb_per_gpu": model.memory_gb_per_gpu,
        "gpus_per_lot": model.gpus_per_lot,
        "lot_prices_usd": {days: format_usd(cents) for days, cents in model.lot_prices_cents.items()},
        "available_lots": model.available_lots,
        "held_lots": model.held_lots,
    }


def present_order(
    order: dict, payments: list[dict], access: dict | None = None, extensions: list[dict] | None = None
) -> dict:
    return {
        "id": order["id"],
        "status": order["status"],
        "summary": present_quote(order["summary"]),
        "created_at": order["created_at"],
        "updated_at": order["updated_at"],
        "timeline": order["timeline"],
        "payments": [present_payment(p) for p in payments],
        "preparation_note": order.get("preparation_note"),
        "rental": order.get("rental"),
        "access": access,
        "extensions": extensions or [],  # confirmed by support, each with its payments
    }


def format_signed_usd(cents: int) -> str:
    """-10000 -> "-100.00"; credits have no sign."""
    return f"-{format_usd(-cents)}" if cents < 0 else format_usd(cents)


def present_method(method: dict) -> dict:
    return {k: method[k] for k in ("asset", "network", "available", "reason")}


NO_OUTCOME = {"credits": [], "reviews": []}


def present_payment(payment: dict) -> dict:
    """Amounts come from payments already as exact decimal text in whole units; what the payment brought to the
    balance as `outcome` (kernodeck_gateway.outcomes), none for a payment just opened."""
    reference = f"{payment['purpose']}_id"  # order_id, topup_id or extension_id
    outcome = payment.get("outcome", NO_OUTCOME)
    return {
        "id": payment["id"],
        "purpose": payment["purpose"],
        reference: payment[reference],
        "asset": payment["asset"],
        "network": payment["network"],
        "address": payment["address"],
        "amount": payment["amount"],
        "amount_base_units": str(payment["amount_base_units"]),
        "amount_usd": format_usd(payment["amount_usd_cents"]),
        "rate": payment["rate"],
        "uri": payment["uri"],
        "created_at": payment["created_at"],
        "expires_at": payment["expires_at"],
        "status": payment["status"],
        "reported_at": payment["reported_at"],
        "received": {
            "amount": payment["received_amount"],
            "confirmed_amount": payment["confirmed_amount"],
        },
        "transfers": [
            {
                "txid": transfer["txid"],
                "amount": transfer["amount"],
                "confirmations": transfer["confirmations"],
                "required_confirmations": payment["required_confirmations"],
                "status": transfer["state"],
            }
            for transfer in payment["transfers"]
        ],
        "credits": [
            {"at": c["at"], "amount_usd": format_usd(c["amount_usd_cents"]), "reason": c["reason"]}
            for c in outcome["credits"]
        ],
        "checks": outcome["reviews"],
    }


def present_topup(topup: dict) -> dict:
    payment = present_payment(topup["payment"])
    return {
        "id": topup["id"],
        "amount_usd": format_usd(topup["amount_usd_cents"]),
        "status": topup["status"],
        "created_at": topup["created_at"],
        "payment": payment,
        "payments": [payment],
    }


def present_balance(balance: dict) -> dict:
    return {
        "available_usd": format_usd(balance["available_usd_cents"]),
        "pending_usd": format_usd(balance["pending_usd_cents"]),
    }


def present_ledger_entry(entry: dict) -> dict:
    return {
        "at": entry["at"],
        "amount_usd": format_signed_usd(entry["amount_usd_cents"]),
        "reason": entry["reason"],
        "ref": entry["ref"],
    }


def present_review(review: dict) -> dict:
    cents = review["amount_usd_cents"]
    return {
        "id": review["id"],
        "reason": review["reason"],
        "status": review["status"],
        "payment_id": review["payment_id"],
        "account_id": review["account_id"],
        "transfer_key": review["transfer_key"],
        "decision": review["decision"],
        "amount_usd": None if cents is None else format_usd(cents),
        "note": review["note"],
        "created_at": review["created_at"],
        "resolved_at": review["resolved_at"],
        "resolved_by": review["resolved_by"],
        "audit": review["audit"],
    }
