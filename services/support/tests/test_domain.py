"""Support's rules on both sides of each boundary: kinds and fields, sizes, times, secrets, decisions."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.timeline import TimelineCode
from kernodeck_support.domain import (
    LIMITS,
    Details,
    Extension,
    ExtensionStatus,
    RequestStatus,
    SupportRequest,
    answer,
    check_extendable,
    check_request,
    check_subject,
    decide,
    move_extension,
    payable_refusal,
)

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
DUE = "2026-12-03T12:00:00Z"


def refused(kind, message="help", **fields) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        check_request(kind, message, fields, NOW)
    return caught.value


def fields_of(error: ServiceError) -> set[str]:
    return {e["field"] for e in error.errors}


def test_an_incident_keeps_the_faq_fields():
    message, details = check_request(
        "incident",
        "the job dies",
        {
            "failed_at": "2026-12-01T11:00:00+00:00",
            "launch_command": "python train.py --config c.json",
            "versions": "Python 3.11, torch 2.5.1+cu124",
            "first_error": "RuntimeError: CUDA error: device-side assert triggered",
            "minimal_example": "import torch; torch.zeros(1).cuda()",
        },
        NOW,
    )
    assert message == "the job dies"
    assert details.failed_at == datetime(2026, 12, 1, 11, tzinfo=UTC)
    assert details.launch_command == "python train.py --config c.json" and details.extra_days is None


def test_the_kind_must_be_known_and_fields_belong_to_their_kind():
    assert fields_of(refused("complaint")) == {"kind"}
    assert fields_of(refused("question", first_error="x")) == {"first_error"}
    assert fields_of(refused("incident", extra_days=3)) == {"extra_days"}
    assert fields_of(refused("question", colour="red")) == {"colour"}
    assert check_request("question", "did I pay twice?", {"first_error": None}, NOW)[1] == Details()


@pytest.mark.parametrize("name", ["message", "launch_command", "versions", "first_error", "minimal_example"])
def test_each_text_has_its_bound(name):
    kind = "question" if name == "message" else "incident"
    at_limit = {"message": "m", name: "x" * LIMITS[name]}
    check_request(kind, at_limit.pop("message"), at_limit, NOW)
    over = {"message": "m", name: "x" * (LIMITS[name] + 1)}
    error = refused(kind, over.pop("message"), **over)
    assert error.code == ErrorCode.VALIDATION_ERROR and fields_of(error) == {name}


def test_a_message_is_required_text_without_control_characters():
    assert fields_of(refused("question", "")) == {"message"}
    assert fields_of(refused("question", "   ")) == {"message"}
    assert fields_of(refused("question", None)) == {"message"}
    assert fields_of(refused("question", 42)) == {"message"}
    assert fields_of(refused("question", "a\x00b")) == {"message"}
    assert check_request("question", "line one\n\tline two\r\n<b>not rendered</b>", {}, NOW)[0].startswith("line one")


def test_failed_at_is_a_time_with_offset_not_ahead_of_the_clock_by_more_than_its_skew():
    assert fields_of(refused("incident", failed_at="yesterday")) == {"failed_at"}
    assert fields_of(refused("incident", failed_at="2026-12-01T11:00:00")) == {"failed_at"}  # no offset
    check_request("incident", "m", {"failed_at": "2026-12-01T12:05:00Z"}, NOW)
    assert fields_of(refused("incident", failed_at="2026-12-01T12:05:01Z")) == {"failed_at"}


def test_an_extension_names_its_days_or_a_configuration_and_a_due_date():
    _, details = check_request("extension", "7 more days", {"extra_days": 7, "due_by": DUE}, NOW)
    assert (details.extra_days, details.due_by) == (7, datetime(2026, 12, 3, 12, tzinfo=UTC))
    check_request("extension", "two more lots", {"configuration": "3 lots instead of 1", "due_by": DUE}, NOW)
    for days in (3, 30):
        check_request("extension", "m", {"extra_days": days, "due_by": DUE}, NOW)
    for days in (0, 5, 31, "7", True):
        assert fields_of(refused("extension", extra_days=days, due_by=DUE)) == {"extra_days"}
    assert fields_of(refused("extension", due_by=DUE)) == {"extra_days"}
    assert fields_of(refused("extension", extra_days=7)) == {"due_by"}


def test_the_due_date_is_ahead_within_sixty_days():
    assert fields_of(refused("extension", extra_days=3, due_by="2026-12-01T12:00:00Z")) == {"due_by"}
    check_request("extension", "m", {"extra_days": 3, "due_by": "2026-12-01T12:00:01Z"}, NOW)
    check_request("extension", "m", {"extra_days": 3, "due_by": "2027-01-30T12:00:00Z"}, NOW)
    assert fields_of(refused("extension", extra_days=3, due_by="2027-01-30T12:00:01Z")) == {"due_by"}


def test_every_broken_rule_is_reported_at_once():
    assert fields_of(refused("extension", "", extra_days=5, failed_at="x")) == {
        "message",
        "extra_days",
        "failed_at",
        "due_by",
    }


def test_a_secret_is_refused_with_its_own_code_naming_the_field():
    error = refused("incident", "see below", first_error="Authorization: Bearer abcdef0123456789")
    assert error.code == ErrorCode.SECRET_IN_REQUEST
    assert fields_of(error) == {"first_error"}
    assert "abcdef0123456789" not in str(error.errors) + error.detail


def test_an_operators_answer_with_a_secret_is_refused_like_a_request_and_ordinary_text_passes():
    request = extension_request(kind="question")
    for field, text in (
        ("text", "Log in with password=Hunter2024 and retry"),
        ("reason", "Use this key: -----BEGIN OPENSSH PRIVATE KEY-----"),
        ("note", "Our token: ghp_0123456789abcdefghijABCDEFGHIJ012345"),
    ):
        with pytest.raises(ServiceError) as caught:
            answer(request, "op1", text, NOW, field)
        error = caught.value
        assert error.code == ErrorCode.SECRET_IN_REQUEST and fields_of(error) == {field}
        assert "answer" in error.detail and text.split()[-1] not in str(error.errors) + error.detail
    assert (request.status, request.answers) == (RequestStatus.OPEN, [])
    ordinary = "Set max_tokens=2048 and pad_token = tokenizer.eos_token; password = os.environ['DB_PASSWORD']."
    assert answer(request, "op1", ordinary, NOW).text == ordinary
    assert request.status == RequestStatus.ANSWERED


def order(status="ready", ends_at="2026-12-04T12:00:00Z") -> dict:
    return {"status": status, "rental": {"ends_at": ends_at} if ends_at else None}


def test_only_a_live_rental_is_extendable():
    check_extendable(order(), NOW)
    for status in ("awaiting_payment", "paid", "provisioning", "ended", "cancelled", "failed"):
        with pytest.raises(ServiceError) as caught:
            check_extendable(order(status, None), NOW)
        assert caught.value.code == ErrorCode.INVALID_STATE
    check_extendable(order(ends_at="2026-12-01T12:00:01Z"), NOW)
    with pytest.raises(ServiceError):
        check_extendable(order(ends_at="2026-12-01T12:00:00Z"), NOW)  # ready, but its term is over


def extension_request(
    extra_days=7, due_by=NOW + timedelta(days=1), kind="extension", configuration=None
) -> SupportRequest:
    details = Details(extra_days=extra_days, due_by=due_by, configuration=configuration)
    return SupportRequest("r1", "a1", "o1", kind, "m", details, NOW)


def test_an_extension_is_decided_once_and_confirmed_only_up_to_its_due_date():
    request = extension_request()
    decide(request, "confirmed", NOW + timedelta(days=1))  # at the due date itself
    assert request.decision == "confirmed"
    with pytest.raises(ServiceError):
        decide(request, "refused", NOW)
    with pytest.raises(ServiceError):
        decide(extension_request(), "confirmed", NOW + timedelta(days=1, seconds=1))
    refused_late = extension_request()
    decide(refused_late, "refused", NOW + timedelta(days=2))  # a refusal needs no due date
    with pytest.raises(ServiceError):
        decide(extension_request(kind="incident"), "refused", NOW)


def test_extra_days_and_a_change_of_configuration_are_each_confirmed_only_when_asked_for():
    change = extension_request(extra_days=None, configuration="2 lots instead of 1")
    with pytest.raises(ServiceError):
        decide(change, "confirmed", NOW)  # no extra days to confirm
    with pytest.raises(ServiceError):
        decide(extension_request(), "confirmed", NOW, configuration=True)  # no change asked for
    decide(change, "confirmed", NOW, configuration=True)
    assert change.decision == "confirmed"


@pytest.mark.parametrize(
    ("kind", "order_id", "topup_id", "refused"),
    [
        ("question", None, None, set()),  # about the account
        ("incident", None, "t1", set()),
        ("question", "o1", None, set()),
        ("question", "o1", "t1", {"topup_id"}),
        ("extension", None, "t1", {"order_id"}),
        ("extension", None, None, {"order_id"}),
        ("question", "", None, {"order_id"}),
        ("question", None, 7, {"topup_id"}),
    ],
)
def test_a_request_is_about_an_order_a_topup_or_the_account(kind, order_id, topup_id, refused):
    try:
        check_subject(kind, order_id, topup_id)
    except ServiceError as caught:
        assert {e["field"] for e in caught.errors} == refused
    else:
        assert not refused


def test_a_confirmation_may_leave_out_the_operators_note_a_refusal_may_not():
    confirmed = answer(extension_request(), "op1", None, NOW, "note", TimelineCode.EXTENSION_CONFIRMED, {"days": 7})
    assert (confirmed.text, confirmed.code, confirmed.params) == ("", TimelineCode.EXTENSION_CONFIRMED, {"days": 7})
    with pytest.raises(ServiceError):
        answer(extension_request(), "op1", None, NOW, "reason", TimelineCode.EXTENSION_REFUSED)


def test_an_extension_moves_forward_only():
    extension = Extension("x1", "r1", "o1", "a1", 7, 42000, NOW, ExtensionStatus.CONFIRMED, NOW, NOW)
    move_extension(extension, ExtensionStatus.PAID, NOW)
    move_extension(extension, ExtensionStatus.APPLIED, NOW)
    with pytest.raises(ServiceError):
        move_extension(extension, ExtensionStatus.PAID, NOW)


def test_an_extension_is_payable_while_confirmed_up_to_its_due_date_and_the_rental_is_live():
    extension = Extension("x1", "r1", "o1", "a1", 7, 42000, NOW, ExtensionStatus.CONFIRMED, NOW, NOW)
    assert payable_refusal(extension, order(), NOW) is None
    assert payable_refusal(extension, order(), NOW + timedelta(seconds=1)) == "past_due_date"
    assert payable_refusal(extension, order("ended", None), NOW) == "order_ended"
    assert payable_refusal(extension, order(ends_at="2026-12-01T12:00:00Z"), NOW) == "rental_over"
    assert payable_refusal(None, order(), NOW) == "unknown_extension"
    extension.status = ExtensionStatus.PAID
    assert payable_refusal(extension, order(), NOW) == "extension_paid"
