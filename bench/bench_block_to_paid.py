"""From the block that brings a payment's last required confirmation to the order's `paid` event, on every network.

Real regtest bitcoind and litecoind, real anvil, the Tron and Solana doubles
(blocks on request here, as regtest mines); the watchers wake on their nodes'
block announcements (bitcoind's and litecoind's `waitforblockheight` long
poll, anvil's `newHeads` over websocket, the Tron node's ZMQ `block` topic,
Solana's `slotSubscribe`), their polling slowed to
`SLOW_POLL_S` so that only announcements count. Each sample: pay an order's
instructions with the node's own tools, make all but the last block the
payment needs, wait until payments shows the transfer one confirmation short,
and the watcher's status shows it at its node's tip, then make the last block
and time until orders publishes `paid`, and each stage on the way as the
broker carries it: the watcher's `transfer_confirmed`, payments'
`payment_settled`, orders' `paid`; and what each stage spent in its worker
over that window (the services' own metrics): the watcher's scan passes and
their node calls, payments' and orders' consumers. SAMPLES orders a network;
the machine's speed printed before and after.

The baseline, measured on the same stack in the same run: a `transfer_confirmed`
published on the broker as a watcher would, to `paid` (everything after the watcher),
in the coin of the first network whose node runs.
"""

import asyncio
import json
import os
import re
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import aio_pika
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_customers import entrypoint_totals
from bench.bench_payments import ORDER, confirmed_to_paid
from bench.bench_transport import machine_line
from bench.measure import bearer_for_new_customer, percentiles
from infra.local.devnet import DEV_CONFIRMATIONS, NETWORKS, Devnet
from infra.local.isolation import running_stack

SAMPLES = 10
SLOW_POLL_S = 30
TARGET_MS = 100
# stage: (exchange, routing key, the payload's field that says whose it is), in the order a payment passes them
STAGES = {
    "transfer_confirmed": ("chain.events", "transfer_confirmed", "address"),
    "payment_settled": ("payments.events", "payment_settled", "order_id"),
    "paid": ("orders.events", "order_status_changed", "order_id"),
}
# network: (asset, how its watcher hears of blocks, the network's block time in seconds)
NETWORKS_MEASURED = {
    "bitcoin": ("BTC", "waitforblockheight long poll", 600),
    "litecoin": ("LTC", "waitforblockheight long poll", 150),
    "ethereum": ("ETH", "newHeads over websocket", 12),
    "tron": ("TRX", "ZMQ block topic", 3),
    "solana": ("SOL", "slotSubscribe over websocket", 0.4),
}
# What a stage after the watcher's spends in its worker (the services' own metrics, summed over the window from
# the last block to `paid`); the watcher's: its scan passes and their node calls (its metrics likewise).
IN_WORKERS = {
    "payment_settled": ("payments", "on_transfer_confirmed"),
    "paid": ("orders", "on_payment_settled"),
}
NODE_CALL = re.compile(r'^kernodeck_watcher_rpc_seconds_sum\{call="([^"]+)",network="[^"]+"\} (\S+)$')
SCAN = re.compile(r'^kernodeck_entrypoint_seconds_sum\{entrypoint="scan",service="[^"]+"\} (\S+)$')


def block_to_paid(log_dir: Path) -> list[str]:
    devnet = Devnet(log_dir / "devnet", networks=NETWORKS, clocked_doubles=False, watcher_status_s=1.0)
    env = devnet.start(log=lambda line: None)
    try:
        if not devnet.up:
            return [f"block -> paid: skipped, no node installed ({devnet.skipped})"]
        slow_polls = {f"watcher-{network}": {"WATCHER_POLL_INTERVAL_S": str(SLOW_POLL_S)} for network in devnet.up}
        # Every paid order holds its GPU: two more 64-GPU rtx4090 nodes than the stack's one.
        capacity = {"extra_nodes": {"rtx4090": 2}}
        with running_stack(log_dir, "kd_bench_chain", env, devnet.up, process_env=slow_polls, **capacity) as stack:
            if pool := devnet.import_solana_pool({**os.environ, **stack.env}):
                print(pool)
            lines = [machine_line()] + [f"{network}: not running ({why})" for network, why in devnet.skipped.items()]
            return lines + asyncio.run(_measure(stack, devnet)) + [machine_line()]
    finally:
        devnet.stop()


