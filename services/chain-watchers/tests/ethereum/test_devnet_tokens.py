"""The devnet's contracts (infra/devnet/contracts) as the Ethereum tests use them."""

from infra.devnet.tokens import call_data, encode_args, send_call


def read(anvil, contract: str, signature: str, *args) -> str:
    return anvil.rpc("eth_call", {"to": contract, "data": call_data(signature, *args)}, "latest")


def decode_string(answer: str) -> str:
    data = bytes.fromhex(answer[2:])
    length = int.from_bytes(data[32:64], "big")
    return data[64 : 64 + length].decode()


def test_tokens_have_six_decimals_and_the_fake_borrows_the_usdt_symbol(anvil, tokens):
    assert len(set(tokens.values())) == 3
    assert {key: decode_string(read(anvil, address, "symbol()")) for key, address in tokens.items()} == {
        "USDT": "USDT",
        "USDC": "USDC",
        "FAKE_USDT": "USDT",
    }
    assert {int(read(anvil, address, "decimals()"), 16) for address in tokens.values()} == {6}


def test_usdt_like_transfer_returns_nothing_and_the_standard_one_returns_true(anvil, tokens, new_address):
    sender = anvil.accounts[0]
    to = new_address()
    answers = {
        key: anvil.rpc(
            "eth_call",
            {"from": sender, "to": tokens[key], "data": call_data("transfer(address,uint256)", to, 1)},
            "latest",
        )
        for key in ("USDT", "USDC")
    }
    assert answers == {"USDT": "0x", "USDC": "0x" + "00" * 31 + "01"}


def test_transfer_from_spends_the_allowance(anvil, tokens, new_address):
    owner, spender, to = anvil.accounts[0], anvil.accounts[1], new_address()
    anvil.wait_receipt(send_call(anvil, tokens["USDT"], "approve(address,uint256)", spender, 10))
    first = anvil.wait_receipt(
        send_call(anvil, tokens["USDT"], "transferFrom(address,address,uint256)", owner, to, 7, sender=spender)
    )
    second = anvil.wait_receipt(
        send_call(
            anvil, tokens["USDT"], "transferFrom(address,address,uint256)", owner, to, 7, sender=spender, gas=100_000
        )
    )
    assert (first["status"], second["status"]) == ("0x1", "0x0")
    assert int(read(anvil, tokens["USDT"], "balanceOf(address)", to), 16) == 7
    assert int(read(anvil, tokens["USDT"], "allowance(address,address)", owner, spender), 16) == 3


def test_abi_encoding_of_dynamic_arguments():
    # the head holds offsets to the tails; strings are padded to whole words
    encoded = encode_args(["string", "uint8", "address[]"], ["USD Coin", 6, ["0x" + "aa" * 20]])
    words = [encoded[i : i + 32] for i in range(0, len(encoded), 32)]
    assert [int.from_bytes(w, "big") for w in words[:3]] == [96, 6, 160]
    assert (int.from_bytes(words[3], "big"), words[4]) == (8, b"USD Coin".ljust(32, b"\0"))
    assert (int.from_bytes(words[5], "big"), words[6]) == (1, bytes(12) + b"\xaa" * 20)
