"""Who the client is, as an address: the TCP peer, or behind trusted proxies the right-most
X-Forwarded-For hop that is not one of them (every hop to its right was added by a proxy we trust;
everything to its left the client could have written itself)."""

import functools
import logging
from ipaddress import IPv4Network, IPv6Network, ip_address

log = logging.getLogger(__name__)

Networks = tuple[IPv4Network | IPv6Network, ...]


def _trusted(hop: str, trusted: Networks) -> bool:
    try:
        address = ip_address(hop)
    except ValueError:
        return False
    return any(address in network for network in trusted)


def client_address(peer: str | None, forwarded_for: list[str], trusted: Networks) -> str:
    """`forwarded_for`: every X-Forwarded-For header of the request, in order."""
    hops = [hop.strip() for header in forwarded_for for hop in header.split(",") if hop.strip()]
    if hops and not trusted:
        _forwarded_for_ignored()
    nearest = peer or "unknown"
    if not _trusted(nearest, trusted):
        return nearest
    for hop in reversed(hops):
        if _trusted(hop, trusted):
            nearest = hop
            continue
        try:
            return str(ip_address(hop))
        except ValueError:
            return nearest  # a trusted proxy passed on something that is no address: count the proxy
    return nearest  # every hop is trusted: the left-most one is the client


@functools.cache
def _forwarded_for_ignored() -> None:
    """Once per process: a client may write the header itself, but a proxy in front always does."""
    log.warning(
        "requests carry X-Forwarded-For and GATEWAY_TRUSTED_PROXIES is none: if a proxy stands in front of"
        " the gateway, name it there, else every client counts as that proxy"
    )
