"""The web client is generated from the gateway's OpenAPI document and kept in step with it (the message
catalogues: test_messages.py)."""

import json
import subprocess

from infra.local.stack import ROOT
from kernodeck_gateway.openapi import document

WEB = ROOT / "web"


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
