"""The guide's backup and restore (infra/k8s/README.md: Back up and restore a database), run with the same
scripts on this machine's PostgreSQL: a service's database dumped, then damaged (rows gone, a table added),
restored as it was; a restore from a damaged file changes nothing; old backups are removed."""

import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text

from infra.local.isolation import PG_ADMIN_URL

SCRIPTS = Path(__file__).resolve().parent / "postgres"


@pytest.fixture
def database():
    """A service's database as the cluster has it: its own role owning it, a ledger with rows."""
    name = f"kd_backup_{uuid.uuid4().hex[:8]}"
    admin = create_engine(PG_ADMIN_URL.replace("postgresql://", "postgresql+psycopg2://"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE ROLE "{name}" LOGIN'))
        conn.execute(text(f'CREATE DATABASE "{name}" OWNER "{name}"'))
    engine = create_engine(admin.url.set(database=name))
    with engine.begin() as conn:
        conn.execute(text(f'SET ROLE "{name}"'))
        conn.execute(text("CREATE TABLE ledger (id serial PRIMARY KEY, account text NOT NULL, cents bigint NOT NULL)"))
        conn.execute(
            text("INSERT INTO ledger (account, cents) SELECT 'acc-' || n, n * 100 FROM generate_series(1, 500) n")
        )
    try:
        yield name, engine
    finally:
        engine.dispose()
        with admin.connect() as conn:
            for (db,) in conn.execute(text("SELECT datname FROM pg_database WHERE datname LIKE :n"), {"n": f"{name}%"}):
                conn.execute(text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{name}"'))
        admin.dispose()


def run(script: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    url = make_url(PG_ADMIN_URL)
    pg = {"PGHOST": url.host or "127.0.0.1", "PGPORT": str(url.port or 5432), "PGUSER": url.username or "postgres"}
    return subprocess.run(
        [str(SCRIPTS / script), *args], env={**os.environ, **pg, **env}, capture_output=True, text=True, timeout=300
    )


def ledger(engine) -> tuple[int, int, bool]:
    with engine.connect() as conn:
        rows, cents = conn.execute(text("SELECT count(*), coalesce(sum(cents), 0) FROM ledger")).one()
        extra = conn.execute(text("SELECT to_regclass('public.intruder') IS NOT NULL")).scalar()
    return rows, cents, extra


def test_a_database_backed_up_then_damaged_is_restored_as_it_was(database, tmp_path):
    name, engine = database
    old = tmp_path / "2020-01-01T000000Z"
    old.mkdir()
    os.utime(old, (time.time() - 30 * 86400,) * 2)

    done = run("backup.sh", str(tmp_path), env={"BACKUP_DATABASES": name, "BACKUP_KEEP_DAYS": "14"})
    assert done.returncode == 0, done.stderr
    [folder] = [p for p in tmp_path.iterdir()]  # the old one removed, no partial one left
    assert folder.name.startswith("20") and folder.name != old.name
    dump = folder / f"{name}.dump"
    before = ledger(engine)
    assert before == (500, 100 * 500 * 501 // 2, False)

    with engine.begin() as conn:
        conn.execute(text("DELETE FROM ledger WHERE id % 2 = 0"))
        conn.execute(text("CREATE TABLE intruder (id int)"))
    assert ledger(engine) != before

    done = run("restore.sh", name, str(dump), env={})
    assert done.returncode == 0, done.stderr
    engine.dispose()  # its connections were ended: the database in its place is the restored one
    assert ledger(engine) == before
    with engine.connect() as conn:
        assert (
            conn.execute(
                text("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = :n"), {"n": name}
            ).scalar()
            == name
        )


def test_a_restore_from_a_damaged_file_changes_nothing(database, tmp_path):
    name, engine = database
    assert run("backup.sh", str(tmp_path), env={"BACKUP_DATABASES": name}).returncode == 0
    [dump] = tmp_path.glob(f"*/{name}.dump")
    damaged = tmp_path / "damaged.dump"
    damaged.write_bytes(dump.read_bytes()[: len(dump.read_bytes()) // 2])
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM ledger WHERE id > 100"))
    now = ledger(engine)
    assert run("restore.sh", name, str(damaged), env={}).returncode != 0
    assert ledger(engine) == now
    with engine.connect() as conn:  # nothing left of the attempt
        assert (
            conn.execute(text("SELECT count(*) FROM pg_database WHERE datname LIKE :n"), {"n": f"{name}_%"}).scalar()
            == 0
        )