async def _measure(stack, devnet) -> list[str]:
    lines = []
    auth = await bearer_for_new_customer(stack.url)
    network = devnet.up[0]  # one whose payment method is on
    asset = NETWORKS_MEASURED[network][0]
    paid = await confirmed_to_paid(stack.url, auth, stack.env["AMQP_URI"], SAMPLES, asset, network)
    baseline = paid["p50_ms"]
    lines.append(
        f"baseline, transfer_confirmed ({asset}) on the broker -> order paid: p50 {baseline:.0f} ms over {SAMPLES}"
    )
    async with (
        _StageEvents(stack.env["AMQP_URI"]) as stages,
        httpx.AsyncClient(base_url=stack.url, headers=auth, timeout=30) as client,
    ):
        for network in devnet.up:
            asset, how, block_s = NETWORKS_MEASURED[network]
            chain = _Chain(devnet.nodes[network], network)
            samples = [await _sample(client, stages, chain, asset, stack) for _ in range(SAMPLES)]
            p = percentiles([sample["paid"] for sample in samples])
            lines.append(
                f"block with the last confirmation -> order paid, {network} ({how}): "
                f"p50 {p['p50_ms']:.0f} ms  p90 {p['p90_ms']:.0f} ms  p99 {p['p99_ms']:.0f} ms over {SAMPLES} orders, "
                f"{p['p50_ms'] / 1000 / block_s:.3f} of its {block_s:g} s block time, "
                f"{p['p50_ms'] / baseline:.1f}x the baseline (target p50 < {TARGET_MS} ms): "
                f"{'met' if p['p50_ms'] < TARGET_MS else 'NOT met'}"
            )
            lines.append(f"  {network}, stage by stage: {_stages_line(samples)}")
            lines.append(f"  {network}, in the workers: {_workers_line(samples)}")
    return lines


def _workers_line(samples: list[dict]) -> str:
    """Each stage's time in its worker, p50 ms: the watcher's scan passes (and their node calls, by call), payments'
    and orders' consumers; a stage's time beyond its worker's is the wake-up, the broker's hop and the queue."""

    def p50(values) -> str:
        return f"{percentiles(list(values))['p50_ms']:.0f}"

    calls = sorted({call for sample in samples for call in sample["node_calls"]})
    node = ", ".join(f"{call} {p50(sample['node_calls'].get(call, 0.0) for sample in samples)}" for call in calls)
    parts = [f"watcher scan {p50(sample['scan'] for sample in samples)} (node calls: {node})"]
    for stage, (service, entrypoint) in IN_WORKERS.items():
        parts.append(f"{service}.{entrypoint} {p50(sample['in_workers'][stage] for sample in samples)}")
    return ", ".join(parts) + " ms (p50)"


def _watcher_totals(stack, network: str) -> tuple[float, dict[str, float]]:
    """The watcher's seconds in scan passes so far, and in each kind of node call."""
    scan, calls = 0.0, {}
    for row in httpx.get(stack.watcher_metrics_url(network), timeout=10).text.splitlines():
        if found := SCAN.match(row):
            scan += float(found.group(1))
        elif found := NODE_CALL.match(row):
            calls[found.group(1)] = float(found.group(2))
    return scan, calls


def _totals(stack, network: str) -> tuple[float, dict[str, float], dict]:
    return (*_watcher_totals(stack, network), entrypoint_totals(stack))


def _in_workers(before: tuple, after: tuple) -> dict:
    """What the window between two `_totals` spent in each worker (seconds)."""
    (scan, calls, entrypoints), (scan_after, calls_after, entrypoints_after) = before, after
    spent = {
        stage: entrypoints_after.get(key, [0.0])[0] - entrypoints.get(key, [0.0])[0]
        for stage, key in IN_WORKERS.items()
    }
    node_calls = {call: seconds - calls.get(call, 0.0) for call, seconds in calls_after.items()}
    return {"scan": scan_after - scan, "node_calls": node_calls, "in_workers": spent}


