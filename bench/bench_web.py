"""The web frontend in Debian's headless Chromium on the local stack: the first page load (bytes and requests
on the wire, script size gzipped, time until the configurator shows a priced summary) against a bare page
load of the same origin, and the time from the block that brings a payment's last confirmation to the order
page showing it paid, against the API showing it (polled every 20 ms, the same blocks).
"""

import threading
import time
import uuid
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

from bench.measure import percentiles
from infra.local.devnet import DEV_CONFIRMATIONS, Devnet
from infra.local.isolation import running_stack
from infra.testhosts.local import TEST_ACCOUNT_KEY
from tests.browser.conftest import CHROMIUM

LOADS = 20
PAYMENTS = 10
PAID = ("paid", "provisioning", "ready")
ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
WIRE = """() => {
  const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
  return {requests: entries.length, bytes: entries.reduce((sum, e) => sum + e.transferSize, 0)};
}"""


def web_bench(log_dir: Path) -> list[str]:
    devnet = Devnet(log_dir / "devnet", networks=("litecoin",), watcher_status_s=1.0)
    env = devnet.start(log=lambda line: None)
    try:
        if not devnet.up:
            return [f"web: skipped, litecoind is not installed ({devnet.skipped})"]
        with running_stack(log_dir, "kd_bench_web", env, devnet.up) as stack, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                return first_load(browser, stack.url) + block_to_page(browser, stack.url, devnet.nodes["litecoin"])
            finally:
                browser.close()
    finally:
        devnet.stop()


def first_load(browser, url: str) -> list[str]:
    interactive, bare, wire = [], [], {}
    for _ in range(LOADS):
        context = browser.new_context(base_url=url)  # a cold cache each time
        page = context.new_page()
        started = time.perf_counter()
        page.goto("/healthz")
        bare.append(time.perf_counter() - started)
        started = time.perf_counter()
        page.goto("/")
        page.get_by_test_id("total-usd").wait_for()
        interactive.append(time.perf_counter() - started)
        wire = page.evaluate(WIRE)
        context.close()
    script = httpx.get(f"{url}/app.js", headers={"accept-encoding": "gzip"})
    shown, floor = percentiles(interactive), percentiles(bare)
    return [
        f"first load of / (cold cache): {wire['requests']} requests, {wire['bytes'] / 1024:.1f} KiB on the wire; "
        f"app.js {int(script.headers['content-length']) / 1024:.1f} KiB gzipped ({len(script.content) / 1024:.1f} "
        "KiB unpacked)",
        f"time to interactive (configurator priced): p50 {shown['p50_ms']:.0f} ms  p99 {shown['p99_ms']:.0f} ms "
        f"over {LOADS} loads; bare page of the same origin p50 {floor['p50_ms']:.0f} ms: "
        f"{shown['p50_ms'] / floor['p50_ms']:.1f}x",
    ]


def block_to_page(browser, url: str, litecoin) -> list[str]:
    context = browser.new_context(base_url=url)
    auth = _logged_in(context)
    page = context.new_page()
    on_page, on_api = [], []
    with httpx.Client(base_url=url, headers=auth, timeout=30) as api:
        for _ in range(PAYMENTS):
            order = api.post("/api/v1/orders", json=ORDER).json()
            payment = api.post(f"/api/v1/orders/{order['id']}/payments", json={"asset": "LTC", "network": "litecoin"})
            litecoin.rpc("sendtoaddress", payment.json()["address"], payment.json()["amount"])
            litecoin.mine(DEV_CONFIRMATIONS["litecoin"] - 1)
            page.goto(f"/#/orders/{order['id']}")
            page.locator('[data-testid="payment-status"][data-status="confirming"]').wait_for(timeout=30_000)
            api_seen = _poll_api(api, order["id"])
            litecoin.mine(1)
            mined = time.perf_counter()
            page.locator(",".join(f'[data-testid="order-status"][data-status="{s}"]' for s in PAID)).wait_for()
            on_page.append(time.perf_counter() - mined)
            api_seen.join()
            on_api.append(api_seen.at - mined)
    context.close()
    page_p, api_p = percentiles(on_page), percentiles(on_api)
    return [
        f"block with the last confirmation -> order page shows paid (litecoin): p50 {page_p['p50_ms']:.0f} ms  "
        f"p99 {page_p['p99_ms']:.0f} ms over {PAYMENTS} orders; the API showed it at p50 {api_p['p50_ms']:.0f} ms  "
        f"p99 {api_p['p99_ms']:.0f} ms: the page adds {page_p['p50_ms'] - api_p['p50_ms']:.0f} ms at p50"
    ]


def _logged_in(context) -> dict:
    """A new customer logged in in the browser's context (its cookies); the bearer header of the same session."""
    email, password = f"web-{uuid.uuid4().hex[:8]}@example.org", "benchmark password 0123"
    account = {"first_name": "B", "last_name": "M", "email": email, "password": password}
    context.request.post("/api/v1/accounts", data=account)
    session = context.request.post("/api/v1/sessions", data={"email": email, "password": password}).json()
    auth = {"Authorization": f"Bearer {session['token']}"}
    context.request.put("/api/v1/me/ssh-key", data={"ssh_public_key": TEST_ACCOUNT_KEY}, headers=auth)
    return auth


def _poll_api(api: httpx.Client, order_id: str) -> threading.Thread:
    """A thread that polls the order every 20 ms and keeps in `.at` when it first shows paid."""

    def poll() -> None:
        while api.get(f"/api/v1/orders/{order_id}").json()["status"] not in PAID:
            time.sleep(0.02)
        thread.at = time.perf_counter()

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    return thread
