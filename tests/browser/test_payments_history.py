"""Every payment stays in sight and says what became of the money: an underpaid payment followed to the end, a
top-up left and found again with its instructions, no instructions for an order that cannot be delivered, a
Telegram link opened in the browser, and a support request about a top-up."""

import re
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import httpx
from playwright.sync_api import Page, expect
from sqlalchemy import create_engine, text

from infra.testhosts.local import TEST_ACCOUNT_KEY
from tests.browser.conftest import new_page
from tests.browser.pages import choose_method, configure, log_in, record_order, register, report_paid
from tests.e2e.conftest import new_customer

ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
LINK = re.compile(r"https?://\S+")


def deadline_passes(stack, payment_id: str) -> None:
    """The payment's deadline is moved to a second ago, as if the customer had waited for it: payments' sweep
    decides the payment then (every few seconds)."""
    engine = create_engine(stack.env["PAYMENTS_DATABASE_URL"].replace("postgresql://", "postgresql+psycopg2://"))
    with engine.begin() as conn:
        moved = conn.execute(
            text("UPDATE payment_intents SET expires_at = now() - interval '1 second' WHERE id = :id"),
            {"id": payment_id},
        )
        assert moved.rowcount == 1
    engine.dispose()


def payment_id_on(page: Page) -> str:
    return page.locator(".instructions").get_attribute("data-payment")


def test_an_underpaid_payment_is_followed_to_the_end(page, stack, devnet, steps):
    page.goto("/#/register")
    register(page)
    configure(page, "rtx4090", 3, 1)
    order_id = record_order(page)
    shown = choose_method(page, "LTC", "litecoin")
    payment_id = payment_id_on(page)
    steps.shot(page, "instructions")

    half = Decimal(shown["amount"]) / 2
    litecoin = devnet.nodes["litecoin"]
    litecoin.rpc("sendtoaddress", shown["address"], str(half.quantize(Decimal("0.00000001"))))
    litecoin.mine(2)
    status = page.get_by_test_id("payment-status")
    expect(status).to_have_attribute("data-status", re.compile("^(seen|confirming)$"), timeout=30_000)
    expect(page.locator("[data-method]")).to_have_count(0)  # a transfer on its way: no second payment offered
    steps.shot(page, "short-transfer-seen")

    page.wait_for_timeout(2_000)  # the transfer first seen well before the deadline moved to now
    deadline_passes(stack, payment_id)
    record = page.locator(f'.payment[data-payment="{payment_id}"]')
    expect(record).to_have_attribute("data-status", "underpaid", timeout=60_000)
    expect(record.get_by_test_id("payment-status")).to_contain_text("What arrived is credited to your balance")
    credited = record.get_by_test_id("credited")
    expect(credited).to_contain_text("credited to your balance")
    expect(credited).to_contain_text("A payment short of its amount")
    expect(record).to_contain_text(shown["address"])  # the instructions stay on record
    expect(page.get_by_test_id("stuck")).to_contain_text("Do not send another transfer")
    expect(page.get_by_test_id("stuck").get_by_role("link")).to_have_attribute("href", f"#/support?order={order_id}")
    expect(page.locator("[data-method]")).to_have_count(0)  # no method chooser: support, not a second transfer
    expect(page.get_by_test_id("order-status")).to_have_attribute("data-status", "awaiting_payment")
    steps.shot(page, "underpaid")

    amount = re.search(r"\$[\d,.]+", credited.inner_text()).group(0)
    page.goto("/#/balance")
    expect(page.get_by_test_id("available-usd")).to_have_text(amount)
    expect(page.locator("table")).to_contain_text("A payment short of its amount")
    steps.shot(page, "balance-credited")


def test_a_topup_left_and_found_again_with_its_instructions(page, devnet, steps):
    page.goto("/#/register")
    register(page)
    page.goto("/#/balance")
    page.get_by_label("$500.00").check()
    shown = choose_method(page, "LTC", "litecoin")
    page.wait_for_url("**/#/topups/*")
    topup_id = page.url.rsplit("/", 1)[1]
    steps.shot(page, "topup-instructions")

    page.goto("/#/orders")  # the customer goes elsewhere...
    page.goto("/#/balance")  # ...and comes back
    page.locator(f'a[href="#/topups/{topup_id}"]').click()
    instructions = page.locator(".instructions")
    expect(instructions).to_contain_text(shown["address"])
    expect(instructions).to_contain_text(shown["amount"])
    expect(page.get_by_test_id("deadline")).to_contain_text("Time left:")
    steps.shot(page, "found-again")
    report_paid(page)
    steps.shot(page, "reported")

    litecoin = devnet.nodes["litecoin"]
    litecoin.rpc("sendtoaddress", shown["address"], shown["amount"])
    litecoin.mine(2)
    expect(page.get_by_test_id("topup-status")).to_have_attribute("data-status", "credited", timeout=30_000)
    expect(page.get_by_test_id("payments")).to_contain_text("Paid: the transfer is confirmed.")
    steps.shot(page, "credited")
    page.get_by_role("link", name="Back to my balance").click()
    expect(page.get_by_test_id("available-usd")).to_have_text("$500.00")
    expect(page.locator(f'a[href="#/topups/{topup_id}"] + .badge')).to_have_text("Credited")
    steps.shot(page, "balance")


