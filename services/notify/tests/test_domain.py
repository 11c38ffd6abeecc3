"""Pure rules: what is told, linking, commands, pacing under Telegram's limits."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.events import BalanceCredited, OrderStatusChanged, SupportRequestAnswered
from kernodeck_notify.domain.commands import Command, parse_command
from kernodeck_notify.domain.links import PendingLink, StartOutcome, judge_start
from kernodeck_notify.domain.notices import notice_for
from kernodeck_notify.domain.pacing import Pacer
from services.notify.tests.samples import ACCOUNT, ORDER, TOPUP, status_changed

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


# What is told


@pytest.mark.parametrize("status", ["awaiting_payment", "paid", "provisioning", "ready", "ended", "failed"])
def test_order_status_changes_that_other_events_tell_are_not_told_twice(status):
    event = OrderStatusChanged(order_id=ORDER, account_id=ACCOUNT, status=status, previous_status="x")
    assert notice_for(event) is None


def test_a_transfer_found_already_in_a_block_reads_as_seen_and_later_confirmations_are_quiet():
    assert notice_for(status_changed("confirming", "awaiting_transfer")).kind == "payment_seen"
    assert notice_for(status_changed("confirming", "seen")) is None


def test_a_settled_top_up_is_told_once_credited_not_twice():
    assert notice_for(status_changed("settled", "confirming", purpose="topup")) is None
    seen = notice_for(status_changed("seen", "awaiting_transfer", purpose="topup"))
    assert (seen.phrases, seen.path) == ({"subject": "subject_topup"}, f"/#/topups/{TOPUP}")


def test_an_extension_payment_names_the_extension_and_links_its_order():
    notice = notice_for(status_changed("settled", "confirming", purpose="extension", order_id=ORDER, extension_id="e1"))
    assert (notice.phrases, notice.path) == ({"subject": "subject_extension"}, f"/#/orders/{ORDER}")


@pytest.mark.parametrize("reason", ["overpayment", "underpayment", "late_transfer", "refused_payment", "review_credit"])
def test_a_credit_says_why_in_the_words_of_the_balance_page(reason):
    notice = notice_for(BalanceCredited(account_id=ACCOUNT, amount_usd_cents=1, reason=reason))
    assert notice.said == {"reason": (f"ledger.{reason}", {})} and notice.values["amount"] == "0.01 USD"


def test_a_cancellation_says_why_and_a_confirmation_without_a_note_is_told_once():
    cancelled = OrderStatusChanged(
        order_id=ORDER, account_id=ACCOUNT, status="cancelled", previous_status="x", reason="cancelled_unpaid"
    )
    assert notice_for(cancelled).said == {"news": ("timeline.cancelled_unpaid", {})}
    terms = {"days": 7, "price_usd": "900.00", "due_by": "2026-12-01T14:05:00Z"}
    confirmed = SupportRequestAnswered(
        request_id="r1", order_id=ORDER, account_id=ACCOUNT, kind="extension", code="extension_confirmed", params=terms
    )
    assert notice_for(confirmed) is None  # extension_confirmed tells it
    refused = confirmed.model_copy(update={"code": "extension_refused", "answer": "Booked after your term."})
    assert notice_for(refused).said == {"news": ("timeline.extension_refused", {"text": "Booked after your term."})}


# Linking


def link(**changes) -> PendingLink:
    return PendingLink(**{"token_hash": "h", "account_id": "acc", "language": "vi", "expires_at": NOW, **changes})


def test_a_token_links_until_it_expires():
    assert judge_start(link(), 1, None, NOW - timedelta(microseconds=1)) is StartOutcome.LINKED
    assert judge_start(link(), 1, None, NOW) is StartOutcome.EXPIRED


def test_a_used_token_is_refused_except_to_the_chat_it_linked_while_linked():
    used = link(used_at=NOW, used_by_chat=1)
    assert judge_start(used, 2, None, NOW) is StartOutcome.USED
    assert judge_start(used, 1, "acc", NOW) is StartOutcome.ALREADY_LINKED
    assert judge_start(used, 1, None, NOW) is StartOutcome.USED  # it unlinked since: a new link is needed


def test_an_unknown_token_is_refused():
    assert judge_start(None, 1, None, NOW) is StartOutcome.UNKNOWN


# Commands


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("/start abc", Command("start", ("abc",))),
        ("/STATUS", Command("status")),
        ("/language@Kernodeck_Bot vi", Command("language", ("vi",))),
        ("/status@other_bot", None),
        ("hello", None),
        ("", None),
        (None, None),
    ],
)
def test_commands_as_chats_type_them(text, command):
    assert parse_command(text, "kernodeck_bot") == command


# Pacing


def pacer(**changes) -> Pacer:
    return Pacer(
        **{
            "max_per_second": 30,
            "chat_interval_s": 1.0,
            "group_interval_s": 3.0,
            "retry_first_s": 1.0,
            "retry_max_s": 60.0,
            **changes,
        }
    )


def test_messages_leave_evenly_spaced_and_never_more_than_max_per_second_in_a_second():
    p = pacer(max_per_second=4)
    starts = [p.book(chat, 10.0) for chat in range(6)]
    assert starts == pytest.approx([10.0, 10.25, 10.5, 10.75, 11.0, 11.25])
    p = pacer(max_per_second=4)
    p.rate_limited(0.9, 10.0)  # a pause bunches what waits: the window still holds
    assert [p.book(chat, 10.0) for chat in range(5)] == pytest.approx([10.9, 11.15, 11.4, 11.65, 11.9])


def test_a_chat_gets_one_message_a_second_and_a_group_one_every_three():
    p = pacer()
    assert p.book(7, 10.0) == 10.0
    assert p.book(-7, 10.0) == pytest.approx(10.0 + 1 / 30)
    assert p.book(7, 10.0) == pytest.approx(11.0)
    assert p.book(-7, 10.0) == pytest.approx(13.0 + 1 / 30)
    assert p.busy_chats(11.5) == {7: pytest.approx(12.0), -7: pytest.approx(16.0 + 1 / 30)}
    p.forget_idle(20.0)
    assert p.busy_chats(0.0) == {}


def test_retry_after_pauses_everything_for_as_long_as_telegram_says():
    p = pacer()
    p.rate_limited(5, 10.0)
    assert p.wait(10.0) == 5 and p.paused_until() == 15.0
    assert p.wait(14.9) == pytest.approx(0.1)
    assert p.wait(15.0) == 0


def test_back_off_doubles_to_its_cap_and_an_accepted_message_resets_it():
    p = pacer()
    assert [p.backoff(n) for n in (1, 2, 3, 7, 8, 100)] == [1, 2, 4, 60, 60, 60]
    for n in range(3):
        p.unavailable(7, 100.0 * n)
    assert p.wait(200.0) == 4 and p.busy_chats(200.0) == {7: 204.0}
    p.accepted(7)
    p.unavailable(7, 300.0)
    assert p.wait(300.0) == 1
