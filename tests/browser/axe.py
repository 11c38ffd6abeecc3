"""axe-core (from web/node_modules) run in the page: the violations of impact serious or critical."""

from playwright.sync_api import Page

from infra.local.stack import ROOT

AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"


def serious_violations(page: Page) -> list[dict]:
    """The page's context must bypass the page's CSP (axe is injected inline)."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [
        {"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:3]}
        for v in found
        if v["impact"] in ("serious", "critical")
    ]
