"""`kernodeck-admin payments check-xpubs`: the addresses each configured account key derives for its first
indices, to compare with what the operator's wallet shows for the same account (or against --expect)."""

import sys

from kernodeck_chains.derivation import derive_deposit_address
from kernodeck_chains.networks import chain_params
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.methods import DERIVED_NETWORKS


def derived_addresses(settings: PaymentsSettings, count: int) -> dict[str, list[str]]:
    """{network: [address at index 0, 1, ...]} for each network with an account key."""
    found = {}
    for network in DERIVED_NETWORKS:
        if key := settings.xpub(network):
            params = chain_params(network, settings.chain(network))
            found[network] = [derive_deposit_address(network, key, i, params).address for i in range(count)]
    return found


def check_xpubs(settings: PaymentsSettings, count: int, expected: list[list[str]]) -> int:
    derived = derived_addresses(settings, max([count, *(int(index) + 1 for _, index, _ in expected)]))
    for network, addresses in derived.items():
        for index, address in enumerate(addresses[:count]):
            print(f"{network} {index} {address}")
    wrong = [
        (network, index, address)
        for network, index, address in expected
        if derived.get(network, [None] * (int(index) + 1))[int(index)] != address
    ]
    for network, index, address in wrong:
        print(
            f"MISMATCH {network} {index}: the wallet shows {address}, the key derives "
            f"{derived[network][int(index)] if network in derived else 'nothing (no key)'}",
            file=sys.stderr,
        )
    return 1 if wrong else 0
