"""A watched address that holds more than its watcher saw paying it: a review item for an operator.

The watcher's balance check (chain-watchers' balance_check) is the backstop
for transfers it cannot see (ETH or TRX sent by a contract, a transaction it
could not read). One item per address, token and balance: the same difference
told again changes nothing; a larger one is a new item.
"""

from datetime import datetime

from sqlmodel import Session

from kernodeck_contracts.events import BalanceMismatch
from kernodeck_payments.store.intents import intent_at
from kernodeck_payments.store.reviews import open_review

REASON = "balance_mismatch"


def record_balance_mismatch(session: Session, event: BalanceMismatch, now: datetime) -> bool:
    """Queue the review item, with the intent owning the address when there is one; True when queued now."""
    owner = intent_at(session, event.network, event.address)
    asset = f"{event.token}:" if event.token else ""  # the network's own coin keeps its keys of before
    key = f"{REASON}:{event.network}:{event.address}:{asset}{event.balance}"
    return open_review(
        session,
        key,
        REASON,
        now,
        owner.id if owner else None,
        owner.account_id if owner else None,
    )
