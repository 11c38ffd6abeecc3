"""Support over the broker and PostgreSQL: the rules are tested in memory (test_use_cases.py); here, the
wiring: RPCs with their refusals, the tables, the events through the outbox."""

from datetime import timedelta

import pytest
from nameko.exceptions import RemoteError

from kernodeck_kit.types import rfc3339, utcnow
from services.support.tests.conftest import an_order

DUE = rfc3339((utcnow() + timedelta(days=1)).replace(microsecond=0))


def test_a_request_answered_over_rpc_and_its_events(support, neighbours, events):
    neighbours["o1"] = an_order("o1", "alice")
    opened = support.open_request(
        "alice",
        "o1",
        "incident",
        "it fails",
        {"first_error": "OSError: [Errno 28]", "failed_at": "2026-12-01T10:00:00Z"},
    )
    assert (opened["kind"], opened["status"], opened["failed_at"], opened["answers"]) == (
        "incident", "open", "2026-12-01T10:00:00Z", [],
    )  # fmt: skip
    assert "account_id" not in opened
    queue = support.list_queue()
    assert [r["id"] for r in queue["items"]] == [opened["id"]] and queue["next_cursor"] is None
    assert queue["items"][0]["account_id"] == "alice"
    support.answer_request("op1", opened["id"], "Your disk is full: clean /tmp.")
    mine = support.list_requests("alice")["items"]
    assert (
        mine[0]["answers"][0]["text"] == "Your disk is full: clean /tmp." and "author_id" not in mine[0]["answers"][0]
    )
    assert support.list_queue()["items"] == []
    assert [e["request_id"] for e in events.wait("support_request_opened")] == [opened["id"]]
    (answered,) = events.wait("support_request_answered")
    assert answered["answer"] == "Your disk is full: clean /tmp."


def test_refusals_cross_the_rpc_boundary_with_their_code_and_fields(support, neighbours):
    neighbours["o1"] = an_order("o1", "alice")
    with pytest.raises(RemoteError) as secret:
        support.open_request("alice", "o1", "incident", "m", {"launch_command": "mysql --password=hunter22"})
    assert secret.value.code == "secret_in_request"
    assert secret.value.errors == [
        {"field": "launch_command", "message": "looks like a password: remove it and send the request again"}
    ]
    with pytest.raises(RemoteError) as foreign:
        support.open_request("bob", "o1", "question", "m")
    assert foreign.value.code == "not_found"
    assert support.list_queue()["items"] == []


WALLET_KEY = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
TWELVE_WORDS = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"


@pytest.mark.parametrize(
    "message",
    [
        f"my wallet key {WALLET_KEY}, please refund there",
        "5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ",
        TWELVE_WORDS,
        "mật khẩu: lan12345",
        "kata sandi: rahasia123",
        "pass\u200bword: hunter22",
    ],
)
def test_a_wallet_key_or_a_password_in_any_language_is_refused_and_nothing_stored(support, neighbours, message):
    neighbours["o1"] = an_order("o1", "alice")
    with pytest.raises(RemoteError) as secret:
        support.open_request("alice", "o1", "question", message)
    assert (secret.value.code, [e["field"] for e in secret.value.errors]) == ("secret_in_request", ["message"])
    assert support.list_requests("alice")["items"] == [] and support.list_queue()["items"] == []


def test_a_transaction_id_said_to_be_one_is_stored(support, neighbours):
    neighbours["o1"] = an_order("o1", "alice")
    message = f"I paid, tx {WALLET_KEY}; still waiting. " + " ".join(TWELVE_WORDS.split()[:11])
    assert support.open_request("alice", "o1", "question", message)["message"] == message


def test_an_operators_answer_holding_a_secret_is_refused_over_rpc(support, neighbours, events):
    neighbours["o1"] = an_order("o1", "alice")
    opened = support.open_request("alice", "o1", "question", "which port is the notebook on?")
    with pytest.raises(RemoteError) as secret:
        support.answer_request("op1", opened["id"], "Open https://alice:Hunter2024@node.example/lab")
    assert secret.value.code == "secret_in_request"
    assert secret.value.errors == [
        {"field": "text", "message": "looks like credentials in a URL: remove it and send the answer again"}
    ]
    assert support.get_request(opened["id"])["answers"] == []
    assert support.answer_request("op1", opened["id"], "Port 8888, through the SSH tunnel.")["status"] == "answered"
    assert [a["answer"] for a in events.wait("support_request_answered")] == ["Port 8888, through the SSH tunnel."]


def test_an_extension_confirmed_over_rpc_is_priced_from_the_catalog(support, neighbours, events):
    neighbours["o1"] = an_order("o1", "alice", lots=3)
    request = support.open_request("alice", "o1", "extension", "3 more days", {"extra_days": 3, "due_by": DUE})
    extension = support.confirm_extension("op1", request["id"], "Booked for you.")
    assert (extension["price_usd_cents"], extension["status"], extension["due_by"]) == (3 * 18900, "confirmed", DUE)
    assert support.list_extensions("alice", ["o1", "o2"]) == {"o1": [extension], "o2": []}
    assert support.list_extensions("bob", ["o1"]) == {"o1": []}
    (confirmed,) = events.wait("extension_confirmed")
    assert (confirmed["extension_id"], confirmed["price_usd_cents"]) == (extension["id"], 56700)
    neighbours["o2"] = an_order("o2", "alice", status="ended")
    with pytest.raises(RemoteError) as ended:
        support.open_request("alice", "o2", "extension", "m", {"extra_days": 7, "due_by": DUE})
    assert ended.value.code == "invalid_state"


def test_both_lists_are_pages_from_the_tables(support, neighbours):
    neighbours["o1"] = an_order("o1", "alice")
    opened = [support.open_request("alice", "o1", "question", f"question {n}")["id"] for n in range(3)]
    mine = support.list_requests("alice", 2)
    rest = support.list_requests("alice", 2, mine["next_cursor"])
    assert [r["id"] for r in mine["items"] + rest["items"]] == opened[::-1] and rest["next_cursor"] is None
    queue = support.list_queue("open", 2)
    rest = support.list_queue("open", 2, queue["next_cursor"])
    assert [r["id"] for r in queue["items"] + rest["items"]] == opened and rest["next_cursor"] is None
    for limit, cursor in ((0, None), (201, None), (2, "not-a-cursor")):
        with pytest.raises(RemoteError) as refused:
            support.list_queue("open", limit, cursor)
        assert refused.value.code == "validation_error"
