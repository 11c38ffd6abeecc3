"""The client's address behind trusted proxies: the right-most X-Forwarded-For hop none of them is."""

import pytest
from pydantic import ValidationError

from kernodeck_gateway.client_address import _forwarded_for_ignored, client_address
from kernodeck_gateway.settings import GatewaySettings

pytestmark = pytest.mark.unit

PROXIES = GatewaySettings(trusted_proxies="10.0.0.0/8, 2001:db8:ffff::/48").trusted_proxies


@pytest.mark.parametrize(
    ("peer", "forwarded_for", "client"),
    [
        # No trusted proxy in front: the peer, whatever the header claims.
        ("198.51.100.7", ["203.0.113.1"], "198.51.100.7"),
        ("198.51.100.7", [], "198.51.100.7"),
        # One trusted proxy: the hop it added, not what the client wrote to its left.
        ("10.0.0.2", ["203.0.113.66, 198.51.100.7"], "198.51.100.7"),
        # Two trusted proxies, one header each or one header for both.
        ("10.0.0.2", ["203.0.113.66, 198.51.100.7", "10.0.0.3"], "198.51.100.7"),
        ("10.0.0.2", ["198.51.100.7, 10.9.9.9"], "198.51.100.7"),
        ("2001:db8:ffff::1", ["2001:db8:1::5"], "2001:db8:1::5"),
        # A trusted proxy with nothing to forward is the client itself.
        ("10.0.0.2", [], "10.0.0.2"),
        ("10.0.0.2", ["10.0.0.1"], "10.0.0.1"),
        # Something that is no address, next to a trusted proxy: that proxy is counted.
        ("10.0.0.2", ["198.51.100.7, not-an-address"], "10.0.0.2"),
        ("10.0.0.2", ["198.51.100.7, 10.0.0.5, garbage"], "10.0.0.2"),
        (None, ["198.51.100.7"], "unknown"),
    ],
)
def test_the_client_is_the_rightmost_untrusted_hop(peer, forwarded_for, client):
    assert client_address(peer, forwarded_for, PROXIES) == client


def test_without_trusted_proxies_the_header_is_ignored():
    assert client_address("127.0.0.1", ["203.0.113.1"], ()) == "127.0.0.1"


def test_the_setting_reads_a_comma_separated_list_or_none():
    assert [str(n) for n in GatewaySettings(trusted_proxies="127.0.0.1, ::1").trusted_proxies] == [
        "127.0.0.1/32",
        "::1/128",
    ]
    assert GatewaySettings(trusted_proxies="none").trusted_proxies == ()
    assert GatewaySettings(trusted_proxies=" None ").trusted_proxies == ()


@pytest.mark.parametrize("unset", [{}, {"trusted_proxies": ""}, {"trusted_proxies": " , "}])
def test_the_gateway_refuses_to_start_without_saying_whether_a_proxy_is_in_front(monkeypatch, unset):
    monkeypatch.delenv("GATEWAY_TRUSTED_PROXIES", raising=False)
    with pytest.raises(ValidationError, match="GATEWAY_TRUSTED_PROXIES must be set: 'none'"):
        GatewaySettings(**unset)


def test_the_environment_says_it(monkeypatch):
    monkeypatch.setenv("GATEWAY_TRUSTED_PROXIES", "10.0.0.0/8")
    assert [str(n) for n in GatewaySettings().trusted_proxies] == ["10.0.0.0/8"]


def test_a_proxy_list_that_is_no_list_of_addresses_is_refused():
    with pytest.raises(ValidationError):
        GatewaySettings(trusted_proxies="proxy.example.org")


def test_a_forwarded_for_header_with_no_proxy_named_is_warned_of_once(caplog):
    _forwarded_for_ignored.cache_clear()
    assert client_address("10.0.0.2", ["203.0.113.1"], PROXIES) == "203.0.113.1"
    assert client_address("192.0.2.9", [], ()) == "192.0.2.9"
    assert not caplog.records
    for _ in range(3):
        assert client_address("192.0.2.9", ["203.0.113.1"], ()) == "192.0.2.9"
    assert ["X-Forwarded-For" in record.getMessage() for record in caplog.records] == [True]
