"""The operator review queue through the running service: listing, deciding, the audit trail."""

from kernodeck_contracts.events import BalanceMismatch
from kernodeck_payments.domain.intents import transfer_key
from services.payments.tests.helpers import (
    UNKNOWN_ERC20,
    code_of,
    concurrently,
    confirm,
    parse_time,
    refusal,
    txid,
)

ACC = "acc1"
OPERATOR = "op-7"


def wrong_asset_review(payments, watcher, account: str = ACC) -> dict:
    """A lookalike token sent to a USDT top-up's address: an open review item of `account`."""
    payment = payments.create_topup(account, 10_000, "USDT", "ethereum")["payment"]
    confirm(watcher, payment, 100_000_000, tx=txid(), index=2, token=UNKNOWN_ERC20)
    [item] = [i for i in payments.list_reviews("open")["items"] if i["payment_id"] == payment["id"]]
    return item


def credits(payments, account: str = ACC) -> list[tuple[int, str, str]]:
    return [(e["amount_usd_cents"], e["reason"], e["ref"]) for e in payments.list_ledger(account)["items"]]


def test_open_items_are_listed_with_what_caused_them(payments_ready, payments, watcher):
    item = wrong_asset_review(payments, watcher)

    assert (item["reason"], item["status"], item["account_id"], item["decision"], item["resolved_by"]) == (
        "wrong_asset",
        "open",
        ACC,
        None,
        None,
    )
    assert item["transfer_key"].startswith("ethereum:") and item["transfer_key"].endswith(":2")
    assert [(a["actor"], a["action"], a["detail"]) for a in item["audit"]] == [("system", "opened", "wrong_asset")]
    assert payments.list_reviews()["items"] == [item]
    assert payments.list_reviews("resolved")["items"] == []
    assert code_of(payments.list_reviews, "closed") == "validation_error"


def test_credit_to_balance_credits_once_and_cannot_be_decided_again(payments_ready, payments, watcher):
    item = wrong_asset_review(payments, watcher)

    resolved = payments.resolve_review(OPERATOR, item["id"], "credit_to_balance", 9_500, "")

    assert (resolved["status"], resolved["decision"], resolved["amount_usd_cents"], resolved["resolved_by"]) == (
        "resolved",
        "credit_to_balance",
        9_500,
        OPERATOR,
    )
    assert payments.get_balance(ACC) == {"available_usd_cents": 9_500, "pending_usd_cents": 0}
    assert credits(payments) == [(9_500, "review_credit", item["id"])]

    assert code_of(payments.resolve_review, OPERATOR, item["id"], "credit_to_balance", 9_500, "") == "invalid_state"
    assert code_of(payments.resolve_review, "op-8", item["id"], "dismissed", None, "twice") == "invalid_state"
    assert payments.get_balance(ACC)["available_usd_cents"] == 9_500
    assert credits(payments) == [(9_500, "review_credit", item["id"])]
    assert payments.list_reviews("open")["items"] == []
    assert [i["id"] for i in payments.list_reviews("resolved")["items"]] == [item["id"]]


def test_operators_deciding_the_same_item_at_once_credit_it_once(payments_ready, payments, watcher, configs):
    item = wrong_asset_review(payments, watcher)
    calls = [(f"op-{n}", item["id"], "credit_to_balance", 9_500, "") for n in range(10)]

    results = concurrently(configs["payments"], "payments", "resolve_review", calls, width=10)

    winners = [r for r in results if isinstance(r, dict)]
    assert len(winners) == 1
    assert sorted(r for r in results if not isinstance(r, dict)) == ["invalid_state"] * 9
    assert payments.get_balance(ACC)["available_usd_cents"] == 9_500
    assert credits(payments) == [(9_500, "review_credit", item["id"])]
    [resolved] = payments.list_reviews("resolved")["items"]
    assert [a["actor"] for a in resolved["audit"]] == ["system", winners[0]["resolved_by"]]


def test_refunded_off_system_and_dismissed_need_a_note_and_credit_nothing(payments_ready, payments, watcher):
    for decision in ("refunded_off_system", "dismissed"):
        item = wrong_asset_review(payments, watcher)
        for note in ("", "   "):
            refused = refusal(payments.resolve_review, OPERATOR, item["id"], decision, None, note)
            assert (refused.code, [e["field"] for e in refused.errors]) == ("validation_error", ["note"])
        refused = refusal(payments.resolve_review, OPERATOR, item["id"], decision, 100, "with an amount")
        assert (refused.code, [e["field"] for e in refused.errors]) == ("validation_error", ["amount_usd"])
        assert [i["id"] for i in payments.list_reviews("open")["items"]] == [item["id"]]

        resolved = payments.resolve_review(OPERATOR, item["id"], decision, None, f"{decision}: tx 0xabc")

        assert (resolved["status"], resolved["decision"], resolved["note"], resolved["amount_usd_cents"]) == (
            "resolved",
            decision,
            f"{decision}: tx 0xabc",
            None,
        )
    assert payments.get_balance(ACC) == {"available_usd_cents": 0, "pending_usd_cents": 0}
    assert credits(payments) == []


