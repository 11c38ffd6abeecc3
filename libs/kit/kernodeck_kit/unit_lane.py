"""pytest plugin of the fast lane (`make test-unit`): the tests marked `unit` run on memory units alone.

Loaded before any conftest (`pytest -p kernodeck_kit.unit_lane -m unit ...`), it fails a test that reaches for
the network (the broker, PostgreSQL, a node), starts a process or opens a database file, and says which: such a
test belongs to the other lanes, without the mark.
"""

import socket
import sqlite3
import subprocess

import pytest

# The socket class before eventlet patches the process (a service's conftest patches it on import); the green
# one, socket.socket once patched, is refused too.
_SOCKET = socket.socket


class OutOfLane(AssertionError):
    pass


def _refuse(what: str):
    def refused(*_args, **_kwargs):
        raise OutOfLane(f"a test marked unit reached for {what}: it belongs to the other lanes (drop its mark)")

    return refused


def _sqlite_in_memory_only(database, *args, **kwargs):
    if str(database) not in ("", ":memory:") and "mode=memory" not in str(database):
        _refuse(f"a database file ({database})")()
    return _sqlite_connect(database, *args, **kwargs)


_sqlite_connect = sqlite3.connect


@pytest.fixture(autouse=True)
def _memory_units_only(monkeypatch):
    for cls in {_SOCKET, socket.socket}:
        for method in ("connect", "connect_ex"):
            monkeypatch.setattr(cls, method, _refuse("the network"))
    monkeypatch.setattr(subprocess.Popen, "__init__", _refuse("a process of its own"))
    monkeypatch.setattr(sqlite3, "connect", _sqlite_in_memory_only)
    try:
        import psycopg2
    except ImportError:
        return
    monkeypatch.setattr(psycopg2, "connect", _refuse("PostgreSQL"))
