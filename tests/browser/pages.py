"""What a customer does on the frontend, step by step, as the tests and the benchmark do it."""

import uuid

from playwright.sync_api import Page, expect

from infra.testhosts.local import TEST_ACCOUNT_KEY

PASSWORD = "correct horse battery staple"


def configure(page: Page, model: str, days: int, lots: int, preparation: str = "pytorch") -> None:
    page.goto("/#/")
    page.get_by_label("GPU model").select_option(model)
    page.get_by_label(f"{days} days").check()
    page.get_by_label("Lots", exact=True).fill(str(lots))
    page.get_by_label("Preparation").select_option(preparation)
    page.get_by_label("Your SSH public key").fill(TEST_ACCOUNT_KEY)


def register(page: Page, email: str | None = None) -> str:
    """Register on the register page it is on (logging in follows); the email."""
    email = email or f"w{uuid.uuid4().hex[:10]}@example.org"
    page.get_by_label("First name").fill("Lan")
    page.get_by_label("Last name").fill("Nguyen")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create my account").click()
    expect(page.get_by_role("link", name="Log out")).to_be_visible()
    return email


def log_in(page: Page, email: str) -> None:
    page.goto("/#/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("link", name="Log out")).to_be_visible()


def record_order(page: Page) -> str:
    """Record the configured order; the order's id, once its page shows."""
    page.get_by_role("button", name="Record the order").click()
    page.wait_for_url("**/#/orders/*")
    return page.url.rsplit("/", 1)[1]


def choose_method(page: Page, asset: str, network: str) -> dict:
    """Choose the method; the instructions shown (address, amount)."""
    page.locator(f'[data-method="{asset}/{network}"]').click()
    instructions = page.locator(".instructions")
    expect(instructions).to_be_visible()
    values = instructions.locator(".copyable code")
    return {"address": values.nth(0).inner_text(), "amount": values.nth(1).inner_text()}


def report_paid(page: Page) -> None:
    page.get_by_role("button", name="J'ai payé").click()
    expect(page.get_by_test_id("reported")).to_be_visible()
