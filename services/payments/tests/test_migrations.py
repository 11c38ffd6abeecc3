"""The payments migrations: a database made at an older revision reaches the models' schema, its rows kept."""

import subprocess
import sys
from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import MetaData, Table, select

from kernodeck_kit.db import make_engine
from kernodeck_kit.migrations import alembic_config
from kernodeck_payments.domain.intents import address_key

PACKAGE = "kernodeck_payments"
ADDRESSES = {
    "ethereum": "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",  # EIP-55 case
    "tron": "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH",  # base58: case matters
    "bitcoin": "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
}
# In a process of its own: run with the other suites, this one's SQLModel metadata holds their tables too.
ALEMBIC_CHECK = (
    "import sys; from alembic import command; from kernodeck_kit.migrations import alembic_config; "
    "command.check(alembic_config(sys.argv[1], sys.argv[2]))"
)


@pytest.fixture(params=["postgresql", "sqlite"])
def at_0001(request, tmp_path) -> str:
    """The URL of a payments database at revision 0001."""
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_database")(PACKAGE)
        command.downgrade(alembic_config(PACKAGE, url), "base")
    else:
        url = f"sqlite:///{tmp_path / 'payments.db'}"
    command.upgrade(alembic_config(PACKAGE, url), "0001")
    return url


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

    command.upgrade(alembic_config(PACKAGE, at_0001), "head")

    with engine.begin() as conn:
        intents = Table("payment_intents", MetaData(), autoload_with=conn)
        keys = dict(conn.execute(select(intents.c.network, intents.c.address_key)).all())
    engine.dispose()
    assert keys == {network: address_key(network, address) for network, address in ADDRESSES.items()}
    check = subprocess.run([sys.executable, "-c", ALEMBIC_CHECK, PACKAGE, at_0001], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
