"""Accounts and sessions through HTTP: duplicates, cookies with CSRF, logout (throttling: test_access.py)."""

import uuid

import httpx

from tests.e2e.conftest import new_customer

ORDER = {"model": "l40s", "duration_days": 3, "lots": 1, "preparation": "notebook"}


def test_registering_an_existing_email_in_another_case_reveals_and_changes_nothing(stack, client, customer):
    with httpx.Client(base_url=stack.url) as intruder:
        response = intruder.post(
            "/api/v1/accounts",
            json={
                "first_name": "Eve",
                "last_name": "X",
                "email": customer["email"].upper(),
                "password": "another password 123",
            },
        )
        assert response.status_code == 409
        body = response.json()
        assert body["code"] == "email_taken"
        assert customer["account"]["id"] not in response.text and "Lan" not in response.text
        assert "kd_session" not in response.headers.get("set-cookie", "")
        assert intruder.get("/api/v1/me").status_code == 401
        wrong = intruder.post("/api/v1/sessions", json={"email": customer["email"], "password": "another password 123"})
        assert wrong.status_code == 401

    me = client.get("/api/v1/me", headers=customer["headers"]).json()
    assert (me["first_name"], me["last_name"], me["id"]) == ("Lan", "Nguyen", customer["account"]["id"])
    again = client.post("/api/v1/sessions", json={"email": customer["email"], "password": customer["password"]})
    assert again.status_code == 201


def test_wrong_password_and_unknown_email_get_the_same_answer(client, customer):
    wrong_password = client.post(
        "/api/v1/sessions", json={"email": customer["email"], "password": "not the password!!"}
    )
    unknown_email = client.post(
        "/api/v1/sessions", json={"email": "nobody@example.org", "password": "not the password!!"}
    )
    assert wrong_password.status_code == unknown_email.status_code == 401
    assert wrong_password.json() == unknown_email.json()
    assert wrong_password.json()["code"] == "invalid_credentials"


def test_cookie_session_needs_the_csrf_header_for_writes(stack, customer):
    with httpx.Client(base_url=stack.url) as browser:
        login = browser.post("/api/v1/sessions", json={"email": customer["email"], "password": customer["password"]})
        assert login.status_code == 201
        cookie_header = login.headers.get_list("set-cookie")
        assert any("kd_session=" in c and "HttpOnly" in c for c in cookie_header)
        assert browser.get("/api/v1/me").status_code == 200

        forged = browser.post("/api/v1/orders", json=ORDER)
        assert forged.status_code == 403
        assert forged.json()["code"] == "csrf_failed"

        csrf = browser.cookies["kd_csrf"]
        made = browser.post("/api/v1/orders", json=ORDER, headers={"X-CSRF-Token": csrf})
        assert made.status_code == 201

        out = browser.delete("/api/v1/sessions/current", headers={"X-CSRF-Token": csrf})
        assert out.status_code == 204
        assert browser.get("/api/v1/me").status_code == 401


def test_logout_ends_that_token_only(client):
    me = new_customer(client)
    second = client.post("/api/v1/sessions", json={"email": me["email"], "password": me["password"]}).json()
    assert client.delete("/api/v1/sessions/current", headers=me["headers"]).status_code == 204
    assert client.get("/api/v1/me", headers=me["headers"]).status_code == 401
    assert client.get("/api/v1/me", headers={"Authorization": f"Bearer {second['token']}"}).status_code == 200


def test_a_made_up_token_is_401(client):
    response = client.get("/api/v1/me", headers={"Authorization": f"Bearer {uuid.uuid4().hex}"})
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"
