"""The services' sentences in every language: one catalogue per language (`texts/<language>.json`), read by the
web page (bundled at build time), by notify (Telegram) and by orders (a timeline entry's English `detail`), so that
the three say the same thing.

A text is a `str.format` template, or, where a number decides the grammar, a plural: `{"count": "<param>",
"one": ..., "other": ...}`, chosen by the language's plural rule (CLDR's, as the browser's `Intl.PluralRules`
applies it to whole numbers: English has "one" and "other", Vietnamese and Indonesian "other" only).

A parameter's name says how it is shown: `network` by the network's name (`network.<id>`), a name ending in `_at`
or `due_by` as a time (UTC here; the page shows the browser's local time), a name ending in `_usd` as US dollars;
anything else as it is.
"""

import json
from datetime import datetime
from functools import cache
from importlib import resources

from kernodeck_contracts.languages import LANGUAGES

Text = str | dict[str, str]


@cache
def catalogue(language: str) -> dict[str, Text]:
    return json.loads((resources.files("kernodeck_contracts") / "texts" / f"{language}.json").read_text("utf-8"))


def plural_category(language: str, count: int) -> str:
    """CLDR's category of a whole number in `language` ("one" or "other" for ours)."""
    return "one" if language == "en" and count == 1 else "other"


def render(language: str, key: str, params: dict | None = None) -> str:
    """The text of `key` in `language` with `params` put in; KeyError when the catalogue has no such key."""
    if language not in LANGUAGES:
        raise ValueError(f"no catalogue for {language!r}")
    params = params or {}
    template = form(language, catalogue(language)[key], params)
    return template.format_map({name: _shown(language, name, value) for name, value in params.items()})


def form(language: str, text: Text, params: dict) -> str:
    """The template of `text` for `params`: the text itself, or of a plural the form its count's category takes."""
    if isinstance(text, dict):
        return text.get(plural_category(language, int(params[text["count"]])), text["other"])
    return text


def time_text(at: datetime | str) -> str:
    """A time as messages write it, the same in every language: 2026-12-01 14:05 UTC."""
    moment = datetime.fromisoformat(at) if isinstance(at, str) else at
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _shown(language: str, name: str, value) -> str:
    if name == "network":
        return catalogue(language).get(f"network.{value}", str(value))
    if name.endswith("_at") or name == "due_by":
        return time_text(value)
    if name.endswith("_usd"):
        return f"{value} USD"
    return str(value)
