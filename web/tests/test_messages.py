"""Every message is used, and every word a page shows comes from a catalogue.

A key is used when the pages name it, or when a page builds it from a value the API or the services decide
(`status.${order.status}`): each such family is declared here with where its values come from, so that a status
added there without its message, or a message left for a status that is gone, fails. The pages' markup holds no
words of its own: text between tags and in the attributes people read comes from `t()`.
"""

import json
import re
import shutil
import subprocess
import tomllib
from functools import cache

import pytest
from kernodeck_resources.bundle import index

from infra.local.stack import ROOT
from kernodeck_contracts.errors import ErrorCode
from kernodeck_contracts.languages import LANGUAGES
from kernodeck_contracts.timeline import TimelineCode
from kernodeck_payments import availability
from kernodeck_payments.domain.methods import METHODS

WEB = ROOT / "web"
SOURCES = [
    path for path in sorted((WEB / "src").rglob("*.ts*")) if "messages" not in path.parts and path.name != "schema.d.ts"
]
SERVICES_TEXTS = ROOT / "libs" / "contracts" / "kernodeck_contracts" / "texts"
PAGE_KEY = re.compile(r'^\s*"([\w.-]+)":', re.MULTILINE)
BUILT = re.compile(r"`([a-z][\w-]*(?:\.[\w-]+)*\.)\$\{")  # a key built in a template literal: `status.${...}`
# Words that are the product's or a format's, never translated.
NOT_WORDS = {"Kernodeck", "ssh-ed25519 AAAA… you@laptop"}


@cache
def schemas() -> dict:
    return json.loads((WEB / "openapi.json").read_text())["components"]["schemas"]


def enum(schema: str, field: str) -> set[str]:
    prop = schemas()[schema]["properties"][field]
    for option in prop.get("anyOf", [prop]):
        if "enum" in option:
            return set(option["enum"])
    raise AssertionError(f"{schema}.{field} is not an enum")


def families() -> dict[str, set[str]]:
    """The keys built from a value, by their prefix, with every value that can come."""
    catalog = tomllib.loads((ROOT / "services/catalog/kernodeck_catalog/catalog.toml").read_text())
    problems = {code.value for code in ErrorCode} | {"csrf_failed", "internal_error", "payload_too_large"}
    reasons = {availability.DISABLED, availability.RATE_UNAVAILABLE, availability.CHAIN_LAGGING}
    return {
        "status.": enum("Order", "status"),
        "payment.": enum("OrderPayment", "status"),
        "ledger.": enum("LedgerEntry", "reason"),
        "timeline.": {code.value for code in TimelineCode},
        "network.": {method.network for method in METHODS},
        "error.": problems,
        "field.": problems,
        "pay.reason.": reasons | {availability.ADDRESS_POOL_EMPTY},
        "pay.check.": {"open"} | enum("PaymentCheck", "decision"),
        "extension.": enum("Extension", "status"),
        "support.kind.": enum("SupportRequest", "kind"),
        "support.status.": enum("SupportRequest", "status"),
        "support.decision.": enum("SupportRequest", "decision"),
        "support.subject.": {"order", "topup", "account"},
        "support.": set(schemas()["NewSupportRequest"]["properties"]) - {"order_id", "topup_id"},  # its fields
        "resource.": {f"{r['id']}.{part}" for r in index("") for part in ("name", "description")},
        "preparation.": {p["id"] for p in catalog["preparations"]},
        "lang.": set(LANGUAGES),
    }


def page_keys(language: str = "en") -> list[str]:
    return PAGE_KEY.findall((WEB / "src" / "messages" / f"{language}.ts").read_text())


def services_keys(language: str = "en") -> list[str]:
    return list(json.loads((SERVICES_TEXTS / f"{language}.json").read_text()))


def source() -> str:
    return "\n".join(path.read_text() for path in SOURCES)


def test_every_key_built_from_a_value_is_declared_here():
    assert set(BUILT.findall(source())) <= set(families())


def test_every_message_is_used_by_a_page():
    text = source()
    named = {key for key in page_keys() + services_keys() if f'"{key}"' in text}
    built = {prefix + value for prefix, values in families().items() if f"`{prefix}${{" in text for value in values}
    assert set(page_keys()) - named - built == set()
    assert set(services_keys()) - named - built == set()


@pytest.mark.parametrize(
    "prefix", ["status.", "payment.", "ledger.", "timeline.", "network.", "pay.reason.", "pay.check.", "extension."]
)
def test_every_value_the_api_can_bring_has_its_message(prefix):
    keys = set(page_keys() + services_keys())
    assert {prefix + value for value in families()[prefix]} <= keys


def test_the_preparations_read_as_the_catalog_describes_them():
    catalog = tomllib.loads((ROOT / "services/catalog/kernodeck_catalog/catalog.toml").read_text())
    english = (WEB / "src" / "messages" / "en.ts").read_text()
    for preparation in catalog["preparations"]:
        assert f'"preparation.{preparation["id"]}": {json.dumps(preparation["description"])},' in english


def shown_texts() -> dict[str, list[str]]:
    """The text between the pages' tags and in their read attributes, as TypeScript parses the markup."""
    pages = [str(path) for path in SOURCES if path.suffix == ".tsx"]
    node = shutil.which("node") or "/usr/bin/node"
    script = WEB / "tests" / "shown_texts.mjs"
    return json.loads(subprocess.run([node, script, *pages], check=True, capture_output=True, cwd=WEB).stdout)


def test_a_page_shows_no_words_of_its_own():
    texts = shown_texts()
    assert len(texts) >= 10 and any(texts.values())  # the parse sees the markup (its punctuation, at least)
    words = {
        page: [t for t in found if re.search(r"[A-Za-z]{2,}", t) and t not in NOT_WORDS]
        for page, found in texts.items()
    }
    assert {page: found for page, found in words.items() if found} == {}


@pytest.mark.parametrize("language", ["vi", "id"])
def test_every_language_has_every_message(language):
    assert len(page_keys()) == len(set(page_keys())) > 100
    assert page_keys(language) == page_keys()
    assert services_keys(language) == services_keys()
