"""Every kind of message exists in every language, with the same placeholders, short, with its link."""

from string import Formatter

import pytest

from kernodeck_contracts.languages import LANGUAGES
from kernodeck_notify.domain.notices import CREDIT_PHRASES, EVENT_KINDS, SUBJECTS, notice_for
from kernodeck_notify.templates import ORDER_STATUS_KINDS, REPLY_KINDS, TEMPLATES, compose, language_of
from services.notify.tests.samples import EVERY_KIND, ORDER

pytestmark = pytest.mark.unit

URL = "https://kernodeck.example"
ALL_KINDS = {*EVENT_KINDS, *SUBJECTS, *CREDIT_PHRASES, *REPLY_KINDS, *ORDER_STATUS_KINDS}


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(template) if name}


def test_the_languages_are_those_of_the_product():
    assert set(TEMPLATES) == set(LANGUAGES) == {"en", "vi", "id"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_kind_has_a_template_with_the_placeholders_of_the_english_one(language):
    messages = TEMPLATES[language]
    assert set(messages) == ALL_KINDS
    for kind in ALL_KINDS:
        assert placeholders(messages[kind]) == placeholders(TEMPLATES["en"][kind]), kind
        assert messages[kind].strip(), kind


def test_the_samples_bring_every_kind_of_event_message():
    assert sorted(kind for _, kind in EVERY_KIND) == sorted(EVENT_KINDS)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("event", "kind"), EVERY_KIND, ids=[kind for _, kind in EVERY_KIND])
def test_every_event_reads_in_every_language_short_with_its_link(event, kind, language):
    notice = notice_for(event)
    assert notice.kind == kind
    message = compose(notice, language, URL)
    assert "{" not in message and "}" not in message
    assert len(message) <= 400
    assert message.endswith(URL + notice.path) or f"{URL}{notice.path}" in message
    if notice.path.startswith("/orders/"):
        assert notice.path == f"/orders/{ORDER}"
        assert message.count(ORDER) >= 2  # the order id in the text, and in its link


@pytest.mark.parametrize(
    ("code", "language"), [("vi", "vi"), ("id", "id"), ("en-GB", "en"), ("ID-id", "id"), ("fr", "en"), (None, "en")]
)
def test_a_chat_not_linked_yet_is_answered_in_its_telegram_language_or_english(code, language):
    assert language_of(code) == language
