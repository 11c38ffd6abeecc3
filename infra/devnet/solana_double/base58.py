"""Base58 (the Bitcoin alphabet), as Solana spells instruction data and base58-encoded transactions."""

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_INDEX = {c: i for i, c in enumerate(ALPHABET)}


def b58encode(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    digits = ""
    while number:
        number, rest = divmod(number, 58)
        digits = ALPHABET[rest] + digits
    zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * zeros + digits


def b58decode(text: str) -> bytes:
    """Raises ValueError on a character outside the alphabet."""
    number = 0
    for char in text:
        if char not in _INDEX:
            raise ValueError(f"invalid base58 character {char!r}")
        number = number * 58 + _INDEX[char]
    zeros = len(text) - len(text.lstrip("1"))
    return b"\0" * zeros + number.to_bytes((number.bit_length() + 7) // 8, "big")
