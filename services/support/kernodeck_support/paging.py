"""Pages of a list: `limit` (1 to 200, 50 by default) and an opaque cursor naming the last item given."""

import base64
from datetime import datetime

from kernodeck_contracts.errors import ServiceError

DEFAULT_LIMIT = 50
MAX_LIMIT = 200

Position = tuple[datetime, str]  # the (created_at, id) of the last item of the page before


def check_limit(limit) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ServiceError.field("limit", f"limit must be from 1 to {MAX_LIMIT}")
    return limit


def encode_cursor(position: Position) -> str:
    at, item_id = position
    return base64.urlsafe_b64encode(f"{at.isoformat()}|{item_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor) -> Position | None:
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at, item_id = text.split("|", 1)
        moment = datetime.fromisoformat(at)
        if moment.tzinfo is None or not item_id:
            raise ValueError(cursor)
        return moment, item_id
    except (ValueError, TypeError, UnicodeDecodeError):
        raise ServiceError.field("cursor", "not a cursor this list gave") from None
