"""HTTP: the Bot API at /bot<token>/<method> (GET or POST: query string, form or JSON), and /double/* to play a user.

python-telegram-bot posts form fields whose values are JSON when they are
not plain strings (lists, objects, numbers), as Telegram accepts them.
"""

import contextlib
import json
import time
from urllib.parse import parse_qs, urlsplit

from infra.devnet.served import JsonHandler

from .bot_api import ApiError, BotApi

JSON_FIELDS = {"allowed_updates", "commands", "reply_markup", "link_preview_options", "entities", "scope"}


class Handler(JsonHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as api.telegram.org: a bot reuses its connections

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def _route(self) -> None:
        api: BotApi = self.server.app
        if api.unreachable:  # a connection kept alive from before the outage: dropped, unanswered
            self.close_connection = True
            return
        url = urlsplit(self.path)
        params = {**_form(url.query), **self._body()}
        head, _, name = url.path.strip("/").partition("/")
        if head == "double":
            status, body = self._control(api, name, params)
        elif head.startswith("bot") and head[3:] == api.token:
            try:
                result, hold_s = api.call(name.lower(), params)
                time.sleep(hold_s)
                status, body = 200, {"ok": True, "result": result}
            except ApiError as error:
                status, body = error.status, error.body()
        elif head.startswith("bot"):
            status, body = 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        else:
            status, body = 404, {"ok": False, "error_code": 404, "description": "Not Found"}
        # The bot may have given up waiting (a stop, a timeout): what it sent stays accepted.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.reply_json(status, body)

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode() if length else ""
        if not raw:
            return {}
        if self.headers.get("Content-Type", "").startswith("application/json"):
            return json.loads(raw)
        return _form(raw)

    def _control(self, api: BotApi, name: str, params: dict) -> tuple[int, object]:
        """/double/say {chat_id, text, language_code?}; /double/messages?chat_id=; /double/block {chat_id};
        /double/outage {down}; /double/rate_limit {count, retry_after}."""
        if name == "say":
            return 200, {
                "update_id": api.user_says(int(params["chat_id"]), params["text"], params.get("language_code", "en"))
            }
        if name == "messages":
            chat_id = int(params["chat_id"]) if "chat_id" in params else None
            return 200, [
                {"message_id": m.message_id, "chat_id": m.chat_id, "text": m.text} for m in api.messages(chat_id)
            ]
        if name == "block":
            api.block(int(params["chat_id"]))
        elif name == "outage":
            api.set_down(params.get("down") in (True, "true", "1"))
        elif name == "rate_limit":
            api.rate_limit(int(params["count"]), int(params.get("retry_after", 1)))
        else:
            return 404, {"error": f"no control endpoint {name}"}
        return 200, {}


def _form(text: str) -> dict:
    fields = {key: values[-1] for key, values in parse_qs(text, keep_blank_values=True).items()}
    return {key: json.loads(value) if key in JSON_FIELDS else value for key, value in fields.items()}
