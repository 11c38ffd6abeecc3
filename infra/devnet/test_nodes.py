"""Start each local chain node, mine, pay with the node's own wallet, confirm.

A node's tests are skipped only when its binary is not installed
(run ``infra/devnet/install.sh``).
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest

try:
    from infra.devnet import nodes
except ImportError:  # pytest run from elsewhere: import by path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from infra.devnet import nodes


def _require(cls) -> None:
    if not cls.installed():
        msg = f"{cls.__name__}: binary not installed (run {cls.install_hint})"
        print(msg)
        pytest.skip(msg)


@pytest.fixture(scope="module")
def litecoin(tmp_path_factory):
    _require(nodes.LitecoinNode)
    with nodes.LitecoinNode(tmp_path_factory.mktemp("ltc")) as node:
        yield node


@pytest.fixture(scope="module")
def bitcoin(tmp_path_factory):
    _require(nodes.BitcoinNode)
    with nodes.BitcoinNode(tmp_path_factory.mktemp("btc")) as node:
        yield node


@pytest.fixture(scope="module")
def anvil(tmp_path_factory):
    _require(nodes.AnvilNode)
    with nodes.AnvilNode(tmp_path_factory.mktemp("anvil")) as node:
        yield node


# ------------------------------------------------------- bitcoin-like nodes --
def _pay_and_confirm(node: nodes._BitcoinLikeNode, hrp: str) -> None:
    info = node.rpc("getblockchaininfo")
    assert info["chain"] == "regtest"
    assert info["blocks"] >= 101
    assert Decimal(str(node.rpc("getbalance"))) > 0  # coinbase matured

    address = node.rpc("getnewaddress", "", "bech32")
    assert address.startswith(hrp + "1")
    txid = node.rpc("sendtoaddress", address, 0.001)
    assert txid in node.rpc("getrawmempool")
    entry = node.rpc("getmempoolentry", txid)
    assert entry["vsize"] > 0
    assert node.rpc("gettransaction", txid)["confirmations"] == 0

    [block] = node.mine(1)
    assert txid not in node.rpc("getrawmempool")
    tx = node.rpc("gettransaction", txid)
    assert tx["confirmations"] == 1 and tx["blockhash"] == block
    # txindex=1: any transaction by id, with its block
    raw = node.rpc("getrawtransaction", txid, True)
    assert raw["blockhash"] == block
    paid = [
        o
        for o in raw["vout"]
        if o["scriptPubKey"].get("address") == address or address in o["scriptPubKey"].get("addresses", [])
    ]
    assert [Decimal(str(o["value"])) for o in paid] == [Decimal("0.001")]
    received = node.rpc("getreceivedbyaddress", address, 1)
    assert Decimal(str(received)) == Decimal("0.001")


def test_litecoin_pay_and_confirm(litecoin):
    _pay_and_confirm(litecoin, "rltc")


def test_bitcoin_pay_and_confirm(bitcoin):
    assert "Knots" in bitcoin.rpc("getnetworkinfo")["subversion"]
    _pay_and_confirm(bitcoin, "bcrt")


def test_litecoin_cli(litecoin):
    """The node's own CLI works with just -datadir (the conf holds the rest)."""
    out = subprocess.run([*litecoin.cli_argv(), "getblockcount"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) >= 101


def test_bitcoin_cli(bitcoin):
    address = bitcoin.rpc("getnewaddress", "", "bech32")
    out = subprocess.run(
        [*bitcoin.cli_argv(), "sendtoaddress", address, "0.001"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() in bitcoin.rpc("getrawmempool")


def _zmtp_subscribe(url: str, topic: bytes) -> socket.socket:
    """Minimal ZMTP 3.0 SUB socket (NULL mechanism) with the stdlib only."""
    host, port = url.removeprefix("tcp://").rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=10)
    greeting = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" + b"\x00" * 31
    s.sendall(greeting)
    _recv_exact(s, 64)
    prop = b"\x0bSocket-Type" + struct.pack(">I", 3) + b"SUB"
    ready = b"\x05READY" + prop
    s.sendall(bytes([0x04, len(ready)]) + ready)
    flags, _body = _recv_frame(s)
    assert flags & 0x04, "expected the peer's READY command"
    sub = b"\x01" + topic
    s.sendall(bytes([0x00, len(sub)]) + sub)
    return s


def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("ZMQ peer closed")
        buf += chunk
    return buf


def _recv_frame(s: socket.socket) -> tuple[int, bytes]:
    flags = _recv_exact(s, 1)[0]
    size = struct.unpack(">Q", _recv_exact(s, 8))[0] if flags & 0x02 else _recv_exact(s, 1)[0]
    return flags, _recv_exact(s, size)


def _recv_message(s: socket.socket) -> list[bytes]:
    parts = []
    while True:
        flags, body = _recv_frame(s)
        if flags & 0x04:  # command (e.g. PING): not part of a message
            continue
        parts.append(body)
        if not flags & 0x01:
            return parts


def test_bitcoin_zmq_hashblock(bitcoin):
    assert bitcoin.zmq_hashblock_url
    notes = bitcoin.rpc("getzmqnotifications")
    assert [n["type"] for n in notes] == ["pubhashblock"]
    sock = _zmtp_subscribe(bitcoin.zmq_hashblock_url, b"hashblock")
    try:
        # the subscription travels asynchronously: mine until a message arrives
        sock.settimeout(0.5)
        mined: list[str] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            mined += bitcoin.mine(1)
            try:
                topic, body, _seq = _recv_message(sock)
                break
            except TimeoutError:
                continue
        else:
            pytest.fail("no hashblock notification")
        assert topic == b"hashblock"
        assert body.hex() in mined
    finally:
        sock.close()


def test_litecoin_zmq_reported(litecoin):
    # Debian's litecoind is built without ZMQ: the node says so instead of failing.
    if litecoin.has_zmq():
        assert litecoin.zmq_hashblock_url
    else:
        assert litecoin.zmq_hashblock_url is None


# -------------------------------------------------------------------- anvil --
def test_anvil_send_eth(anvil):
    assert int(anvil.rpc("eth_chainId"), 16) == 31337
    sender, receiver = anvil.accounts[0], anvil.accounts[1]
    before = int(anvil.rpc("eth_getBalance", receiver, "latest"), 16)
    value = 10**18
    tx_hash = anvil.rpc("eth_sendTransaction", {"from": sender, "to": receiver, "value": hex(value)})
    receipt = anvil.wait_receipt(tx_hash)
    assert receipt["status"] == "0x1"
    assert int(anvil.rpc("eth_getBalance", receiver, "latest"), 16) == before + value
    tx = anvil.rpc("eth_getTransactionByHash", tx_hash)
    assert tx["from"].lower() == sender.lower() and int(tx["value"], 16) == value
    assert len(anvil.private_keys) == len(anvil.accounts)


def test_anvil_block_time(tmp_path):
    """With --block-time the transaction waits in the pool until the next block."""
    _require(nodes.AnvilNode)
    with nodes.AnvilNode(tmp_path, block_time=1) as node:
        a, b = node.accounts[:2]
        tx_hash = node.rpc("eth_sendTransaction", {"from": a, "to": b, "value": hex(1)})
        assert node.rpc("eth_getTransactionReceipt", tx_hash) is None
        assert node.wait_receipt(tx_hash, timeout=10)["status"] == "0x1"


SOURCE = """
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract Answer { function answer() external pure returns (uint256) { return 42; } }
"""


def test_solc_compile_and_deploy(anvil):
    solcjs = nodes.find_binary("solcjs")
    if solcjs is None:
        print("solcjs not installed (run infra/devnet/install.sh solc)")
        pytest.skip("solcjs not installed (run infra/devnet/install.sh solc)")
    request = {
        "language": "Solidity",
        "sources": {"Answer.sol": {"content": SOURCE}},
        "settings": {"outputSelection": {"*": {"*": ["evm.bytecode.object", "evm.methodIdentifiers"]}}},
    }
    out = subprocess.run(
        [str(solcjs), "--standard-json"], input=json.dumps(request), capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout[out.stdout.index("{") :])
    assert not [e for e in result.get("errors", []) if e["severity"] == "error"], result["errors"]
    contract = result["contracts"]["Answer.sol"]["Answer"]["evm"]
    tx_hash = anvil.rpc(
        "eth_sendTransaction", {"from": anvil.accounts[0], "data": "0x" + contract["bytecode"]["object"]}
    )
    receipt = anvil.wait_receipt(tx_hash)
    assert receipt["status"] == "0x1"
    selector = contract["methodIdentifiers"]["answer()"]
    answer = anvil.rpc("eth_call", {"to": receipt["contractAddress"], "data": "0x" + selector}, "latest")
    assert int(answer, 16) == 42
