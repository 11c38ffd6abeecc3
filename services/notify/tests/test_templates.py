"""Every template exists in every language, with the same placeholders; every event reads short, with its link,
in the words the page uses (the catalogue's), and every link opens a page of the app."""

from string import Formatter

import pytest

from kernodeck_contracts.languages import LANGUAGES
from kernodeck_contracts.texts import render
from kernodeck_notify.domain.notices import EVENT_KINDS, EVENT_TEMPLATES, SUBJECTS, notice_for
from kernodeck_notify.templates import REPLY_KINDS, TEMPLATES, compose, language_of
from services.notify.tests.samples import EVERY_KIND, ORDER, TOPUP

pytestmark = pytest.mark.unit

URL = "https://kernodeck.example"
ALL_TEMPLATES = {*EVENT_TEMPLATES, *SUBJECTS, *REPLY_KINDS}
# The app's pages a message may link to (web/src/main.tsx routes them by the hash).
PAGES = (f"/#/orders/{ORDER}", f"/#/topups/{TOPUP}", "/#/balance", "/#/support")


def forms(template) -> list[str]:
    return [template] if isinstance(template, str) else [v for k, v in template.items() if k != "count"]


def placeholders(template) -> set[str]:
    return {name for form in forms(template) for _, name, _, _ in Formatter().parse(form) if name}


def test_the_languages_are_those_of_the_product():
    assert set(TEMPLATES) == set(LANGUAGES) == {"en", "vi", "id"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_template_has_the_placeholders_of_the_english_one(language):
    messages = TEMPLATES[language]
    assert set(messages) == ALL_TEMPLATES
    for name in ALL_TEMPLATES:
        assert placeholders(messages[name]) == placeholders(TEMPLATES["en"][name]), name
        assert all(form.strip() for form in forms(messages[name])), name


def test_the_samples_bring_every_kind_of_event_message():
    assert sorted(kind for _, kind in EVERY_KIND) == sorted(EVENT_KINDS)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("event", "kind"), EVERY_KIND, ids=[kind for _, kind in EVERY_KIND])
def test_every_event_reads_in_every_language_short_with_its_link(event, kind, language):
    notice = notice_for(event)
    assert notice.kind == kind
    message = compose(notice, language, URL)
    assert "{" not in message and "}" not in message
    assert len(message) <= 500
    assert message.endswith(URL + notice.path)
    assert notice.path in PAGES
    if notice.path.startswith("/#/orders/"):
        assert message.count(ORDER) >= 2  # the order id in the text, and in its link
    for key, params in notice.said.values():
        assert render(language, key, params) in message  # the page's own words


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_button_a_chat_is_linked_with_is_named_as_the_account_page_names_it(language):
    from kernodeck_notify.templates import text

    button = render(language, "telegram.link")
    for kind in ("help", "start_without_token", "not_linked"):
        assert f'"{button}"' in text(language, kind)


@pytest.mark.parametrize(
    ("code", "language"), [("vi", "vi"), ("id", "id"), ("en-GB", "en"), ("ID-id", "id"), ("fr", "en"), (None, "en")]
)
def test_a_chat_not_linked_yet_is_answered_in_its_telegram_language_or_english(code, language):
    assert language_of(code) == language
