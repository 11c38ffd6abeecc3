"""From the block that brings a payment's last required confirmation to the order's `paid` event, on every network.

Real regtest bitcoind and litecoind, real anvil, the Tron and Solana doubles
(blocks on request here, as regtest mines); the watchers wake on their nodes'
block announcements (bitcoind's ZMQ `hashblock`, litecoind's
`waitforblockheight` long poll, anvil's `newHeads` over websocket, the Tron
node's ZMQ `block` topic, Solana's `slotSubscribe`), their polling slowed to
`SLOW_POLL_S` so that only announcements count. Each sample: pay an order's
instructions with the node's own tools, make all but the last block the
payment needs, wait until payments shows the transfer one confirmation short,
then make the last block and time until orders publishes `paid`.

The baseline, measured on the same stack in the same run: a `transfer_confirmed`
published on the broker as a watcher would, to `paid` (everything after the watcher).
"""

import asyncio
import os
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_payments import ORDER, PaidEvents, confirmed_to_paid
from bench.measure import bearer_for_new_customer, percentiles
from infra.local.devnet import DEV_CONFIRMATIONS, NETWORKS, Devnet
from infra.local.isolation import running_stack

SAMPLES = 20
SLOW_POLL_S = 30
TARGET_MS = 100
# network: (asset, how its watcher hears of blocks, the network's block time in seconds)
NETWORKS_MEASURED = {
    "bitcoin": ("BTC", "ZMQ hashblock", 600),
    "litecoin": ("LTC", "waitforblockheight long poll", 150),
    "ethereum": ("ETH", "newHeads over websocket", 12),
    "tron": ("TRX", "ZMQ block topic", 3),
    "solana": ("SOL", "slotSubscribe over websocket", 0.4),
}


def block_to_paid(log_dir: Path) -> list[str]:
    devnet = Devnet(log_dir / "devnet", networks=NETWORKS, clocked_doubles=False, watcher_status_s=1.0)
    env = devnet.start(log=lambda line: None)
    try:
        if not devnet.up:
            return [f"block -> paid: skipped, no node installed ({devnet.skipped})"]
        slow_polls = {f"watcher-{network}": {"WATCHER_POLL_INTERVAL_S": str(SLOW_POLL_S)} for network in devnet.up}
        # Every paid order holds its GPU: two more 64-GPU rtx4090 nodes than the stack's one.
        capacity = {"extra_ports": {"rtx4090": 2}}
        with running_stack(log_dir, "kd_bench_chain", env, devnet.up, process_env=slow_polls, **capacity) as stack:
            if pool := devnet.import_solana_pool({**os.environ, **stack.env}):
                print(pool)
            lines = [f"{network}: not running ({why})" for network, why in devnet.skipped.items()]
            return lines + asyncio.run(_measure(stack, devnet))
    finally:
        devnet.stop()


async def _measure(stack, devnet) -> list[str]:
    lines = []
    auth = await bearer_for_new_customer(stack.url)
    baseline = (await confirmed_to_paid(stack.url, auth, stack.env["AMQP_URI"], samples=SAMPLES))["p50_ms"]
    lines.append(f"baseline, transfer_confirmed on the broker -> order paid: p50 {baseline:.0f} ms over {SAMPLES}")
    async with (
        PaidEvents(stack.env["AMQP_URI"]) as paid,
        httpx.AsyncClient(base_url=stack.url, headers=auth, timeout=30) as client,
    ):
        for network in devnet.up:
            asset, how, block_s = NETWORKS_MEASURED[network]
            chain = _Chain(devnet.nodes[network], network)
            samples = [await _sample(client, paid, chain, asset) for _ in range(SAMPLES)]
            p = percentiles(samples)
            lines.append(
                f"block with the last confirmation -> order paid, {network} ({how}): "
                f"p50 {p['p50_ms']:.0f} ms  p99 {p['p99_ms']:.0f} ms over {SAMPLES} orders, "
                f"{p['p50_ms'] / 1000 / block_s:.3f} of its {block_s:g} s block time, "
                f"{p['p50_ms'] / baseline:.1f}x the baseline (target p50 < {TARGET_MS} ms): "
                f"{'met' if p['p50_ms'] < TARGET_MS else 'NOT met'}"
            )
    return lines


async def _sample(client, paid, chain, asset: str) -> float:
    order = _created(await client.post("/api/v1/orders", json=ORDER))
    intent = {"asset": asset, "network": chain.network}
    payment = _created(await client.post(f"/api/v1/orders/{order['id']}/payments", json=intent))
    chain.pay(payment["address"], int(payment["amount_base_units"]))
    required = DEV_CONFIRMATIONS[chain.network]
    chain.mine(required - 1 + chain.blocks_to_confirm - chain.blocks_per_payment)
    deadline = time.monotonic() + 30
    while (confirmations := await _confirmations(client, payment["id"])) != required - 1:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{chain.network}: the payment stayed at {confirmations} confirmations")
        await asyncio.sleep(0.05)
    waiting = paid.expect(order["id"])
    started = time.perf_counter()
    chain.mine(1)
    return await asyncio.wait_for(waiting, timeout=30) - started


def _created(response: httpx.Response) -> dict:
    if response.status_code != 201:
        raise RuntimeError(f"{response.request.url.path}: {response.status_code} {response.text}")
    return response.json()


async def _confirmations(client, payment_id: str) -> int:
    transfers = (await client.get(f"/api/v1/payments/{payment_id}")).json()["transfers"]
    return transfers[0]["confirmations"] if transfers else 0


class _Chain:
    """Paying and making blocks with each node's own tools."""

    def __init__(self, node, network: str):
        self.node, self.network = node, network
        self.miner = node.rpc("getnewaddress", "", "bech32") if network in ("bitcoin", "litecoin") else None
        self.blocks_per_payment = 1 if network == "ethereum" else 0  # anvil mines each transaction at once
        self.blocks_to_confirm = 1 if network == "solana" else 0  # `confirmed` is the block below the newest

    def pay(self, address: str, base_units: int) -> None:
        if self.network in ("bitcoin", "litecoin"):
            self.node.rpc("sendtoaddress", address, str(Decimal(base_units).scaleb(-8)))
        elif self.network == "ethereum":
            self.node.rpc(
                "eth_sendTransaction", {"from": self.node.accounts[0], "to": address, "value": hex(base_units)}
            )
        elif self.network == "tron":
            self.node.transfer(address, base_units)
        else:
            self.node.rpc("requestAirdrop", address, base_units)

    def mine(self, blocks: int) -> None:
        if blocks <= 0:
            return
        if self.network in ("bitcoin", "litecoin"):
            self.node.rpc("generatetoaddress", blocks, self.miner)
        elif self.network == "ethereum":
            self.node.rpc("anvil_mine", hex(blocks))
        elif self.network == "tron":
            self.node.mine(blocks)
        else:
            self.node.rpc("double_produceBlocks", blocks)


if __name__ == "__main__":  # this benchmark alone; `make bench` runs it with the others
    with tempfile.TemporaryDirectory() as logs:
        for line in block_to_paid(Path(logs)):
            print(line)
