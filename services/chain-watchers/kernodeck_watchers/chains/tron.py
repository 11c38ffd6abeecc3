"""Tron through a full node's HTTP API (java-tron, TronGrid and alike), TRX and TRC-20.

Tip, blocks and transaction infos come from ``/wallet/*``, the latest blocks,
and Tron is counted like every other chain: ``tip - height + 1``
confirmations, a rollback on a parent-hash mismatch. Payments asks 19
confirmations for Tron, which is what solidification waits for (more than 2/3
of the 27 super representatives building on a block, about a minute), and a
transfer is ``seen`` within a block (3 s). Reading ``/walletsolidity/*``
instead would double that wait and show ``seen`` a minute late.

Transfers: TRX is a ``TransferContract`` (``amount`` in sun, index 0); a
TRC-20 transfer is a ``Transfer(address,address,uint256)`` log of the
transaction's info (index: the log's position in that transaction), its token
the contract that emitted the log. Only transactions whose ``contractRet`` is
SUCCESS count. Addresses are base58check (T...), matched as given; a log
names its recipient by account id (hex), matched against the watched
addresses' account ids (`match_key`), never encoded as T... (two SHA-256 and
a base58 conversion: 40 lookups' time).
"""

from collections.abc import Collection

from kernodeck_chains.addresses import tron_account_id, tron_hex_address
from kernodeck_chains.evm import TRANSFER_TOPIC
from kernodeck_watchers.domain.watched import KeyedAddresses

from .base import BlockNotYet, BlockRef, NodeError, SeenTransfer, Watched
from .jsonrpc import post_json

_ADDRESS_PADDING = "0" * 24


class TronClient:
    # TRX sent by a contract is read from the infos' internal transactions (the node must keep them).
    unseen: frozenset[str] = frozenset()

    def __init__(self, base_url: str, network: str = "tron", timeout_s: float = 10.0, api_key: str = ""):
        self.network = network
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        # Providers (TronGrid and alike) expect their key in this header; never logged.
        self.headers = {"TRON-PRO-API-KEY": api_key} if api_key else {}

    def normalize(self, address: str) -> str:
        return address

    @staticmethod
    def match_key(address: str) -> str | None:
        return account_key(address)

    def tip(self) -> BlockRef:
        """The head block's header only (`getblock` without detail): a mainnet head block's transactions are
        hundreds of kilobytes the tip does not need."""
        return block_ref(self._block("getblock", {"detail": False}))

    def block(self, height: int) -> BlockRef:
        """The block with its transactions (the payload `transfers_in_block` reuses)."""
        raw = self._block("getblockbynum", {"num": height})
        return block_ref(raw, payload=raw)

    def block_hash(self, height: int) -> str:
        return self.block(height).hash  # the API has no lighter way to a block by number

    def transfers_in_block(self, block: BlockRef, watched: Watched) -> list[SeenTransfer]:
        """TRX and TRC-20 transfers to watched addresses, whatever the token contract."""
        raw = block.payload or self._block("getblockbyid", {"value": block.hash})
        infos = self._infos(block, {tx["txID"] for tx in raw.get("transactions", [])})
        return block_transfers(raw, infos, watched)

    def pending_transfers(self, watched: Watched) -> list[SeenTransfer]:
        return []  # a transaction waits about 3 s for its block: no mempool worth watching

    def balances(self, addresses: list[str], height: int) -> dict[str, int]:
        """At the node's tip (`/wallet/getaccount`; an account never funded answers {}: 0)."""
        return {address: int(self._post("getaccount", {"address": address}).get("balance", 0)) for address in addresses}

    def token_balances(self, holdings: list[tuple[str, str]], height: int) -> dict[tuple[str, str], int]:
        """TRC-20 `balanceOf` of each (address, token) at the node's tip (`/wallet/triggerconstantcontract`, one
        request each); a call that fails or answers no uint256 is left out."""
        balances = {}
        for address, token in holdings:
            answer = self._post(
                "triggerconstantcontract",
                {
                    "owner_address": address,
                    "contract_address": token,
                    "function_selector": "balanceOf(address)",
                    "parameter": tron_hex_address(address)[2:].rjust(64, "0"),
                },
            )
            returned = answer.get("constant_result") or [""]
            if (answer.get("result") or {}).get("result") and len(returned[0]) >= 64:
                balances[(address, token)] = int(returned[0][:64], 16)
        return balances

    def address_activity(
        self, addresses: Collection[str], since_height: int
    ) -> list[tuple[SeenTransfer, BlockRef | None]]:
        """Transfers to `addresses` in every block from `since_height` to the tip (two requests per block)."""
        tip = self.tip()
        watched = set(addresses)
        return [
            (transfer, block)
            for block in map(self.block, range(since_height, tip.height + 1))
            for transfer in self.transfers_in_block(block, watched)
        ]

    # -- the node --------------------------------------------------------------
    def _block(self, endpoint: str, body: dict) -> dict:
        block = self._post(endpoint, body)
        if not block:  # an empty answer: a backend that has not got it yet
            raise BlockNotYet(f"{endpoint} {body}: no such block")
        return block

    def _infos(self, block: BlockRef, txids: set[str]) -> list[dict]:
        infos = self._post("gettransactioninfobyblocknum", {"num": block.height}) if txids else []
        if not isinstance(infos, list) or {info.get("id") for info in infos} != txids:
            # The node's chain moved between the two requests: the core reads the block again.
            raise NodeError(f"transaction infos of block {block.height} do not match block {block.hash}")
        return infos

    def _post(self, endpoint: str, body: dict) -> dict | list:
        url = f"{self.base_url}/wallet/{endpoint}"
        answer = post_json(url, {**body, "visible": True}, self.timeout_s, self.headers, endpoint)
        if isinstance(answer, dict) and "Error" in answer:
            raise NodeError(f"{endpoint}: {answer['Error']}")
        return answer


