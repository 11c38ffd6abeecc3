"""A support request from the web: a secret in it is refused next to its field, a question is listed."""

from playwright.sync_api import expect

from tests.browser.pages import configure, record_order, register


def test_a_request_with_a_secret_is_refused_and_a_question_is_listed(page, steps):
    page.goto("/#/register")
    register(page)
    configure(page, "rtx4090", 3, 1)
    order_id = record_order(page)
    page.get_by_role("link", name="Ask support about this order").click()
    expect(page.get_by_label("An order")).to_be_checked()
    expect(page.get_by_label("Order", exact=True)).to_have_value(order_id)

    page.get_by_label("Message").fill(
        "my password is hunter2hunter2 and the token is ghp_0123456789abcdefABCDEF0123456789abcd"
    )
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("alert").filter(has_text="This looks like a secret")).to_be_visible()
    expect(page.locator("#support-message-error")).to_be_visible()
    steps.shot(page, "secret-refused")

    page.get_by_label("Message").fill("Which CUDA version does the PyTorch preparation install?")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("status")).to_contain_text("Your request is recorded")
    expect(page.locator(".request")).to_contain_text("Which CUDA version")
    steps.shot(page, "question-listed")
