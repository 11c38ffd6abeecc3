"""From the block that brings a payment's last required confirmation to the order's `paid` event.

Real regtest bitcoind and anvil; the watchers wake on the nodes' block
notifications (bitcoind's ZMQ `hashblock`, anvil's `newHeads` over
websocket), their polling slowed to `SLOW_POLL_S` so that only notifications
count. Each sample: pay an order's instructions with the node's own wallet,
mine all but the last confirmation, wait until payments shows the transfer
confirming, then mine the last block and time until orders publishes `paid`.
"""

import asyncio
import time
from decimal import Decimal
from pathlib import Path

import httpx

from bench.bench_payments import ORDER, PaidEvents
from bench.measure import bearer_for_new_customer, percentiles
from infra.local.devnet import DEV_CONFIRMATIONS, Devnet
from infra.local.isolation import running_stack

SAMPLES = 20
SLOW_POLL_S = 30


def block_to_paid(log_dir: Path) -> list[str]:
    devnet = Devnet(log_dir / "devnet", networks=("bitcoin", "ethereum"), watcher_status_s=1.0)
    env = devnet.start(log=lambda line: None)
    try:
        if not devnet.up:
            return [f"block -> paid: skipped, no node installed ({devnet.skipped})"]
        slow_polls = {f"watcher-{network}": {"WATCHER_POLL_INTERVAL_S": str(SLOW_POLL_S)} for network in devnet.up}
        with running_stack(log_dir, "kd_bench_chain", env, devnet.up, process_env=slow_polls) as stack:
            return asyncio.run(_measure(stack, devnet))
    finally:
        devnet.stop()


async def _measure(stack, devnet) -> list[str]:
    lines = []
    auth = await bearer_for_new_customer(stack.url)
    async with (
        PaidEvents(stack.env["AMQP_URI"]) as paid,
        httpx.AsyncClient(base_url=stack.url, headers=auth, timeout=30) as client,
    ):
        for network, asset in (("bitcoin", "BTC"), ("ethereum", "ETH")):
            if network not in devnet.up:
                continue
            chain = _Chain(devnet.nodes[network], network)
            samples = [await _sample(client, paid, chain, asset) for _ in range(SAMPLES)]
            p = percentiles(samples)
            how = "ZMQ hashblock" if network == "bitcoin" else "newHeads over websocket"
            lines.append(
                f"block with the last confirmation -> order paid, {network} ({how}): "
                f"p50 {p['p50_ms']:.0f} ms  p99 {p['p99_ms']:.0f} ms over {SAMPLES} orders (target p50 < 1 s): "
                f"{'met' if p['p50_ms'] < 1000 else 'NOT met'}"
            )
    return lines


async def _sample(client, paid, chain, asset: str) -> float:
    order = (await client.post("/api/v1/orders", json=ORDER)).json()
    payment = (
        await client.post(f"/api/v1/orders/{order['id']}/payments", json={"asset": asset, "network": chain.network})
    ).json()
    chain.pay(payment["address"], int(payment["amount_base_units"]))
    chain.mine(DEV_CONFIRMATIONS[chain.network] - 1 - chain.blocks_per_payment)
    deadline = time.monotonic() + 30
    while (status := (await client.get(f"/api/v1/payments/{payment['id']}")).json()["status"]) != "confirming":
        if time.monotonic() > deadline:
            raise TimeoutError(f"{chain.network}: the payment stayed {status}")
        await asyncio.sleep(0.05)
    waiting = paid.expect(order["id"])
    started = time.perf_counter()
    chain.mine(1)
    return await asyncio.wait_for(waiting, timeout=30) - started


class _Chain:
    def __init__(self, node, network: str):
        self.node, self.network = node, network
        self.miner = node.rpc("getnewaddress", "", "bech32") if network == "bitcoin" else None
        self.blocks_per_payment = 0 if network == "bitcoin" else 1  # anvil mines each transaction at once

    def pay(self, address: str, base_units: int) -> None:
        if self.network == "bitcoin":
            self.node.rpc("sendtoaddress", address, str(Decimal(base_units).scaleb(-8)))
        else:
            self.node.rpc(
                "eth_sendTransaction", {"from": self.node.accounts[0], "to": address, "value": hex(base_units)}
            )

    def mine(self, blocks: int) -> None:
        if self.network == "bitcoin":
            self.node.rpc("generatetoaddress", blocks, self.miner)
        else:
            self.node.rpc("anvil_mine", hex(blocks))
