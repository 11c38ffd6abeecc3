"""The bot's words in every language (en, vi, id), and how a notice becomes a message's text.

Each language module maps a message kind to its text, a `str.format`
template. Every kind exists in every language with the same placeholders
(a test holds them in step). Values common to all: `{url}`, the page the
message links to.
"""

from kernodeck_contracts.languages import DEFAULT_LANGUAGE
from kernodeck_notify.domain.notices import Notice
from kernodeck_notify.templates import english, indonesian, vietnamese

TEMPLATES: dict[str, dict[str, str]] = {"en": english.MESSAGES, "vi": vietnamese.MESSAGES, "id": indonesian.MESSAGES}

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
# The open order statuses as /status names them.
ORDER_STATUS_KINDS = ("order_awaiting_payment", "order_paid", "order_provisioning", "order_ready")


def language_of(code: str | None) -> str:
    """One of LANGUAGES for a Telegram `language_code` (en-US, vi, id...); English otherwise."""
    base = (code or "").split("-")[0].lower()
    return base if base in TEMPLATES else DEFAULT_LANGUAGE


def text(language: str, kind: str, **values) -> str:
    return TEMPLATES[language][kind].format_map(values)


def compose(notice: Notice, language: str, public_url: str) -> str:
    """The message of `notice` in `language`, its link under `public_url`."""
    messages = TEMPLATES[language]
    values = {**notice.values, "url": public_url + notice.path}
    for name, phrase in notice.phrases.items():
        values[name] = messages[phrase].format_map(values)
    return messages[notice.kind].format_map(values)
