"""The bot's words in every language (en, vi, id), and how a notice becomes a message's text.

Each language module maps a template name to its text, a `str.format` template or, where a number decides the
grammar, a plural (`{"count": "<value>", "one": ..., "other": ...}`, as in `kernodeck_contracts.texts`). Every
template exists in every language with the same placeholders (a test holds them in step). Values common to all:
`{url}`, the page the message links to, and `{link_button}`, the account page's button that links a chat, named
as the page names it.
"""

from kernodeck_contracts.languages import DEFAULT_LANGUAGE
from kernodeck_contracts.texts import form, render
from kernodeck_notify.domain.notices import Notice
from kernodeck_notify.templates import english, indonesian, vietnamese

TEMPLATES: dict[str, dict] = {"en": english.MESSAGES, "vi": vietnamese.MESSAGES, "id": indonesian.MESSAGES}

# Texts of the bot's answers to commands.
REPLY_KINDS = (
    "help",
    "linked",
    "already_linked",
    "link_used",
    "link_expired",
    "link_unknown",
    "start_without_token",
    "not_linked",
    "unlinked",
    "unlinked_by_account",
    "status_header",
    "status_line",
    "status_more",
    "status_empty",
    "language_set",
    "language_usage",
)


def language_of(code: str | None) -> str:
    """One of LANGUAGES for a Telegram `language_code` (en-US, vi, id...); English otherwise."""
    base = (code or "").split("-")[0].lower()
    return base if base in TEMPLATES else DEFAULT_LANGUAGE


def text(language: str, kind: str, **values) -> str:
    values = {"link_button": render(language, "telegram.link"), **values}
    return form(language, TEMPLATES[language][kind], values).format_map(values)


def compose(notice: Notice, language: str, public_url: str) -> str:
    """The message of `notice` in `language`, its link under `public_url`."""
    values = {**notice.values, "url": public_url + notice.path}
    for name, (key, params) in notice.said.items():
        values[name] = render(language, key, params)
    for name, phrase in notice.phrases.items():
        values[name] = text(language, phrase, **values)
    return text(language, notice.template, **values)
