"""Who the client is, as an address: the TCP peer, or behind trusted proxies the right-most
X-Forwarded-For hop that is not one of them (every hop to its right was added by a proxy we trust;
everything to its left the client could have written itself)."""

from ipaddress import IPv4Network, IPv6Network, ip_address

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
