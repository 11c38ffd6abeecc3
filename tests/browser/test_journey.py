"""A customer configures, registers, orders, pays USDT on Tron and sees the order paid then ready, without a
reload; the page's accessibility is checked on the way."""

import re
from decimal import Decimal

from playwright.sync_api import expect

from tests.browser.axe import serious_violations
from tests.browser.conftest import new_page
from tests.browser.pages import choose_method, configure, record_order, register, report_paid

PAID_OR_LATER = re.compile("^(paid|provisioning|ready)$")
FOUR_GPUS = "4 GPUs (2 \N{MULTIPLICATION SIGN} 2)"


def test_configure_two_b200_lots_register_pay_usdt_on_tron_and_see_it_paid_then_ready(browser, stack, devnet, steps):
    page = new_page(browser, stack)
    page.evaluate("window.sameDocument = true")  # gone if anything reloads the page
    configure(page, "b200", 7, 2)
    expect(page.get_by_test_id("total-gpus")).to_have_text(FOUR_GPUS)
    expect(page.get_by_test_id("total-usd")).to_have_text("$3,998.00")
    expect(page.get_by_test_id("summary")).to_contain_text("One lot of NVIDIA B200 holds 2 GPUs.")
    expect(page.get_by_test_id("summary")).to_contain_text("Cards do not pool their memory: each has its own 192 GB")
    expect(page.get_by_label("GPU model").locator("option:checked")).to_have_text(re.compile(r"· \d+ lots? free$"))
    steps.shot(page, "configured")

    page.get_by_role("button", name="Create an account").click()
    register(page)
    expect(page.get_by_test_id("total-gpus")).to_have_text(FOUR_GPUS)  # the configuration was kept
    steps.shot(page, "registered")

    record_order(page)
    expect(page.get_by_test_id("order-status")).to_have_attribute("data-status", "awaiting_payment")
    expect(page.get_by_text("The network must match").first).to_be_visible()
    # No Bitcoin node in this stack: the method is shown, off, with the reason payments gives.
    expect(page.locator('[data-method="BTC/bitcoin"]')).to_be_disabled()
    expect(page.locator("#reason-BTC-bitcoin")).to_contain_text("Unavailable:")
    steps.shot(page, "order-recorded")

    shown = choose_method(page, "USDT", "tron")
    assert shown["address"].startswith("T") and Decimal(shown["amount"]) > 0
    expect(page.get_by_test_id("deadline")).to_contain_text("Time left:")
    expect(page.locator("img.qr")).to_be_visible()
    steps.shot(page, "instructions")

    report_paid(page)
    expect(page.locator('[data-kind="payment_reported"]')).to_be_visible()
    expect(page.get_by_test_id("order-status")).to_have_attribute("data-status", "awaiting_payment")
    steps.shot(page, "reported")

    tron = devnet.nodes["tron"]
    tron.trc20_transfer(devnet.tokens["USDT/tron"], shown["address"], int(Decimal(shown["amount"]).scaleb(6)))
    expect(page.get_by_test_id("order-status")).to_have_attribute("data-status", PAID_OR_LATER, timeout=60_000)
    steps.shot(page, "paid")
    expect(page.get_by_test_id("access")).to_be_visible(timeout=90_000)
    expect(page.get_by_test_id("order-status")).to_have_attribute("data-status", "ready")
    expect(page.get_by_test_id("access")).to_contain_text("ssh -p")
    steps.shot(page, "ready")
    assert page.evaluate("window.sameDocument") is True
    page.context.close()


def test_the_pages_have_no_serious_accessibility_violation(browser, stack, steps):
    context = browser.new_context(base_url=stack.url, bypass_csp=True, viewport={"width": 360, "height": 800})
    page = context.new_page()
    for route in ("/#/", "/#/register", "/#/login", "/#/resources"):
        page.goto(route)
        page.locator("main h1").wait_for()
        if route.endswith("resources"):  # the pilot guide's downloads, from GET /api/v1/resources
            expect(page.get_by_role("link", name="Download Diagnostic (readiness check)")).to_be_visible()
        steps.shot(page, route.strip("/#") or "catalog")
        assert serious_violations(page) == [], route
        # Usable at 360 px: nothing wider than the screen.
        assert page.evaluate("document.documentElement.scrollWidth") <= 360, route
    context.close()
