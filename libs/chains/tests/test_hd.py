import pytest

from kernodeck_chains import hd
from kernodeck_chains.base58 import b58check_decode, b58check_encode
from kernodeck_chains.hd import (
    HARDENED,
    ChildIndexError,
    ExtendedKeyError,
    derive_public_child,
    parse_extended_public_key,
)

pytestmark = pytest.mark.unit

# BIP32 test vector 1 (seed 000102...0f) and 2 (seed fffcf9...42).
V1_M = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
V1_M_0H = (
    "xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw"
)
V1_M_0H_1 = (
    "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ"
)
V1_M_0H_1_2H = (
    "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5"
)
V1_M_0H_1_2H_2 = (
    "xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV"
)
V1_M_0H_1_2H_2_1000000000 = (
    "xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy"
)
V1_M_XPRV = (
    "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"
)
V2_M = "xpub661MyMwAqRbcFW31YEwpkMuc5THy2PSt5bDMsktWQcFF8syAmRUapSCGu8ED9W6oDMSgv6Zz8idoc4a6mr8BDzTJY47LJhkJ8UB7WEGuduB"
V2_M_0 = (
    "xpub69H7F5d8KSRgmmdJg2KhpAK8SR3DjMwAdkxj3ZuxV27CprR9LgpeyGmXUbC6wb7ERfvrnKZjXoUmmDznezpbZb7ap6r1D3tgFxHmwMkQTPH"
)
V2_M_0_MAXH = (
    "xpub6ASAVgeehLbnwdqV6UKMHVzgqAG8Gr6riv3Fxxpj8ksbH9ebxaEyBLZ85ySDhKiLDBrQSARLq1uNRts8RuJiHjaDMBU4Zn9h8LZNnBC5y4a"
)
V2_M_0_MAXH_1 = (
    "xpub6DF8uhdarytz3FWdA8TvFSvvAh8dP3283MY7p2V4SeE2wyWmG5mg5EwVvmdMVCQcoNJxGoWaU9DCWh89LojfZ537wTfunKau47EL2dhHKon"
)
V2_M_0_MAXH_1_MAX1H = (
    "xpub6ERApfZwUNrhLCkDtcHTcxd75RbzS1ed54G1LkBUHQVHQKqhMkhgbmJbZRkrgZw4koxb5JaHWkY4ALHY2grBGRjaDMzQLcgJvLJuZZvRcEL"
)
V2_M_0_MAXH_1_MAX1H_2 = (
    "xpub6FnCn6nSzZAw5Tw7cgR9bi15UV96gLZhjDstkXXxvCLsUXBGXPdSnLFbdpq8p9HmGsApME5hQTZ3emM2rnY5agb9rXpVGyy3bdW6EEgAtqt"
)

# BIP84 test vector: account m/84'/0'/0' of "abandon ... about".
BIP84_ZPUB = (
    "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
)
BIP84_ZPRV = (
    "zprvAdG4iTXWBoARxkkzNpNh8r6Qag3irQB8PzEMkAFeTRXxHpbF9z4QgEvBRmfvqWvGp42t42nvgGpNgYSJA9iefm1yYNZKEm7z6qUWCroSQnE"
)


@pytest.mark.parametrize(
    ("parent", "index", "child"),
    [
        (V1_M_0H, 1, V1_M_0H_1),
        (V1_M_0H_1_2H, 2, V1_M_0H_1_2H_2),
        (V1_M_0H_1_2H_2, 1_000_000_000, V1_M_0H_1_2H_2_1000000000),
        (V2_M, 0, V2_M_0),
        (V2_M_0_MAXH, 1, V2_M_0_MAXH_1),
        (V2_M_0_MAXH_1_MAX1H, 2, V2_M_0_MAXH_1_MAX1H_2),
    ],
)
def test_bip32_public_derivation_matches_published_vectors(parent, index, child):
    derived = derive_public_child(parse_extended_public_key(parent), index)
    # Equality covers every serialized field: depth, fingerprint, number, chain code, key.
    assert derived == parse_extended_public_key(child)


def test_parse_reads_every_field():
    master = parse_extended_public_key(V1_M)
    child = parse_extended_public_key(V1_M_0H)
    assert (master.version, master.depth, master.parent_fingerprint, master.child_number) == ("xpub", 0, bytes(4), 0)
    assert master.fingerprint == bytes.fromhex("3442193e")
    assert (child.depth, child.parent_fingerprint, child.child_number) == (1, master.fingerprint, HARDENED)
    assert len(child.chain_code) == 32


@pytest.mark.parametrize(
    ("path", "public_key"),
    [
        ((0, 0), "0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c"),
        ((0, 1), "03e775fd51f0dfb8cd865d9ff1cca2a158cf651fe997fdc9fee9c1d3b5e995ea77"),
        ((1, 0), "03025324888e429ab8e3dbaf1f7802648b9cd01e9b418485c5fa4c1b9b5700e1a6"),
    ],
)
def test_bip84_child_public_keys(path, public_key):
    key = parse_extended_public_key(BIP84_ZPUB)
    for index in path:
        key = derive_public_child(key, index)
    assert key.version == "zpub"
    assert key.public_key.hex() == public_key


def test_uncompressed_key_is_the_same_point():
    key = derive_public_child(parse_extended_public_key(BIP84_ZPUB), 0)
    full = key.uncompressed_public_key
    assert len(full) == 65 and full[0] == 4
    assert full[1:33] == key.public_key[1:]
    assert key.public_key[0] == 2 + (full[64] & 1)


