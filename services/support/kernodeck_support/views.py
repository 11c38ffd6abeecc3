"""Support's answers over RPC: JSON-friendly, times in RFC 3339 UTC, money in integer cents."""

from kernodeck_kit.rows import values_of
from kernodeck_kit.types import rfc3339
from kernodeck_support.domain import Details, Extension, SupportRequest


def request_view(request: SupportRequest, operator: bool = False) -> dict:
    """A request with its answers; the authors' ids only for operators."""
    details = {
        name: rfc3339(value) if name in ("failed_at", "due_by") else value
        for name, value in values_of(request.details, Details).items()
    }
    return {
        "id": request.id,
        "order_id": request.order_id,
        "topup_id": request.topup_id,
        "kind": request.kind,
        "status": request.status.value,
        "message": request.message,
        **details,
        "decision": request.decision,
        "created_at": rfc3339(request.created_at),
        "updated_at": rfc3339(request.updated_at),
        "answers": [
            {
                "at": rfc3339(a.at),
                "text": a.text,
                "code": a.code,
                "params": a.params,
                **({"author_id": a.author_id} if operator else {}),
            }
            for a in request.answers
        ],
        **({"account_id": request.account_id} if operator else {}),
    }


def extension_view(extension: Extension) -> dict:
    return {
        "id": extension.id,
        "request_id": extension.request_id,
        "order_id": extension.order_id,
        "extra_days": extension.extra_days,
        "price_usd_cents": extension.price_usd_cents,
        "due_by": rfc3339(extension.due_by),
        "status": extension.status.value,
        "created_at": rfc3339(extension.created_at),
    }
