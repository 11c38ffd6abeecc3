"""Cooperative I/O for nameko services; call `patch()` before anything else."""

import os
import socket


def patch() -> None:
    # Greendns fails to patch on this interpreter: names go to the system resolver, in threads (below).
    os.environ.setdefault("EVENTLET_NO_GREENDNS", "yes")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import eventlet

    eventlet.monkey_patch()
    from psycopg2 import extensions

    extensions.set_wait_callback(wait_for_postgres)
    _look_up_names_in_threads()


def wait_for_postgres(conn, timeout=None) -> None:
    """psycopg2's wait callback: poll the connection, yielding to the hub while its socket is not ready.

    libpq opens and closes its sockets behind eventlet's back, so a descriptor it is given may still
    carry the listener of a greenthread that waited on the socket which held that number before (an
    SSH transport's reader, closed meanwhile): eventlet would refuse the second reader. The hub is
    told the descriptor is new before each wait, as eventlet's own sockets do when they open."""
    import psycopg2
    from eventlet.hubs import notify_opened, trampoline
    from psycopg2 import extensions

    fileno = conn.fileno()
    notify_opened(fileno)
    while True:
        state = conn.poll()
        if state == extensions.POLL_OK:
            return
        if state == extensions.POLL_READ:
            trampoline(fileno, read=True)
        elif state == extensions.POLL_WRITE:
            trampoline(fileno, write=True)
        else:
            raise psycopg2.OperationalError(f"bad result from poll: {state!r}")


_system_getaddrinfo = socket.getaddrinfo


def _getaddrinfo(*args, **kwargs):
    from eventlet import tpool

    return tpool.execute(_system_getaddrinfo, *args, **kwargs)


def _look_up_names_in_threads() -> None:
    """The system resolver blocks its OS thread: in the hub's, one slow DNS answer would stall every
    greenthread (rate fetches, node RPC, the broker's reconnects). Lookups run in eventlet's thread
    pool instead, for the stdlib and for eventlet's own create_connection."""
    from eventlet.green import socket as green_socket

    socket.getaddrinfo = green_socket.getaddrinfo = _getaddrinfo
