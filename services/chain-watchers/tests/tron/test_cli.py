"""`python -m infra.devnet.tron_double`, as `make run` starts it: a USDT token, blocks every interval."""

import signal
import subprocess
import sys
import time
from pathlib import Path

from kernodeck_watchers.chains.tron import TronClient

ROOT = Path(__file__).resolve().parents[4]


def test_the_cli_deploys_usdt_produces_blocks_and_stops_on_sigterm(devnet_installed):
    process = subprocess.Popen(
        [sys.executable, "-m", "infra.devnet.tron_double", "--port", "0", "--block-time", "0.2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        settings = dict(process.stdout.readline().strip().split("=", 1) for _ in range(4))
        client = TronClient(settings["TRON_HTTP_URL"])
        [(minted, _)] = client.address_activity([settings["TRON_DEV_ADDRESS"]], 0)
        assert minted.token == settings["TRON_USDT_CONTRACT"] and minted.amount == 10**15

        height = client.tip().height
        deadline = time.monotonic() + 10
        while client.tip().height < height + 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.tip().height >= height + 2
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
