"""The fast lane's plugin in a pytest run of its own: a test marked unit that reaches for the broker, PostgreSQL,
a process or a database file fails, naming which; one on memory alone passes."""

import subprocess
import sys

MARKED = """
import socket, sqlite3, subprocess
import psycopg2
import pytest

pytestmark = pytest.mark.unit

def test_the_broker():
    socket.create_connection(("127.0.0.1", 5672), timeout=5)

def test_postgresql():
    psycopg2.connect("postgresql://postgres@127.0.0.1:5432/postgres")

def test_a_process():
    subprocess.run(["true"])

def test_a_database_file(tmp_path):
    sqlite3.connect(str(tmp_path / "x.db"))

def test_memory_alone():
    assert sqlite3.connect(":memory:").execute("select 1").fetchone() == (1,)
"""


def test_a_marked_test_reaching_past_memory_fails_and_says_for_what(tmp_path):
    (tmp_path / "conftest.py").write_text("from kernodeck_kit import green\n\ngreen.patch()  # as services' do\n")
    (tmp_path / "test_marked.py").write_text(MARKED)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "kernodeck_kit.unit_lane", "-p", "no:cacheprovider", "-m", "unit"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "4 failed, 1 passed" in run.stdout, run.stdout[-3000:]
    for what in ("the network", "PostgreSQL", "a process of its own", "a database file"):
        assert f"a test marked unit reached for {what}" in run.stdout
