"""The lists the API pages (orders, support requests): the first page, then "Show more" until the last one."""

import httpx
from playwright.sync_api import Page, expect

from tests.browser.conftest import new_page
from tests.browser.pages import log_in
from tests.e2e.conftest import new_customer

PAGE_SIZE = 20  # web/src/paging.ts
ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}


def create(client: httpx.Client, customer: dict, path: str, body: dict) -> str:
    response = client.post(path, json=body, headers=customer["headers"])
    assert response.status_code == 201, response.text
    return response.json()["id"]


def show_all(page: Page, items: str, expected: set[str], attribute: str) -> None:
    """The first page, then each next one appended, until the button is gone and every item is listed."""
    rows = page.locator(items)
    expect(rows).to_have_count(PAGE_SIZE)
    more = page.get_by_role("button", name="Show more")
    more.click()
    expect(rows).to_have_count(len(expected))
    expect(more).to_have_count(0)
    assert {rows.nth(i).get_attribute(attribute) for i in range(len(expected))} == expected


def test_orders_and_support_requests_beyond_a_page_are_all_shown(browser, stack, steps):
    with httpx.Client(base_url=stack.url, timeout=30) as client:
        customer = new_customer(client)
        orders = {create(client, customer, "/api/v1/orders", ORDER) for _ in range(PAGE_SIZE + 1)}
        question = {"order_id": next(iter(orders)), "kind": "question", "message": "Which CUDA version?"}
        requests = {create(client, customer, "/api/v1/support-requests", question) for _ in range(PAGE_SIZE + 2)}

    page = new_page(browser, stack)
    log_in(page, customer["email"])
    page.goto("/#/orders")
    show_all(page, '[data-testid="orders"] a', {f"#/orders/{order_id}" for order_id in orders}, "href")
    steps.shot(page, "all-orders")

    page.goto("/#/support")
    show_all(page, ".request", requests, "data-request")
    steps.shot(page, "all-requests")
    page.context.close()
