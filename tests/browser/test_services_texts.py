"""What the services write reads in the page's language: in Vietnamese and in Indonesian, an order's timeline
entries and a payment's status without an English word; a cancellation's reason, support's entries and answers,
a method's reason and a refused request in Vietnamese; an operator's own words as written."""

import json
import re

import httpx
import pytest
from playwright.sync_api import expect

from infra.local.stack import ROOT
from tests.browser.conftest import new_page
from tests.browser.pages import log_in
from tests.e2e.conftest import new_customer
from tests.e2e.test_payments_http import new_operator

ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
OPERATOR_WORDS = "CUDA 12.8, with PyTorch 2.9 preinstalled."
METHOD_REASONS = (  # each reason payments gives for a method that is off, in Vietnamese
    "tạm thời bị tắt",
    "mạng đang chậm; khoản thanh toán có thể không được ghi nhận kịp thời",
    "hiện chưa có tỷ giá",
    "hiện không còn địa chỉ thanh toán trống",
)
WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019]+")


def words_of(language: str) -> set[str]:
    """Every word of a language's catalogues (the page's and the services'), their keys left out."""
    page = (ROOT / "web" / "src" / "messages" / f"{language}.ts").read_text()
    services = json.loads((ROOT / "libs/contracts/kernodeck_contracts/texts" / f"{language}.json").read_text())
    texts = re.findall(r':\s*"((?:[^"\\]|\\.)*)"', page) + [
        form for text in services.values() for form in ([text] if isinstance(text, str) else text.values())
    ]
    return {word.lower() for text in texts for word in WORD.findall(re.sub(r"\{\w+\}", " ", text))}


def english_only() -> set[str]:
    """The words of the English catalogues that neither other language uses (its loanwords: GPU, batch...)."""
    return words_of("en") - words_of("vi") - words_of("id")


def english_in(text: str) -> set[str]:
    """The English words of `text`: its tokens of letters only, not all capitals (an id such as "3fa9be01", a
    symbol such as "US$" or "LTC" is no word)."""
    tokens = re.findall(r"[\w'\u2019]+", text)
    return {t for t in tokens if WORD.fullmatch(t) and not t.isupper() and t.lower() in english_only()}


def created(response: httpx.Response) -> dict:
    assert response.status_code in (200, 201), response.text
    return response.json()


@pytest.mark.parametrize("language", ["vi", "id"])
def test_a_timeline_entry_and_a_payment_status_read_without_an_english_word(browser, stack, steps, language):
    with httpx.Client(base_url=stack.url, timeout=30) as client:
        customer = new_customer(client)
        mine = customer["headers"]
        order = created(client.post("/api/v1/orders", json=ORDER, headers=mine))["id"]
        payment = created(client.post(f"/api/v1/orders/{order}/payments", json={"asset": "LTC", "network": "litecoin"},
                                      headers=mine))  # fmt: skip
        created(client.post(f"/api/v1/payments/{payment['id']}/reported", headers=mine))
    page = new_page(browser, stack)
    log_in(page, customer["email"])
    page.get_by_label("Language").select_option(language)
    page.goto(f"/#/orders/{order}")
    timeline = page.get_by_test_id("timeline")
    expect(timeline.locator("[data-code]")).to_have_count(2, timeout=30_000)  # recorded, then "J'ai payé"
    status = page.get_by_test_id("payment-status")
    expect(status).to_have_attribute("data-status", "awaiting_transfer")
    steps.shot(page, "order")
    for shown in (timeline.inner_text(), status.inner_text(), page.locator("main").inner_text()):
        assert english_in(shown) == set(), shown
    page.context.close()


def test_the_services_texts_read_in_vietnamese(browser, stack, steps):
    with httpx.Client(base_url=stack.url, timeout=30) as client:
        customer, operator = new_customer(client), new_operator(stack, client)
        mine, staff = customer["headers"], operator["headers"]
        cancelled = created(client.post("/api/v1/orders", json=ORDER, headers=mine))["id"]
        created(client.post(f"/api/v1/orders/{cancelled}/cancel", headers=mine))
        order = created(client.post("/api/v1/orders", json=ORDER, headers=mine))["id"]
        question = {"order_id": order, "kind": "question", "message": "Which CUDA version?"}
        request = created(client.post("/api/v1/support-requests", json=question, headers=mine))["id"]
        answer = {"text": OPERATOR_WORDS}
        created(client.post(f"/api/v1/admin/support-requests/{request}/answers", json=answer, headers=staff))

    page = new_page(browser, stack)
    log_in(page, customer["email"])
    page.get_by_label("Language").select_option("vi")

    page.goto("/#/orders")
    expect(page.locator(f'a[href="#/orders/{cancelled}"] + .badge')).to_have_text("Đã hủy")
    page.goto(f"/#/orders/{cancelled}")
    expect(page.locator('[data-code="cancelled_by_customer"]')).to_contain_text(
        "Đã hủy theo yêu cầu của bạn; không còn khoản nào phải trả"
    )
    steps.shot(page, "cancelled")

    page.goto(f"/#/orders/{order}")
    expect(page.locator("#reason-BTC-bitcoin")).to_have_text(
        re.compile(f"^Không khả dụng: ({'|'.join(METHOD_REASONS)})$")
    )
    timeline = page.get_by_test_id("timeline")
    expect(timeline.locator('[data-code="support_question"]')).to_have_text(
        re.compile("Đã gửi câu hỏi cho bộ phận hỗ trợ$"), timeout=30_000
    )
    answered = timeline.locator('[data-code="support_answered"]')
    expect(answered).to_have_text(
        re.compile(f"Bộ phận hỗ trợ đã trả lời: {re.escape(OPERATOR_WORDS)}$"), timeout=30_000
    )
    steps.shot(page, "timeline")

    page.goto("/#/support")
    requests = page.locator(".request")
    expect(requests.filter(has_text=OPERATOR_WORDS).locator(".badge")).to_have_text("Đã trả lời")
    expect(requests.locator("blockquote")).to_contain_text("Trả lời lúc")
    page.get_by_label("Nội dung").fill(
        "my password is hunter2hunter2 and the token is ghp_0123456789abcdefABCDEF0123456789abcd"
    )
    page.get_by_role("button", name="Gửi", exact=True).click()
    expect(page.locator("form [role=alert].problem")).to_contain_text("Nội dung này trông giống một bí mật")
    expect(page.locator("#support-message-error")).to_have_text("Hãy xóa bí mật khỏi trường này.")
    steps.shot(page, "support")
    page.context.close()


def test_no_english_word_is_missing_from_the_other_catalogues_lists():
    # The check above is only as good as its list: the English-only words include the ones a page would show.
    assert {"payment", "order", "waiting", "recorded", "reported"} <= english_only()
    assert not {"gpu", "j'ai", "payé", "litecoin", "usd"} & english_only()
