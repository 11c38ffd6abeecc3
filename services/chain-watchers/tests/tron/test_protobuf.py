"""The double's transaction ids, raw_data_hex and signature checks, against mainnet transactions."""

import coincurve
import pytest

from infra.devnet.tron_double import protobuf, transactions
from kernodeck_chains.addresses import tron_address, tron_hex_address

pytestmark = pytest.mark.unit

# A TransferContract built by createtransaction (visible=false), with its raw_data_hex and txID.
TRANSFER = {
    "txID": "88817b9c6276e3c535e4f8f15baf546292ca6ad9d44a7d97857bd6f8909d63d4",
    "raw_data": {
        "contract": [
            {
                "parameter": {
                    "value": {
                        "amount": 100000,
                        "owner_address": "415c68cc82c87446f602f019e5fd797437f5b79cc2",
                        "to_address": "4156a6076cd1537fa317c2606e4edfa4acd3e8e92e",
                    },
                    "type_url": "type.googleapis.com/protocol.TransferContract",
                },
                "type": "TransferContract",
            }
        ],
        "ref_block_bytes": "02a2",
        "ref_block_hash": "e216e254e43ee108",
        "expiration": 1571898861000,
        "timestamp": 1571898802704,
    },
    "raw_data_hex": "0a0202a22208e216e254e43ee10840c8cbe4e3df2d5a67080112630a2d747970652e676f6f676c65617069732e636f6d2f"
    "70726f746f636f6c2e5472616e73666572436f6e747261637412320a15415c68cc82c87446f602f019e5fd797437f5b79cc2121541"
    "56a6076cd1537fa317c2606e4edfa4acd3e8e92e18a08d06709084e1e3df2d",
}

# A signed TRC-20 transfer as gettransactionbyid returns it.
TRIGGER = {
    "signature": [
        "1788bf0281f67c42f5a09322523edee9969e808a863776f21ab6543de9dd42ca0e4955577879df8074086c620eb96709ba9a95d6"
        "0a166de190a081e8d69801da00"
    ],
    "txID": "c70b20da8cb8d96a99c1aceb283412acb9dea313a9e467178431a3c6ae8b9f08",
    "raw_data": {
        "contract": [
            {
                "parameter": {
                    "value": {
                        "data": "a9059cbb00000000000000000000004150125bea243a640bf85348873b6c4f3c517aee7a00000000000000"
                        "00000000000000000000000000000000000000000000000001",
                        "owner_address": "41495511a493d8c362be4267224e6d81013a6862ee",
                        "contract_address": "41eca9bc828a3005b9a3b909f2cc5c2a54794de05f",
                    },
                    "type_url": "type.googleapis.com/protocol.TriggerSmartContract",
                },
                "type": "TriggerSmartContract",
            }
        ],
        "ref_block_bytes": "8ad9",
        "ref_block_hash": "eaef69105495eb15",
        "expiration": 1773182914544,
        "fee_limit": 100000000,
        "timestamp": 1773182854544,
    },
    "raw_data_hex": "0a028ad92208eaef69105495eb1540f09fc0cfcd335aae01081f12a9010a31747970652e676f6f676c65617069732e636f"
    "6d2f70726f746f636f6c2e54726967676572536d617274436f6e747261637412740a1541495511a493d8c362be4267224e6d81013a68"
    "62ee121541eca9bc828a3005b9a3b909f2cc5c2a54794de05f2244a9059cbb00000000000000000000004150125bea243a640bf85348"
    "873b6c4f3c517aee7a00000000000000000000000000000000000000000000000000000000000000017090cbbccfcd33900180c2d72f",
}


@pytest.mark.parametrize("tx", [TRANSFER, TRIGGER], ids=["TransferContract", "TriggerSmartContract"])
def test_raw_data_encodes_to_the_node_bytes_and_txid(tx):
    rebuilt = transactions.identified({"raw_data": tx["raw_data"], "txID": "ignored", "raw_data_hex": "ignored"})
    assert rebuilt["raw_data_hex"] == tx["raw_data_hex"]
    assert rebuilt["txID"] == tx["txID"]


def test_the_signer_of_a_mainnet_transaction_is_its_owner():
    assert transactions.signer(TRIGGER) == "41495511a493d8c362be4267224e6d81013a6862ee"


def test_a_transaction_signed_by_another_key_has_another_signer():
    key = coincurve.PrivateKey(bytes.fromhex("11" * 32))
    other = transactions.sign(transactions.identified(TRANSFER), key.secret.hex())
    signer = transactions.signer(other)
    assert signer == tron_hex_address(tron_address(key.public_key.format(compressed=False)))
    assert signer != TRANSFER["raw_data"]["contract"][0]["parameter"]["value"]["owner_address"]


def test_a_block_id_is_the_height_then_the_header_hash():
    header = protobuf.header_raw(
        {"number": 300, "txTrieRoot": "00" * 32, "witness_address": "41" + "ab" * 20, "parentHash": "cd" * 32}
    )
    block_id = protobuf.block_id(300, header)
    assert block_id[:16] == (300).to_bytes(8, "big").hex()
    assert block_id[16:] == protobuf.transaction_id(header)[16:]