@pytest.mark.parametrize("index", [HARDENED, HARDENED + 44, 2**32 - 1])
def test_hardened_index_is_refused(index):
    with pytest.raises(ChildIndexError, match="hardened"):
        derive_public_child(parse_extended_public_key(V1_M), index)


@pytest.mark.parametrize("index", [-1, 2**32])
def test_out_of_range_index_is_refused(index):
    with pytest.raises(ChildIndexError, match="outside"):
        derive_public_child(parse_extended_public_key(V1_M), index)


@pytest.mark.parametrize("index", [1.0, "1", True, None])
def test_non_integer_index_is_refused(index):
    with pytest.raises(TypeError):
        derive_public_child(parse_extended_public_key(V1_M), index)


def test_invalid_child_key_asks_for_the_next_index(monkeypatch):
    order = bytes.fromhex("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141")
    monkeypatch.setattr(hd, "_hmac_sha512", lambda key, data: order + bytes(32))
    with pytest.raises(ChildIndexError, match="next index"):
        derive_public_child(parse_extended_public_key(V1_M), 0)


def _reencode(text: str, **fields: bytes) -> str:
    payload = bytearray(b58check_decode(text))
    offsets = {"version": 0, "depth": 4, "parent_fingerprint": 5, "child_number": 9}
    for name, value in fields.items():
        payload[offsets[name] : offsets[name] + len(value)] = value
    return b58check_encode(bytes(payload))


def test_no_child_beyond_depth_255():
    deepest = parse_extended_public_key(_reencode(V1_M_0H, depth=b"\xff"))
    with pytest.raises(ChildIndexError, match="depth"):
        derive_public_child(deepest, 0)


@pytest.mark.parametrize(("version", "name"), [(version.hex(), name) for version, name in hd.PUBLIC_VERSIONS.items()])
def test_slip132_versions_are_recognised(version, name):
    assert parse_extended_public_key(_reencode(V1_M, version=bytes.fromhex(version))).version == name


def test_every_single_character_corruption_is_caught():
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    for position, char in enumerate(BIP84_ZPUB):
        replacement = alphabet[(alphabet.index(char) + 1) % 58]
        corrupted = BIP84_ZPUB[:position] + replacement + BIP84_ZPUB[position + 1 :]
        with pytest.raises(ExtendedKeyError):
            parse_extended_public_key(corrupted)


# BIP32 test vector 5: the invalid extended public keys, each for its reason.
@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (  # pubkey version / prvkey mismatch
            "xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6LBpB85b3D2yc8sfvZU521AAwdZafEz7mnzBBsz4wKY5fTtTQBm",
            "PRIVATE",
        ),
        (  # invalid pubkey prefix 04
            "xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6Txnt3siSujt9RCVYsx4qHZGc62TG4McvMGcAUjeuwZdduYEvFn",
            "compressed point",
        ),
        (  # invalid pubkey prefix 01
            "xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6N8ZMMXctdiCjxTNq964yKkwrkBJJwpzZS4HS2fxvyYUA4q2Xe4",
            "compressed point",
        ),
        (  # zero depth with non-zero parent fingerprint
            "xpub661no6RGEX3uJkY4bNnPcw4URcQTrSibUZ4NqJEw5eBkv7ovTwgiT91XX27VbEXGENhYRCf7hyEbWrR3FewATdCEebj6znwMfQkhRYHRLpJ",
            "depth-0",
        ),
        (  # zero depth with non-zero index
            "xpub661MyMwAuDcm6CRQ5N4qiHKrJ39Xe1R1NyfouMKTTWcguwVcfrZJaNvhpebzGerh7gucBvzEQWRugZDuDXjNDRmXzSZe4c7mnTK97pTvGS8",
            "depth-0",
        ),
        (  # unknown extended key version
            "DMwo58pR1QLEFihHiXPVykYB6fJmsTeHvyTp7hRThAtCX8CvYzgPcn8XnmdfHPmHJiEDXkTiJTVV9rHEBUem2mwVbbNfvT2MTcAqj3nesx8uBf9",
            "unknown",
        ),
        (  # invalid pubkey 020000000000000000000000000000000000000000000000000000000000000007
            "xpub661MyMwAqRbcEYS8w7XLSVeEsBXy79zSzH1J8vCdxAZningWLdN3zgtU6Q5JXayek4PRsn35jii4veMimro1xefsM58PgBMrvdYre8QyULY",
            "not a point",
        ),
    ],
)
def test_bip32_invalid_public_keys_are_refused(text, reason):
    with pytest.raises(ExtendedKeyError, match=reason):
        parse_extended_public_key(text)


@pytest.mark.parametrize("private", [V1_M_XPRV, BIP84_ZPRV])
def test_private_keys_are_refused_without_echoing_them(private):
    with pytest.raises(ExtendedKeyError, match="PRIVATE") as caught:
        parse_extended_public_key(private)
    assert private not in str(caught.value)
    assert private[4:20] not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b58check_encode(b58check_decode(V1_M)[:-1]), "77 bytes"),
        ("", "base58check"),
        ("xpub0OIl", "base58"),
        ("1" * 200, "longer"),
        (12345, "text"),
    ],
)
def test_malformed_text_is_refused(text, reason):
    with pytest.raises(ExtendedKeyError, match=reason):
        parse_extended_public_key(text)