def block_ref(block: dict, payload: dict | None = None) -> BlockRef:
    header = block["block_header"]["raw_data"]
    # Protobuf's JSON leaves zero fields out: the genesis block has no number and no timestamp.
    return BlockRef(
        height=header.get("number", 0),
        hash=block["blockID"],
        parent_hash=header["parentHash"],
        time=header.get("timestamp", 0) // 1000,
        payload=payload,
    )


def account_key(address: str) -> str | None:
    """The account id a TRC-20 log names for a watched T... address, as hex (stored with the watch; the watched
    set reads it as a number, as it reads a log's topic, whatever the case of its digits); None for text that is
    no Tron address."""
    try:
        return tron_account_id(address).hex()
    except ValueError:
        return None


def keyed(watched: Watched) -> KeyedAddresses:
    """`watched` with its account ids: the watcher's set keeps them; a few addresses (a targeted look) get them
    here."""
    if isinstance(watched, KeyedAddresses):
        return watched
    found = KeyedAddresses(account_key)
    for address in watched:
        found.add(address)
    return found


def block_transfers(block: dict, infos: list[dict], watched: Watched) -> list[SeenTransfer]:
    """TRX and TRC-20 transfers to watched addresses in a block and its transaction infos."""
    watched = keyed(watched)
    succeeded = {
        tx["txID"]: tx for tx in block.get("transactions", []) if tx.get("ret", [{}])[0].get("contractRet") == "SUCCESS"
    }
    found = [transfer for tx in succeeded.values() if (transfer := trx_transfer(tx, watched))]
    for info in infos:
        if info["id"] in succeeded:
            found.extend(trc20_transfers(info, watched))
            found.extend(internal_trx_transfers(info, watched))
    return found


def internal_trx_transfers(info: dict, watched: Watched) -> list[SeenTransfer]:
    """TRX sent to watched addresses by contracts: the info's internal transactions that moved TRX (no
    `tokenId`: TRC-10 is not TRX) and were not rejected; index -(position + 1), apart from the logs' positions."""
    found = []
    for position, internal in enumerate(info.get("internal_transactions") or ()):
        to = internal.get("transferTo_address")
        if internal.get("rejected") or to not in watched:
            continue
        amount = sum(v.get("callValue", 0) for v in internal.get("callValueInfo") or () if not v.get("tokenId"))
        if amount > 0:
            found.append(SeenTransfer(txid=info["id"], index=-(position + 1), address=to, token=None, amount=amount))
    return found


def trx_transfer(tx: dict, watched: Watched) -> SeenTransfer | None:
    contract = tx["raw_data"]["contract"][0]
    if contract["type"] != "TransferContract":
        return None
    value = contract["parameter"]["value"]
    if value["to_address"] not in watched:
        return None
    return SeenTransfer(txid=tx["txID"], index=0, address=value["to_address"], token=None, amount=value["amount"])


def trc20_transfers(info: dict, watched: Watched) -> list[SeenTransfer]:
    found = []
    accounts = keyed(watched).keys
    for position, log in enumerate(info.get("log", ())):
        topics = log.get("topics", ())
        # An ERC-721 Transfer shares topic0 but indexes its token id: four topics, no data.
        if len(topics) != 3 or topics[0] != TRANSFER_TOPIC or len(log.get("data", "")) != 64:
            continue
        to = topics[2]
        # 32 bytes that are no address (not an ERC-20 Transfer), or an account no watch names
        if len(to) != 64 or not to.startswith(_ADDRESS_PADDING) or (address := accounts.get(int(to, 16))) is None:
            continue
        if amount := int(log["data"], 16):  # a zero transfer (anyone can send one) pays nothing
            found.append(SeenTransfer(info["id"], position, address, log["address"], amount))
    return found
