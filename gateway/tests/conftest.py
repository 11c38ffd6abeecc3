import pytest


@pytest.fixture(autouse=True)
def no_proxy_in_front(monkeypatch):
    """The gateway starts only when told whether a proxy stands in front of it: these tests call it directly."""
    monkeypatch.setenv("GATEWAY_TRUSTED_PROXIES", "none")
