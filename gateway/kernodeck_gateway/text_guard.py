"""Text nothing downstream can keep (kernodeck_contracts.text: NUL, lone UTF-16 surrogates), anywhere in a
request's path, query or JSON body, keys included. Refused with 422 before any route sees it, where it would
otherwise end as a 500. Every service's RPC refuses it too (kernodeck_kit.transport.rpc): this answers it sooner."""

import json
from email.message import Message

from fastapi import Request

from kernodeck_contracts.text import printable, unstorable, unstorable_fields
from kernodeck_gateway.problems import Problem

# In a UTF-8 body, NUL and lone surrogates can only come from a NUL byte, a \u escape or a surrogate's own
# lead byte 0xED (json.loads decodes those with surrogatepass); UTF-16 and UTF-32 bodies hold NUL bytes.
# A body with none of the three has nothing to refuse, and is left unparsed here (the route parses it).
_SUSPECT = (b"\x00", b"\\u", b"\xed")


def is_json(content_type: str) -> bool:
    """Whether FastAPI reads a body of this media type as JSON: application/json or application/*+json, in
    any case and with any parameters (it parses the header as email.message does)."""
    message = Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


async def _json_body(request: Request):
    if not is_json(request.headers.get("content-type", "")):
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
    fields = [name for name, value in request.path_params.items() if unstorable(str(value))]
    for name, value in request.query_params.multi_items():
        if unstorable(name) or unstorable(value):
            fields.append(printable(name))
    fields += unstorable_fields(await _json_body(request))
    if fields:
        message = "must not contain NUL or lone surrogates"
        raise Problem(
            422,
            "validation_error",
            "the request contains characters that cannot be stored",
            [{"field": field, "message": message} for field in fields],
        )
