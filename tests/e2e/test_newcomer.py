"""The newcomer's path through the gateway, with every service a real process."""

import httpx

from tests.e2e.conftest import assert_problem, new_customer

ORDER = {"model": "b200", "duration_days": 7, "lots": 2, "preparation": "pytorch"}


def test_browse_quote_register_order_and_find_it_from_another_client(stack, client):
    catalog = client.get("/api/v1/catalog").json()
    models = {m["id"]: m for m in catalog["models"]}
    assert catalog["durations_days"] == [3, 7, 30]
    assert catalog["lots"] == {"min": 1, "max": 10}
    assert {p["id"] for p in catalog["preparations"]} >= {"ubuntu", "pytorch", "notebook", "custom"}
    assert models["mi300x"]["backend"] == "rocm"
    assert models["b200"]["gpus_per_lot"] == 2

    quote = client.post("/api/v1/quotes", json=ORDER).json()
    seven_day_lot = models["b200"]["lot_prices_usd"]["7"]
    assert quote["total_gpus"] == 4
    assert quote["lot_price_usd"] == seven_day_lot
    assert quote["total_usd"] == f"{2 * float(seven_day_lot):.2f}"
    assert quote["available"] is True

    me = new_customer(client)
    created = client.post("/api/v1/orders", json=ORDER, headers=me["headers"])
    assert created.status_code == 201, created.text
    order = created.json()
    assert order["status"] == "awaiting_payment"
    assert order["summary"]["total_usd"] == quote["total_usd"]
    assert order["summary"]["total_gpus"] == 4
    assert [entry["kind"] for entry in order["timeline"]] == ["created"]
    assert order["rental"] is None and order["access"] is None

    # Another browser: a second login, same account, same orders.
    with httpx.Client(base_url=stack.url) as other_browser:
        login = other_browser.post("/api/v1/sessions", json={"email": me["email"], "password": me["password"]})
        assert login.status_code == 201
        other = {"Authorization": f"Bearer {login.json()['token']}"}
        found = other_browser.get(f"/api/v1/orders/{order['id']}", headers=other)
        assert found.status_code == 200
        assert found.json()["summary"] == order["summary"]
        listed = other_browser.get("/api/v1/orders", headers=other).json()["items"]
        assert [o["id"] for o in listed] == [order["id"]]
        assert other_browser.get("/api/v1/me", headers=other).json()["email"] == me["email"]


def test_mi300x_quote_reports_rocm(client):
    quote = client.post(
        "/api/v1/quotes", json={"model": "mi300x", "duration_days": 3, "lots": 1, "preparation": "pytorch"}
    )
    assert quote.status_code == 200
    assert quote.json()["backend"] == "rocm"


def test_orders_list_newest_first(client, customer):
    ids = [
        client.post(
            "/api/v1/orders",
            json={"model": "rtx4090", "duration_days": days, "lots": 1, "preparation": "ubuntu"},
            headers=customer["headers"],
        ).json()["id"]
        for days in (3, 7, 30)
    ]
    listed = client.get("/api/v1/orders", headers=customer["headers"]).json()
    assert [o["id"] for o in listed["items"]] == list(reversed(ids))
    first = client.get("/api/v1/orders?limit=2", headers=customer["headers"]).json()
    rest = client.get(f"/api/v1/orders?cursor={first['next_cursor']}", headers=customer["headers"]).json()
    assert [o["id"] for o in first["items"] + rest["items"]] == list(reversed(ids))
    assert rest["next_cursor"] is None
    for limit in (1, 200):
        assert client.get(f"/api/v1/orders?limit={limit}", headers=customer["headers"]).status_code == 200
    for query in ("limit=0", "limit=201", "cursor=forged"):
        response = client.get(f"/api/v1/orders?{query}", headers=customer["headers"])
        assert_problem(response, 422, "validation_error", query.split("=")[0])


def test_another_customer_gets_404_for_my_order(client, customer):
    order = client.post("/api/v1/orders", json=ORDER, headers=customer["headers"]).json()
    intruder = new_customer(client)
    response = client.get(f"/api/v1/orders/{order['id']}", headers=intruder["headers"])
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert client.get("/api/v1/orders/does-not-exist", headers=intruder["headers"]).json() == response.json()
    assert client.get("/api/v1/orders", headers=intruder["headers"]).json() == {"items": [], "next_cursor": None}


def test_the_customer_cancels_an_unpaid_order(client, customer):
    order = client.post("/api/v1/orders", json=ORDER, headers=customer["headers"]).json()
    cancelled = client.post(f"/api/v1/orders/{order['id']}/cancel", headers=customer["headers"])
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    again = client.post(f"/api/v1/orders/{order['id']}/cancel", headers=customer["headers"])
    assert again.status_code == 409
    assert again.json()["code"] == "invalid_state"
