"""Loaded by a service started with this folder on PYTHONPATH (bench_busy_block --profile): SIGUSR1 starts
cProfile in the process, SIGUSR2 stops it and writes the profile to $KERNODECK_PROFILE_OUT, so that only the
window the benchmark times is profiled, not the start nor the orders' creation."""

import cProfile
import os
import signal

_profiles: list[cProfile.Profile] = []


def _start(_signum, _frame) -> None:
    profile = cProfile.Profile()
    _profiles.append(profile)
    profile.enable()


def _stop(_signum, _frame) -> None:
    if _profiles:
        profile = _profiles.pop()
        profile.disable()
        profile.dump_stats(os.environ["KERNODECK_PROFILE_OUT"])


if os.environ.get("KERNODECK_PROFILE_OUT"):
    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, _stop)
