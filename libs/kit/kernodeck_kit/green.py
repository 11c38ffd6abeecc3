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
    from psycogreen.eventlet import patch_psycopg

    patch_psycopg()
    _look_up_names_in_threads()


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
