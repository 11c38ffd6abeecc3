"""Deposit address allocation: an index per derived address, a pool for Solana."""

from datetime import datetime

from sqlalchemy import func, select, update
from sqlmodel import Session

from kernodeck_kit.db import insert_for, is_postgres
from kernodeck_payments.store.tables import AddressCounter, ChainTransferRow, PaymentIntent, SolanaPoolAddress


def take_index(session: Session, network: str) -> int:
    """The next derivation index of `network`, never handed out twice.

    One UPDATE ... RETURNING: concurrent intents serialise on the counter row
    and each reads the value its own increment produced.
    """
    session.execute(insert_for(session, AddressCounter).values(network=network, next_index=0).on_conflict_do_nothing())
    taken = session.execute(
        update(AddressCounter)
        .where(AddressCounter.network == network)
        .values(next_index=AddressCounter.next_index + 1)
        .returning(AddressCounter.next_index)
    ).scalar_one()
    return taken - 1


def take_solana_address(session: Session, intent_id: str) -> str | None:
    query = (
        select(SolanaPoolAddress)
        .where(SolanaPoolAddress.intent_id.is_(None))
        .order_by(SolanaPoolAddress.imported_at, SolanaPoolAddress.address)
        .limit(1)
    )
    if is_postgres(session.get_bind()):
        query = query.with_for_update(skip_locked=True)
    row = session.execute(query).scalar_one_or_none()
    if row is None:
        return None
    row.intent_id = intent_id
    session.add(row)
    session.flush()
    return row.address


def release_solana_addresses(session: Session, now: datetime) -> int:
    """Give back to the pool the addresses of Solana intents whose watch ended with nothing received on them.

    The intent keeps its address for its history but no longer owns it, so a later intent may take it."""
    received = select(ChainTransferRow.address).where(ChainTransferRow.network == "solana")
    ended = list(
        session.execute(
            select(PaymentIntent)
            .where(
                PaymentIntent.network == "solana",
                PaymentIntent.address_key.is_not(None),
                PaymentIntent.watch_until <= now,
                PaymentIntent.address.not_in(received),
            )
            .with_for_update(skip_locked=True)
        ).scalars()
    )
    released = 0
    for intent in ended:
        intent.address_key = None
        session.add(intent)
        session.execute(
            update(SolanaPoolAddress).where(SolanaPoolAddress.intent_id == intent.id).values(intent_id=None)
        )
        released += 1
    return released


def solana_pool_left(session: Session) -> int:
    return session.execute(
        select(func.count()).select_from(SolanaPoolAddress).where(SolanaPoolAddress.intent_id.is_(None))
    ).scalar_one()


def import_solana_addresses(session: Session, addresses: list[str], now) -> int:
    """Add the addresses not already in the pool; returns how many were new."""
    before = session.execute(select(func.count()).select_from(SolanaPoolAddress)).scalar_one()
    for address in addresses:
        session.execute(
            insert_for(session, SolanaPoolAddress).values(address=address, imported_at=now).on_conflict_do_nothing()
        )
    after = session.execute(select(func.count()).select_from(SolanaPoolAddress)).scalar_one()
    return after - before
