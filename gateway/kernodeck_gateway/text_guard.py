"""Text nothing downstream can keep: a lone UTF-16 surrogate (JSON's "\\ud800", which no UTF-8 spells)
or NUL (PostgreSQL stores none), anywhere in a request's path, query or JSON body, keys included.
Refused with 422 before any route sees it, where it would otherwise end as a 500."""

import json

from fastapi import Request

from kernodeck_gateway.problems import Problem


def _unstorable(text: str) -> bool:
    return any(character == "\x00" or "\ud800" <= character <= "\udfff" for character in text)


def _printable(name: str) -> str:
    """`name` as the error can show it: unstorable characters escaped."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def _json_problems(value, path: str) -> list[str]:
    if isinstance(value, str):
        return [path] if _unstorable(value) else []
    if isinstance(value, list):
        return [field for n, item in enumerate(value) for field in _json_problems(item, f"{path}.{n}")]
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            field = f"{path}.{_printable(key)}" if path else _printable(key)
            found += [field] if _unstorable(key) else _json_problems(item, field)
        return found
    return []


# In a UTF-8 body, NUL and lone surrogates can only come from a NUL byte, a \u escape or a surrogate's own
# lead byte 0xED (json.loads decodes those with surrogatepass); UTF-16 and UTF-32 bodies hold NUL bytes.
# A body with none of the three has nothing to refuse, and is left unparsed here (the route parses it).
_SUSPECT = (b"\x00", b"\\u", b"\xed")


async def _json_body(request: Request):
    if "json" not in request.headers.get("content-type", ""):
        return None
    body = await request.body()
    if not any(mark in body for mark in _SUSPECT):
        return None
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None  # the route's own parsing answers 400


async def refuse_unstorable_text(request: Request) -> None:
    """An application-wide dependency: runs before each route's own validation."""
    fields = [name for name, value in request.path_params.items() if _unstorable(str(value))]
    for name, value in request.query_params.multi_items():
        if _unstorable(name) or _unstorable(value):
            fields.append(_printable(name))
    fields += _json_problems(await _json_body(request), "")
    if fields:
        message = "must not contain NUL or lone surrogates"
        raise Problem(
            422,
            "validation_error",
            "the request contains characters that cannot be stored",
            [{"field": field, "message": message} for field in fields],
        )
