"""Registering, logging out and in from another browser, topping up, in each language."""

import pytest
from playwright.sync_api import expect

from infra.testhosts.local import TEST_ACCOUNT_KEY
from tests.browser.conftest import new_page
from tests.browser.pages import choose_method, configure, log_in, record_order, register

RULE = "15 to 128 characters"


def test_a_14_character_password_shows_the_rule(page, steps):
    page.goto("/#/register")
    expect(page.locator("#password-hint")).to_contain_text(RULE)  # before the customer types
    page.get_by_label("Password").fill("p" * 14)
    expect(page.locator("#password-error")).to_contain_text(RULE)
    expect(page.get_by_role("button", name="Create my account")).to_be_disabled()
    steps.shot(page, "14-characters")
    page.get_by_label("Password").fill("p" * 15)
    expect(page.locator("#password-error")).to_have_count(0)
    expect(page.get_by_role("button", name="Create my account")).to_be_enabled()
    steps.shot(page, "15-characters")


def test_log_out_then_log_in_from_another_browser_finds_the_same_order_and_balance(browser, stack, steps):
    first = new_page(browser, stack)
    first.goto("/#/register")
    email = register(first)
    configure(first, "rtx4090", 3, 1)
    first.get_by_label("Your SSH public key").fill("")
    first.get_by_role("button", name="Record the order").click()
    # The quote of the configuration is answered after the click: the refusal stays until the customer acts.
    expect(first.get_by_test_id("summary")).to_contain_text("PyTorch")
    expect(first.locator("#ssh-key-error")).to_contain_text("without it the machine cannot be delivered")
    steps.shot(first, "no-ssh-key")
    first.get_by_label("Your SSH public key").fill(TEST_ACCOUNT_KEY)
    order_id = record_order(first)
    first.goto("/#/balance")
    balance = first.get_by_test_id("available-usd").inner_text()
    first.get_by_role("link", name="Log out").click()
    expect(first.get_by_text("On a shared or public device")).to_be_visible()
    steps.shot(first, "log-out-advice")
    first.get_by_role("button", name="Log out now").click()
    expect(first.get_by_role("link", name="Log in")).to_be_visible()
    first.context.close()

    second = new_page(browser, stack)
    log_in(second, email)
    second.goto("/#/orders")
    expect(second.locator(f'a[href="#/orders/{order_id}"]')).to_be_visible()
    steps.shot(second, "orders-elsewhere")
    second.goto("/#/balance")
    expect(second.get_by_test_id("available-usd")).to_have_text(balance)
    second.context.close()


def test_a_topup_paid_on_litecoind_raises_the_balance(page, devnet, steps):
    page.goto("/#/register")
    register(page)
    page.goto("/#/balance")
    expect(page.get_by_test_id("available-usd")).to_have_text("$0.00")
    page.get_by_label("$100.00").check()
    shown = choose_method(page, "LTC", "litecoin")  # on the top-up's own page
    steps.shot(page, "topup-instructions")
    litecoin = devnet.nodes["litecoin"]
    litecoin.rpc("sendtoaddress", shown["address"], shown["amount"])
    litecoin.mine(2)
    expect(page.get_by_test_id("topup-status")).to_have_attribute("data-status", "credited", timeout=30_000)
    page.goto("/#/balance")
    expect(page.get_by_test_id("available-usd")).to_have_text("$100.00")
    steps.shot(page, "topup-credited")


def test_the_login_page_says_there_is_no_password_reset_and_what_to_do(page, steps):
    page.goto("/#/login")
    notice = page.get_by_test_id("no-reset")
    expect(notice).to_contain_text("There is no password reset")
    expect(notice).to_contain_text("Keep your password")
    expect(notice).to_contain_text("create a new account with another email address")
    steps.shot(page, "no-reset")


@pytest.mark.parametrize(
    ("language", "title", "submit"),
    [
        ("en", "Rent a GPU machine", "Create an account"),
        ("vi", "Thuê máy GPU", "Tạo tài khoản"),
        ("id", "Sewa mesin GPU", "Buat akun"),
    ],
    ids=["en", "vi", "id"],
)
def test_each_language_renders_the_configurator(browser, stack, steps, language, title, submit):
    page = new_page(browser, stack, language)  # the browser's language decides
    expect(page.get_by_role("heading", level=1)).to_have_text(title)
    expect(page.get_by_role("button", name=submit)).to_be_visible()
    expect(page.get_by_test_id("total-usd")).to_contain_text("$" if language == "en" else "US$")  # Intl's formats
    steps.shot(page, language)
    other = "vi" if language != "vi" else "en"
    page.get_by_label({"en": "Language", "vi": "Ngôn ngữ", "id": "Bahasa"}[language]).select_option(other)
    expect(page.locator("html")).to_have_attribute("lang", other)
    page.context.close()
