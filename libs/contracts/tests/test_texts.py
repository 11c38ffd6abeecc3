"""The services' sentences: every language has every text with the same placeholders; every timeline code has its
text with exactly its parameters; plurals follow each language's rule; parameters show by their names."""

from datetime import UTC, datetime
from string import Formatter

import pytest

from kernodeck_contracts import texts, timeline
from kernodeck_contracts.languages import LANGUAGES
from kernodeck_contracts.timeline import PARAMS, Said, TimelineCode

ENGLISH = texts.catalogue("en")


def forms(text) -> list[str]:
    return [text] if isinstance(text, str) else [text["other"], *([text["one"]] if "one" in text else [])]


def placeholders(text) -> set[str]:
    return {name for form in forms(text) for _, name, _, _ in Formatter().parse(form) if name}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_has_every_text_with_the_english_placeholders(language):
    catalogue = texts.catalogue(language)
    assert list(catalogue) == list(ENGLISH)
    for key, text in catalogue.items():
        assert placeholders(text) == placeholders(ENGLISH[key]), key
        assert all(form.strip() for form in forms(text)), key
        if isinstance(text, dict):  # a plural: its count is one of its placeholders, "other" always there
            assert text["count"] in placeholders(text) and set(text) <= {"count", "one", "other"}, key


def test_every_timeline_code_has_its_text_with_exactly_its_parameters():
    keys = {key.removeprefix("timeline.") for key in ENGLISH if key.startswith("timeline.")}
    assert keys == {code.value for code in TimelineCode}
    for code in TimelineCode:
        assert placeholders(ENGLISH[f"timeline.{code}"]) == set(PARAMS.get(code, ())), code


@pytest.mark.parametrize(("language", "one"), [("en", "1 hour ("), ("vi", "1 giờ ("), ("id", "1 jam (")])
def test_a_count_takes_the_form_of_its_languages_plural_rule(language, one):
    ends = datetime(2026, 12, 1, 14, 5, tzinfo=UTC)
    assert one in timeline.rental_ending(1, ends).text(language)
    assert texts.plural_category(language, 1) == ("one" if language == "en" else "other")
    assert all(texts.plural_category(language, n) == "other" for n in (0, 2, 24, 101))


def test_parameters_show_by_their_names():
    said = Said(TimelineCode.EXTENSION_CONFIRMED, {"days": 7, "price_usd": "840.00", "due_by": "2026-12-03T12:00:00Z"})
    assert said.text("en") == (
        "Extension confirmed: 7 more days for 840.00 USD, to pay on the order page by 2026-12-03 12:00 UTC;"
        " the end moves once it is paid"
    )
    assert timeline.paid("USDT/tron").text("vi") == "Đã thanh toán: USDT trên Tron, đã được xác nhận trên chuỗi"
    assert timeline.paid("balance").code == TimelineCode.PAID_BALANCE


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        ("no_ssh_public_key: node-7 said boom", TimelineCode.FAILED_NO_SSH_KEY),
        ("no_node_passed: node-7 said boom", TimelineCode.FAILED_NO_NODE),
        ("capacity_lost: node-7 said boom", TimelineCode.FAILED_CAPACITY_LOST),
        ("something new: node-7 said boom", TimelineCode.FAILED),
    ],
)
def test_a_failure_reads_by_provisionings_reason_without_the_nodes_detail(reason, code):
    said = timeline.failed(reason)
    assert said == Said(code) and "node-7" not in said.text()


def test_support_answers_read_as_the_operators_words_or_support_s_decision():
    assert timeline.of_answer(None, {}, "Port 8888.") == Said(TimelineCode.SUPPORT_ANSWERED, {"text": "Port 8888."})
    assert timeline.of_answer("extension_refused", {}, "Booked.").code == TimelineCode.EXTENSION_REFUSED
    assert timeline.of_answer("extension_confirmed", {"days": 7}, "") is None
    assert timeline.of_answer("extension_confirmed", {"days": 7}, "Thanks.").params == {"text": "Thanks."}


def test_an_unknown_language_has_no_catalogue():
    with pytest.raises(ValueError):
        texts.render("fr", "status.paid")
