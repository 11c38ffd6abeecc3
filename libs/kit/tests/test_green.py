"""Name lookups under the kit's patching: a slow DNS answer holds up its own caller, never the process."""

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
