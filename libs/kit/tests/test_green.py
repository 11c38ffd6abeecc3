"""Name lookups under the kit's patching: a slow DNS answer holds up its own caller, never the process."""

import os
import socket

import eventlet
from eventlet import patcher

from kernodeck_kit import green

OS_SLEEP = patcher.original("time").sleep
LOOKUP_S = 0.5


def test_other_greenthreads_run_while_a_name_is_looked_up(monkeypatch):
    system_lookup = green._system_getaddrinfo
    looked_up = []

    def slow_lookup(host, *args, **kwargs):
        looked_up.append(host)
        OS_SLEEP(LOOKUP_S)  # as a slow DNS server does: the calling OS thread waits, nothing yields
        return system_lookup("127.0.0.1", *args, **kwargs)

    monkeypatch.setattr(green, "_system_getaddrinfo", slow_lookup)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    ticks = 0

    def tick():
        nonlocal ticks
        while True:
            eventlet.sleep(0.01)
            ticks += 1

    ticker = eventlet.spawn(tick)
    try:
        socket.create_connection(("slow.invalid", listener.getsockname()[1]), timeout=2).close()
    finally:
        ticker.kill()
        listener.close()
    assert looked_up == ["slow.invalid"]
    assert ticks >= 20  # about 50 in the lookup's half second; none had it blocked the hub


def test_a_postgres_connection_may_take_the_number_of_a_socket_closed_under_a_waiting_reader(pg_database):
    import psycopg2
    from eventlet import hubs

    url = pg_database().replace("postgresql+psycopg2://", "postgresql://")
    reader, writer = socket.socketpair()
    stale = reader.fileno()
    told = []

    def read_until_closed():  # as a library's reader thread (a raw greenlet under eventlet) does
        try:
            hubs.trampoline(stale, read=True)
        except hubs.IOClosed:
            told.append(stale)

    eventlet.spawn_n(read_until_closed)
    eventlet.sleep(0)
    os.close(stale)  # closed behind the hub's back, as libpq or the garbage collector do
    reader.detach()
    connections = [psycopg2.connect(url) for _ in range(3)]  # one of them takes the freed number
    try:
        assert stale in [c.fileno() for c in connections]
        for connection in connections:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                assert cursor.fetchone() == (1,)
        eventlet.sleep(0)
        assert told == [stale]  # the old reader learns that its socket is gone
    finally:
        for connection in connections:
            connection.close()
        writer.close()
