"""Cooperative I/O for nameko services; call `patch()` before anything else."""

import os


def patch() -> None:
    # Greendns fails to patch on this interpreter; the stdlib resolver is fine.
    os.environ.setdefault("EVENTLET_NO_GREENDNS", "yes")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import eventlet

    eventlet.monkey_patch()
    from psycogreen.eventlet import patch_psycopg

    patch_psycopg()
