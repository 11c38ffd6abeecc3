"""What the services write reads in the page's language (here Vietnamese): statuses, timeline entries and
their reasons, support's sentences, a payment method's reason, refusals by their code; an operator's own
words stay as written."""

import re

import httpx
from playwright.sync_api import expect

from tests.browser.conftest import new_page
from tests.browser.pages import log_in
from tests.e2e.conftest import new_customer
from tests.e2e.test_payments_http import new_operator

ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
OPERATOR_WORDS = "CUDA 12.8, with PyTorch 2.9 preinstalled."
# Support's own sentence for a confirmed extension, as its confirm route writes it (a confirmation needs a
# delivered rental), here with an operator's note under it.
CONFIRMATION = (
    "Confirmed: 7 more days for 1234.50 USD, to pay on the order page before 2026-12-24T10:00:00Z."
    " The new end counts once it is paid.\nThanks for asking early."
)
METHOD_REASONS = (  # each reason payments gives for a method that is off, in Vietnamese
    "tạm thời bị tắt",
    "mạng đang chậm; khoản thanh toán có thể không được ghi nhận kịp thời",
    "hiện chưa có tỷ giá",
    "hiện không còn địa chỉ thanh toán trống",
)


def created(response: httpx.Response) -> dict:
    assert response.status_code in (200, 201), response.text
    return response.json()


def test_the_services_texts_read_in_vietnamese(browser, stack, steps):
    with httpx.Client(base_url=stack.url, timeout=30) as client:
        customer, operator = new_customer(client), new_operator(stack, client)
        mine, staff = customer["headers"], operator["headers"]
        cancelled = created(client.post("/api/v1/orders", json=ORDER, headers=mine))["id"]
        created(client.post(f"/api/v1/orders/{cancelled}/cancel", headers=mine))
        order = created(client.post("/api/v1/orders", json=ORDER, headers=mine))["id"]
        question = {"order_id": order, "kind": "question", "message": "Which CUDA version?"}
        for text in (OPERATOR_WORDS, CONFIRMATION):
            request = created(client.post("/api/v1/support-requests", json=question, headers=mine))["id"]
            answer = client.post(
                f"/api/v1/admin/support-requests/{request}/answers", json={"text": text}, headers=staff
            )
            created(answer)

    page = new_page(browser, stack)
    log_in(page, customer["email"])
    page.get_by_label("Language").select_option("vi")

    page.goto("/#/orders")
    expect(page.locator(f'a[href="#/orders/{cancelled}"] + .badge')).to_have_text("Đã hủy")
    page.goto(f"/#/orders/{cancelled}")
    expect(page.locator('[data-kind="cancelled"]')).to_contain_text("Đã hủy — theo yêu cầu của bạn")
    steps.shot(page, "cancelled")

    page.goto(f"/#/orders/{order}")
    expect(page.locator("#reason-BTC-bitcoin")).to_have_text(
        re.compile(f"^Không khả dụng: ({'|'.join(METHOD_REASONS)})$")
    )
    timeline = page.get_by_test_id("timeline")
    expect(timeline.locator('[data-kind="support_request"]')).to_have_count(2, timeout=30_000)
    expect(timeline.locator('[data-kind="support_request"]').first).to_contain_text("Đã gửi yêu cầu hỗ trợ — Câu hỏi")
    answered = timeline.locator('[data-kind="support_answered"]')
    expect(answered).to_have_count(2, timeout=30_000)
    expect(answered.filter(has_text=OPERATOR_WORDS)).to_contain_text("Bộ phận hỗ trợ đã trả lời")
    expect(answered.filter(has_text="Đã xác nhận: thêm 7 ngày")).to_contain_text("Thanks for asking early.")
    steps.shot(page, "timeline")

    page.goto("/#/support")
    requests = page.locator(".request")
    expect(requests.filter(has_text=OPERATOR_WORDS).locator(".badge")).to_have_text("Đã trả lời")
    confirmed = requests.locator("blockquote").filter(has_text="Thanks for asking early.")
    expect(confirmed).to_contain_text("Trả lời lúc")
    expect(confirmed).to_contain_text("Đã xác nhận: thêm 7 ngày với giá 1.234,50 US$")
    expect(confirmed).not_to_contain_text("Confirmed")
    page.get_by_label("Nội dung").fill(
        "my password is hunter2hunter2 and the token is ghp_0123456789abcdefABCDEF0123456789abcd"
    )
    page.get_by_role("button", name="Gửi", exact=True).click()
    expect(page.locator("form [role=alert].problem")).to_contain_text("Nội dung này trông giống một bí mật")
    expect(page.locator("#support-message-error")).to_have_text("Hãy xóa bí mật khỏi trường này.")
    steps.shot(page, "support")
    page.context.close()
