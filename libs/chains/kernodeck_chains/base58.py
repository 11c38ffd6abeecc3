"""Base58 and Base58Check (Bitcoin alphabet), as used by extended keys and
Bitcoin, Litecoin, Tron and Solana addresses."""

from .hashes import double_sha256

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_DIGITS = {char: value for value, char in enumerate(ALPHABET)}

# The longest text this service decodes is a 112-character extended key; the
# bound keeps hostile input from costing quadratic big-integer work.
MAX_TEXT_LENGTH = 128


def b58encode(data: bytes) -> str:
    number = int.from_bytes(data, "big")
    digits = []
    while number:
        number, remainder = divmod(number, 58)
        digits.append(ALPHABET[remainder])
    leading_zeros = len(data) - len(data.lstrip(b"\0"))
    return "1" * leading_zeros + "".join(reversed(digits))


def b58decode(text: str, max_length: int = MAX_TEXT_LENGTH) -> bytes:
    if len(text) > max_length:
        raise ValueError(f"base58 text longer than {max_length} characters")
    number = 0
    for position, char in enumerate(text):
        digit = _DIGITS.get(char)
        if digit is None:
            raise ValueError(f"invalid base58 character at position {position}")
        number = number * 58 + digit
    leading_zeros = len(text) - len(text.lstrip("1"))
    return b"\0" * leading_zeros + number.to_bytes((number.bit_length() + 7) // 8, "big")


def b58check_encode(payload: bytes) -> str:
    return b58encode(payload + double_sha256(payload)[:4])


def b58check_decode(text: str) -> bytes:
    """Return the payload; raise ValueError when the checksum does not match."""
    raw = b58decode(text)
    if len(raw) < 4:
        raise ValueError("base58check text too short to hold a checksum")
    payload, checksum = raw[:-4], raw[-4:]
    if double_sha256(payload)[:4] != checksum:
        raise ValueError("base58check checksum mismatch")
    return payload
