"""The operator's account keys, checked at start: a private key stops the service, a bad public key switches
its network's methods off (reason `disabled`) and the service runs. No message ever repeats a key."""

import logging
from functools import cache

from kernodeck_chains.derivation import derive_deposit_address
from kernodeck_chains.hd import ExtendedKeyError, ExtendedPrivateKeyError, parse_extended_public_key
from kernodeck_chains.networks import chain_params

log = logging.getLogger(__name__)

SEED_PHRASE_WORDS = 12  # the shortest BIP39 mnemonic
ADVICE = (
    "remove it from the environment (and treat it as exposed), then set the account's extended PUBLIC key; "
    "payments is watch-only and never takes a secret"
)


class PrivateKeyConfigured(Exception):
    """A secret where an extended public key belongs. Not a ValueError, so that settings validation does not
    turn it into an error that repeats the value."""


def refuse_secrets(keys: dict[str, str]) -> None:
    """Raise PrivateKeyConfigured when a configured key (setting name -> value) is a private key or a seed."""
    for name, value in keys.items():
        if len(value.split()) >= SEED_PHRASE_WORDS:
            raise PrivateKeyConfigured(f"{name} holds what looks like a seed phrase: {ADVICE}")
        try:
            if value:
                parse_extended_public_key(value)
        except ExtendedPrivateKeyError:
            raise PrivateKeyConfigured(f"{name} holds an extended PRIVATE key: {ADVICE}") from None
        except ExtendedKeyError:
            pass  # a bad public key: its methods stay switched off (key_problem)


@cache
def key_problem(network: str, xpub: str, chain: str) -> str | None:
    """Why `xpub` cannot give `network` addresses on `chain` (logged the first time), or None when it can."""
    try:
        derive_deposit_address(network, xpub, 0, chain_params(network, chain))
    except ExtendedKeyError as error:
        log.error(
            "an account key is unusable: its network's methods stay disabled",
            extra={"network": network, "setting": f"PAYMENTS_{network.upper()}_XPUB", "reason": str(error)},
        )
        return str(error)
    return None
