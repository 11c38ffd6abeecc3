"""Telegram through the gateway: link a chat in one tap, receive order news in its language, follow each link a
message contains to the page it names, unlink.

The stack's notify talks to the Bot API double (`stack.telegram`); a chat is
played by writing to the bot there, as a customer does in Telegram.
"""

import itertools
import re
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from infra.local.stack import ROOT
from kernodeck_notify.templates import text
from tests.e2e.conftest import assert_problem

ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
CHAT_IDS = itertools.count(880001)
LINK = re.compile(r"https?://\S+")
# The app's pages, as web/src/main.tsx routes them by the hash (/#/orders/:id...).
ROUTES = re.findall(r'pattern: "([^"]+)"', (ROOT / "web" / "src" / "main.tsx").read_text())


@pytest.fixture
def telegram(stack):
    return stack.telegram.api


def link(client, customer, **request) -> str:
    response = client.post(
        "/api/v1/me/telegram-link", headers={**customer["headers"], **request.pop("headers", {})}, **request
    )
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"url"}
    return response.json()["url"]


def start(telegram, url: str, language_code: str = "en") -> tuple[int, str]:
    """A new chat opens the deep link (Telegram sends /start <token>); returns the chat and the bot's answer."""
    chat_id = next(CHAT_IDS)
    (token,) = parse_qs(urlsplit(url).query)["start"]
    telegram.user_says(chat_id, f"/start {token}", language_code)
    assert telegram.wait_for(lambda: telegram.messages(chat_id))
    return chat_id, telegram.messages(chat_id)[-1].text


def says(telegram, chat_id: int, text: str) -> str:
    answered = len(telegram.messages(chat_id)) + 1
    telegram.user_says(chat_id, text)
    assert telegram.wait_for(lambda: len(telegram.messages(chat_id)) >= answered)
    return telegram.messages(chat_id)[-1].text


def test_link_two_chats_receive_an_order_then_unlink_from_the_account_page(stack, client, customer, telegram):
    url = link(client, customer, json={"language": "vi"})
    assert urlsplit(url)[:3] == ("https", "t.me", f"/{stack.telegram.username}")
    first, greeting = start(telegram, url)
    assert greeting == text("vi", "linked")
    second, greeting = start(telegram, link(client, customer, headers={"Accept-Language": "id-ID,id;q=0.9,en;q=0.5"}))
    assert greeting == text("id", "linked")

    order = client.post("/api/v1/orders", json=ORDER, headers=customer["headers"]).json()
    page = f"{stack.url}/#/orders/{order['id']}"
    for chat, opening in ((first, "Đơn hàng"), (second, "Pesanan")):
        assert telegram.wait_for(lambda chat=chat: page in telegram.messages(chat)[-1].text)
        news = telegram.messages(chat)[-1].text
        assert news.startswith(f"{opening} {order['id']} ")
    assert f"{order['id']}: Chờ thanh toán\n{page}" in says(telegram, first, "/status")

    assert client.delete("/api/v1/me/telegram-link", headers=customer["headers"]).status_code == 204
    for chat, language in ((first, "vi"), (second, "id")):
        assert telegram.wait_for(
            lambda chat=chat, language=language: (
                telegram.messages(chat)[-1].text == text(language, "unlinked_by_account")
            )
        )
    sent = len(telegram.messages())
    client.post("/api/v1/orders", json=ORDER, headers=customer["headers"])
    assert says(telegram, first, "/status") == text("en", "not_linked")  # its Telegram language now
    assert len(telegram.messages()) == sent + 1  # the answer to /status, and no news of the second order


def test_a_link_works_once(client, customer, telegram):
    url = link(client, customer)
    assert start(telegram, url)[1] == text("en", "linked")
    assert start(telegram, url, "vi")[1] == text("vi", "link_used")


def route_of(fragment: str) -> dict[str, str] | None:
    """The app's route a hash (/orders/abc) opens, and its parameters; None when no page answers it."""
    path = fragment.split("?")[0].split("/")
    for pattern in ROUTES:
        parts = pattern.split("/")
        if len(parts) == len(path) and all(p.startswith(":") or p == q for p, q in zip(parts, path, strict=True)):
            return {"pattern": pattern, **{p[1:]: q for p, q in zip(parts, path, strict=True) if p.startswith(":")}}
    return None


def test_every_link_a_message_contains_opens_the_page_it_names(stack, client, customer, telegram):
    chat, _ = start(telegram, link(client, customer))
    order = client.post("/api/v1/orders", json=ORDER, headers=customer["headers"]).json()
    paying = client.post(f"/api/v1/orders/{order['id']}/payments", json={"asset": "LTC", "network": "litecoin"},
                         headers=customer["headers"])  # fmt: skip
    assert paying.status_code == 201, paying.text
    topup = client.post("/api/v1/topups", json={"amount_usd": "100", "asset": "LTC", "network": "litecoin"},
                        headers=customer["headers"]).json()  # fmt: skip
    client.post(f"/api/v1/orders/{order['id']}/cancel", headers=customer["headers"])
    assert telegram.wait_for(lambda: len(telegram.messages(chat)) >= 5)  # greeting, recorded, two payments, cancelled
    says(telegram, chat, "/status")

    links = {url for message in telegram.messages(chat) for url in LINK.findall(message.text)}
    assert links >= {f"{stack.url}/#/orders/{order['id']}", f"{stack.url}/#/topups/{topup['id']}"}
    for url in links:
        parts = urlsplit(url)
        assert f"{parts.scheme}://{parts.netloc}" == stack.url, url
        served = httpx.get(url, timeout=10)  # the browser asks for the document; the hash stays with it
        assert served.status_code == 200 and "text/html" in served.headers["content-type"], url
        route = route_of(parts.fragment)
        assert parts.path in ("", "/") and route is not None, f"{url} opens no page of the app"
        resource = {"/orders/:id": "/api/v1/orders/{id}", "/topups/:id": "/api/v1/topups/{id}"}.get(route["pattern"])
        if resource:  # the page finds what it names, for this customer
            assert client.get(resource.format(**route), headers=customer["headers"]).status_code == 200, url


def test_the_link_routes_need_a_session_and_a_known_language(stack, client, customer):
    with httpx.Client(base_url=stack.url) as stranger:
        assert_problem(stranger.post("/api/v1/me/telegram-link"), 401, "unauthenticated")
        assert_problem(stranger.delete("/api/v1/me/telegram-link"), 401, "unauthenticated")
    refused = client.post("/api/v1/me/telegram-link", json={"language": "fr"}, headers=customer["headers"])
    assert_problem(refused, 422, "validation_error", "language")
    extra = client.post("/api/v1/me/telegram-link", json={"language": "en", "chat": 1}, headers=customer["headers"])
    assert_problem(extra, 422, "validation_error")
    for language in ("en", "vi", "id"):
        assert link(client, customer, json={"language": language})
