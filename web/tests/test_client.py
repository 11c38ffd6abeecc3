"""The web client is generated from the gateway's OpenAPI document and kept in step with it; the message
catalogues have the same keys in every language."""

import json
import re
import subprocess

import pytest

from infra.local.stack import ROOT
from kernodeck_gateway.openapi import document

WEB = ROOT / "web"
MESSAGES = WEB / "src" / "messages"
KEY = re.compile(r'^\s*"([\w.]+)":', re.MULTILINE)


def test_the_committed_document_is_the_gateways():
    committed = json.loads((WEB / "openapi.json").read_text())
    assert committed == document(), (
        "the gateway's OpenAPI document changed: regenerate the client "
        "(.venv/bin/python -m kernodeck_gateway.openapi > web/openapi.json && cd web && npm run client)"
    )


def test_the_committed_client_is_generated_from_the_document(tmp_path):
    generator = WEB / "node_modules" / ".bin" / "openapi-typescript"
    assert generator.exists(), "run `make web` first: it installs the generator"
    out = tmp_path / "schema.d.ts"
    subprocess.run([generator, WEB / "openapi.json", "-o", out], check=True, capture_output=True, cwd=WEB)
    assert out.read_text() == (WEB / "src" / "api" / "schema.d.ts").read_text(), "run `cd web && npm run client`"


@pytest.mark.parametrize("language", ["vi", "id"])
def test_every_language_has_every_message(language):
    english = KEY.findall((MESSAGES / "en.ts").read_text())
    assert len(english) == len(set(english)) > 100
    assert KEY.findall((MESSAGES / f"{language}.ts").read_text()) == english
