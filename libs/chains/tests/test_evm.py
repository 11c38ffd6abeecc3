import pytest

from kernodeck_chains.evm import TRANSFER_TOPIC, event_topic, selector

pytestmark = pytest.mark.unit


def test_the_transfer_topic_is_the_published_one():
    # topic0 of every ERC-20 Transfer log on Ethereum and of every TRC-20 one on Tron.
    assert TRANSFER_TOPIC == "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
    assert event_topic("Approval(address,address,uint256)") == (
        "8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"
    )


def test_function_selectors_are_the_published_ones():
    assert selector("transfer(address,uint256)").hex() == "a9059cbb"
    assert selector("balanceOf(address)").hex() == "70a08231"