def test_a_support_request_about_a_topup(page, steps):
    page.goto("/#/register")
    register(page)
    page.goto("/#/balance")
    choose_method(page, "LTC", "litecoin")
    page.wait_for_url("**/#/topups/*")
    topup_id = page.url.rsplit("/", 1)[1]
    page.get_by_role("link", name="Ask support about this top-up").click()
    expect(page.get_by_label("A top-up")).to_be_checked()
    expect(page.get_by_label("Top-up", exact=True)).to_have_value(topup_id)
    expect(page.get_by_label("Extension")).to_have_count(0)  # an extension is asked for an order
    page.get_by_label("Message").fill("I sent the litecoins an hour ago; the top-up still waits.")
    steps.shot(page, "asked")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("status")).to_contain_text("Your request is recorded")
    request = page.locator(".request").first
    expect(request).to_contain_text(f"Top-up {topup_id}")
    expect(request.get_by_role("link", name=f"Top-up {topup_id}")).to_have_attribute("href", f"#/topups/{topup_id}")
    steps.shot(page, "listed")

    page.get_by_label("My account").check()
    page.get_by_label("Message").fill("Can I change the email of my account?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".request").first).to_contain_text("My account")
    steps.shot(page, "about-the-account")


def test_no_instructions_for_an_order_without_an_ssh_key(browser, stack, steps):
    with httpx.Client(base_url=stack.url, timeout=30) as client:
        customer = new_customer(client, ssh_key=False)
        order = client.post("/api/v1/orders", json=ORDER, headers=customer["headers"]).json()
    page = new_page(browser, stack)
    log_in(page, customer["email"])
    page.goto(f"/#/orders/{order['id']}")
    page.locator('[data-method="LTC/litecoin"]').click()
    refusal = page.locator('[role=alert][data-code="ssh_key_required"]')
    expect(refusal).to_contain_text("save your key on your account page")
    expect(refusal).to_contain_text("Nothing was charged")
    expect(page.locator(".instructions")).to_have_count(0)
    expect(page.get_by_test_id("order-status")).to_have_attribute("data-status", "awaiting_payment")
    steps.shot(page, "refused")

    page.get_by_role("link", name="Save my SSH key on my account page").click()
    page.get_by_label("Your SSH public key").fill(TEST_ACCOUNT_KEY)
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("The key is saved.")).to_be_visible()
    steps.shot(page, "key-saved")
    page.goto(f"/#/orders/{order['id']}")
    choose_method(page, "LTC", "litecoin")
    steps.shot(page, "instructions")
    page.context.close()


def test_a_telegram_link_opened_in_the_browser_lands_on_the_order(browser, stack, steps):
    telegram = stack.telegram.api
    with httpx.Client(base_url=stack.url, timeout=30) as client:
        customer = new_customer(client)
        url = client.post("/api/v1/me/telegram-link", json={"language": "en"}, headers=customer["headers"]).json()[
            "url"
        ]
        (token,) = parse_qs(urlsplit(url).query)["start"]
        chat = 990_000 + len(telegram.messages())
        telegram.user_says(chat, f"/start {token}")
        assert telegram.wait_for(lambda: telegram.messages(chat))
        order = client.post("/api/v1/orders", json=ORDER, headers=customer["headers"]).json()
    assert telegram.wait_for(lambda: order["id"] in telegram.messages(chat)[-1].text)
    (link,) = LINK.findall(telegram.messages(chat)[-1].text)

    page = new_page(browser, stack)
    log_in(page, customer["email"])
    page.goto(link)
    expect(page.locator("main [data-order]")).to_have_attribute("data-order", order["id"])
    expect(page.get_by_test_id("order-status")).to_have_attribute("data-status", "awaiting_payment")
    steps.shot(page, "opened-from-telegram")
    page.context.close()