def _stages_line(samples: list[dict[str, float]]) -> str:
    """Each stage's own time, from the one before it (from the block for the first): p50/p90 in ms."""
    parts, before = [], None
    for stage in STAGES:
        p = percentiles([sample[stage] - (sample[before] if before else 0.0) for sample in samples])
        parts.append(f"-> {stage} {p['p50_ms']:.0f}/{p['p90_ms']:.0f}")
        before = stage
    return "block " + "  ".join(parts) + " ms (p50/p90)"


async def _sample(client, stages, chain, asset: str, stack) -> dict:
    """Seconds from making the last block to each stage's event on the broker, and in each stage's worker."""
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
    # Payments hears of the confirmations as the watcher commits the payment's block: the watcher may still be
    # scanning the blocks after it, and the last block would wait for that pass.
    await asyncio.wait_for(stages.caught_up(chain.network), timeout=30)
    whose = {"transfer_confirmed": payment["address"].lower(), "payment_settled": order["id"], "paid": order["id"]}
    waiting = stages.expect(whose)
    before = await asyncio.to_thread(_totals, stack, chain.network)
    started = time.perf_counter()
    chain.mine(1)
    arrived = await asyncio.wait_for(waiting, timeout=30)
    spent = _in_workers(before, await asyncio.to_thread(_totals, stack, chain.network))
    return {**{stage: at - started for stage, at in arrived.items()}, **spent}


class _StageEvents:
    """The STAGES' events on the broker: `expect({stage: whose})` resolves, once each stage's event has come, to
    the `time.perf_counter()` of each one's arrival. `caught_up(network)`: the network's next `watcher_status`
    with every block the watcher knows of scanned."""

    def __init__(self, amqp_uri: str):
        self.amqp_uri = amqp_uri
        self.waiting: dict[tuple[str, str], tuple[dict[str, float], asyncio.Future, int]] = {}
        self.catching_up: dict[str, asyncio.Future] = {}

    async def __aenter__(self):
        self.connection = await aio_pika.connect(self.amqp_uri)
        channel = await self.connection.channel()
        queue = await channel.declare_queue(exclusive=True, auto_delete=True)
        for exchange, routing_key, _ in [*STAGES.values(), ("chain.events", "watcher_status", "network")]:
            declared = await channel.declare_exchange(exchange, aio_pika.ExchangeType.TOPIC, durable=True)
            await queue.bind(declared, routing_key)
        await queue.consume(self._on_message, no_ack=True)
        return self

    async def __aexit__(self, *exc):
        await self.connection.close()

    def expect(self, whose: dict[str, str]) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        arrived: dict[str, float] = {}
        for stage, key in whose.items():
            self.waiting[(stage, key)] = (arrived, future, len(whose))
        return future

    def caught_up(self, network: str) -> asyncio.Future:
        self.catching_up[network] = asyncio.get_running_loop().create_future()
        return self.catching_up[network]

    async def _on_message(self, message: aio_pika.abc.AbstractIncomingMessage) -> None:
        at = time.perf_counter()
        body = json.loads(message.body)
        if message.routing_key == "watcher_status":
            future = self.catching_up.get(body["network"])
            if future is not None and not future.done() and body["scanned_height"] >= body["node_height"]:
                future.set_result(at)
            return
        for stage, (_, routing_key, field) in STAGES.items():
            if message.routing_key != routing_key or (stage == "paid" and body.get("status") != "paid"):
                continue
            # Addresses compared in lower case: the watcher's spelling (an Ethereum address in lower case) need
            # not be the instructions' (checksummed), and no two of a run differ by case alone.
            whose = str(body.get(field)).lower()
            arrived, future, count = self.waiting.pop((stage, whose), ({}, None, 0))
            if future is not None:
                arrived[stage] = at
                if len(arrived) == count:
                    future.set_result(arrived)


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