def test_a_bad_decision_or_amount_is_refused(payments_ready, payments, watcher):
    item = wrong_asset_review(payments, watcher)

    refused = refusal(payments.resolve_review, OPERATOR, item["id"], "refund", None, "why not")
    assert (refused.code, [e["field"] for e in refused.errors]) == ("validation_error", ["decision"])
    for amount in (None, 0, -100, True):
        refused = refusal(payments.resolve_review, OPERATOR, item["id"], "credit_to_balance", amount, "")
        assert (refused.code, [e["field"] for e in refused.errors]) == ("validation_error", ["amount_usd"])
    assert code_of(payments.resolve_review, OPERATOR, "no-such-item", "dismissed", None, "x") == "not_found"
    assert payments.list_reviews("open")["items"][0]["id"] == item["id"]
    assert credits(payments) == []


def test_an_item_without_a_customer_cannot_be_credited(payments_ready, payments, watcher):
    stranger = {"network": "bitcoin", "address": "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"}
    confirm(watcher, stranger, 50_000)
    [item] = payments.list_reviews("open")["items"]
    assert (item["reason"], item["account_id"]) == ("unknown_address", None)

    refused = refusal(payments.resolve_review, OPERATOR, item["id"], "credit_to_balance", 2_500, "")
    assert (refused.code, [e["field"] for e in refused.errors]) == ("validation_error", ["decision"])

    resolved = payments.resolve_review(OPERATOR, item["id"], "refunded_off_system", None, "sent back, tx 0xdef")
    assert resolved["status"] == "resolved"


def test_the_audit_trail_has_the_opening_and_the_operators_decision(payments_ready, payments, watcher):
    item = wrong_asset_review(payments, watcher)

    resolved = payments.resolve_review(OPERATOR, item["id"], "credit_to_balance", 1_234, "the customer's own mistake")

    assert [(a["actor"], a["action"], a["detail"]) for a in resolved["audit"]] == [
        ("system", "opened", "wrong_asset"),
        (OPERATOR, "resolved", "credit_to_balance 1234 cents: the customer's own mistake"),
    ]
    opened, decided = (parse_time(a["at"]) for a in resolved["audit"])
    assert opened <= decided == parse_time(resolved["resolved_at"])
    [listed] = payments.list_reviews("resolved")["items"]
    assert listed["audit"] == resolved["audit"]


def test_a_balance_larger_than_the_transfers_seen_opens_one_review_per_difference_and_asset(
    payments_ready, payments, watcher
):
    payment = payments.create_topup(ACC, 10_000, "ETH", "ethereum")["payment"]
    mismatch = {"network": "ethereum", "address": payment["address"], "seen": 0, "height": 12}
    watcher.send(BalanceMismatch, balance=7, **mismatch)
    watcher.send(BalanceMismatch, balance=7, **mismatch)  # told again: nothing new
    [item] = [i for i in payments.list_reviews("open")["items"] if i["reason"] == "balance_mismatch"]
    assert (item["payment_id"], item["account_id"]) == (payment["id"], ACC)
    watcher.send(BalanceMismatch, balance=9, **mismatch)  # more arrived unseen: a new item
    assert len([i for i in payments.list_reviews("open")["items"] if i["reason"] == "balance_mismatch"]) == 2
    watcher.send(BalanceMismatch, balance=9, token="0x" + "d" * 40, **mismatch)  # as much of a token: its own item
    assert len([i for i in payments.list_reviews("open")["items"] if i["reason"] == "balance_mismatch"]) == 3


def key(event) -> str:
    return transfer_key(event.network, event.txid, event.index)


def test_foreign_token_dust_on_one_address_is_one_open_item(payments_ready, payments, watcher):
    payment = payments.create_topup(ACC, 10_000, "USDT", "ethereum")["payment"]
    other = payments.create_topup(ACC, 10_000, "USDT", "ethereum")["payment"]
    dust = [confirm(watcher, payment, 1, tx=txid(), index=n, token=UNKNOWN_ERC20) for n in range(3)]
    confirm(watcher, other, 1, tx=txid(), index=0, token=UNKNOWN_ERC20)

    [item, elsewhere] = sorted(payments.list_reviews("open")["items"], key=lambda i: i["payment_id"] != payment["id"])
    assert (item["payment_id"], item["transfers"], item["transfer_key"]) == (payment["id"], 3, key(dust[0]))
    assert [(a["action"], a["detail"]) for a in item["audit"]] == [
        ("opened", "wrong_asset"),
        ("joined", key(dust[1])),
        ("joined", key(dust[2])),
    ]
    assert (elsewhere["payment_id"], elsewhere["transfers"]) == (other["id"], 1)

    payments.resolve_review(OPERATOR, item["id"], "dismissed", None, "dust of an unknown token")
    later = confirm(watcher, payment, 1, tx=txid(), index=0, token=UNKNOWN_ERC20)  # after the decision: a new item
    [again] = [i for i in payments.list_reviews("open")["items"] if i["payment_id"] == payment["id"]]
    assert (again["transfers"], again["transfer_key"]) == (1, key(later))
