"""Request bodies (unknown fields refused) and the presenters of responses."""

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr

from kernodeck_contracts.money import format_usd


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OrderConfiguration(Body):
    model: StrictStr
    duration_days: StrictInt
    lots: StrictInt
    preparation: StrictStr


class NewAccount(Body):
    first_name: StrictStr
    last_name: StrictStr
    email: StrictStr
    password: StrictStr


class Credentials(Body):
    email: StrictStr
    password: StrictStr


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


def present_model(model: dict) -> dict:
    return {
        "id": model["id"],
        "name": model["name"],
        "vendor": model["vendor"],
        "backend": model["backend"],
        "memory_gb_per_gpu": model["memory_gb_per_gpu"],
        "gpus_per_lot": model["gpus_per_lot"],
        "lot_prices_usd": {days: format_usd(cents) for days, cents in model["lot_prices_cents"].items()},
        "available_lots": model["available_lots"],
    }


def present_order(order: dict) -> dict:
    return {
        "id": order["id"],
        "status": order["status"],
        "summary": present_quote(order["summary"]),
        "created_at": order["created_at"],
        "updated_at": order["updated_at"],
        "timeline": order["timeline"],
        "payments": order.get("payments", []),
        "rental": order.get("rental"),
        "access": order.get("access"),
    }
