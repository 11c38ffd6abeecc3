"""The payments migrations: a database made at an older revision reaches the models' schema, its rows kept."""

from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import MetaData, Table, select

from kernodeck_kit.db import make_engine
from kernodeck_kit.migrations import alembic_config
from kernodeck_kit.testing import assert_schema_is_the_models
from kernodeck_payments.domain.intents import address_key

PACKAGE = "kernodeck_payments"
ADDRESSES = {
    "ethereum": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",  # EIP-55 case
    "tron": "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH",  # base58: case matters
    "bitcoin": "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
}


@pytest.fixture
def at_0001(database_at) -> str:
    """The URL of a payments database at revision 0001."""
    return database_at(PACKAGE, "0001")


def test_a_database_at_0001_upgrades_to_the_models_with_each_intents_address_key_filled(at_0001):
    engine = make_engine(at_0001)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        intents = Table("payment_intents", MetaData(), autoload_with=conn)
        conn.execute(
            intents.insert(),
            [
                {
                    "id": f"pi-{network}",
                    "purpose": "order",
                    "account_id": "acc1",
                    "reference_id": "o1",
                    "asset": "X",
                    "network": network,
                    "address": address,
                    "amount": "1",
                    "amount_usd_cents": 1,
                    "rate": "1",
                    "rate_source": "file",
                    "required_confirmations": 1,
                    "status": "awaiting_transfer",
                    **dict.fromkeys(("expires_at", "watch_until", "created_at", "updated_at"), now),
                }
                for network, address in ADDRESSES.items()
            ],
        )

    command.upgrade(alembic_config(PACKAGE, at_0001), "heads")

    with engine.begin() as conn:
        intents = Table("payment_intents", MetaData(), autoload_with=conn)
        keys = dict(conn.execute(select(intents.c.network, intents.c.address_key)).all())
    engine.dispose()
    assert keys == {network: address_key(network, address) for network, address in ADDRESSES.items()}
    assert_schema_is_the_models(PACKAGE, at_0001)


def test_solana_addresses_given_back_to_the_pool_by_an_older_release_are_retired(database_at):
    url = database_at(PACKAGE, "0010_ssh_key_given")
    engine = make_engine(url)
    now = datetime.now(UTC)
    used, unused = "So1anaUsedAddress11111111111111111111111111", "So1anaFreshAddress1111111111111111111111111"
    with engine.begin() as conn:
        intents = Table("payment_intents", MetaData(), autoload_with=conn)
        pool = Table("solana_pool", MetaData(), autoload_with=conn)
        conn.execute(
            intents.insert(),
            {
                "id": "pi-sol",
                "purpose": "order",
                "account_id": "acc1",
                "reference_id": "o1",
                "asset": "SOL",
                "network": "solana",
                "address": used,
                "address_key": None,  # given back to the pool once its watch ended with nothing received
                "amount": "1",
                "amount_usd_cents": 1,
                "rate": "1",
                "rate_source": "file",
                "required_confirmations": 1,
                "status": "expired",
                **dict.fromkeys(("expires_at", "watch_until", "created_at", "updated_at"), now),
            },
        )
        conn.execute(pool.insert(), [{"address": a, "intent_id": None, "imported_at": now} for a in (used, unused)])

    command.upgrade(alembic_config(PACKAGE, url), "heads")

    with engine.begin() as conn:
        pool = Table("solana_pool", MetaData(), autoload_with=conn)
        owners = dict(conn.execute(select(pool.c.address, pool.c.intent_id)).all())
    engine.dispose()
    assert owners == {used: "pi-sol", unused: None}
