"""Segwit address encoding: Bech32 (BIP173) for witness version 0 and
Bech32m (BIP350) for versions 1 to 16."""

from enum import Enum

CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_VALUES = {char: value for value, char in enumerate(CHARSET)}
_GENERATOR = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)
MAX_LENGTH = 90
_CHECKSUM_LENGTH = 6


class Encoding(Enum):
    """Each variant is named by the constant its checksum is xored with."""

    BECH32 = 1
    BECH32M = 0x2BC830A3


def _polymod(values: list[int]) -> int:
    checksum = 1
    for value in values:
        top = checksum >> 25
        checksum = (checksum & 0x1FFFFFF) << 5 ^ value
        for bit, generator in enumerate(_GENERATOR):
            if (top >> bit) & 1:
                checksum ^= generator
    return checksum


def _hrp_expand(hrp: str) -> list[int]:
    return [ord(char) >> 5 for char in hrp] + [0] + [ord(char) & 31 for char in hrp]


def bech32_encode(hrp: str, data: list[int], encoding: Encoding) -> str:
    polymod = _polymod(_hrp_expand(hrp) + data + [0] * _CHECKSUM_LENGTH) ^ encoding.value
    checksum = [(polymod >> 5 * (5 - i)) & 31 for i in range(_CHECKSUM_LENGTH)]
    return hrp + "1" + "".join(CHARSET[value] for value in data + checksum)


def bech32_decode(text: str) -> tuple[str, list[int], Encoding]:
    """Return (hrp, 5-bit data without checksum, encoding); raise ValueError."""
    if any(not 33 <= ord(char) <= 126 for char in text):
        raise ValueError("character out of range")
    if text.lower() != text and text.upper() != text:
        raise ValueError("mixed case")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"longer than {MAX_LENGTH} characters")
    text = text.lower()
    separator = text.rfind("1")
    if separator < 1:
        raise ValueError("missing separator or empty human-readable part")
    if len(text) - separator - 1 < _CHECKSUM_LENGTH:
        raise ValueError("checksum too short")
    hrp = text[:separator]
    data = []
    for char in text[separator + 1 :]:
        value = _VALUES.get(char)
        if value is None:
            raise ValueError("invalid data character")
        data.append(value)
    constant = _polymod(_hrp_expand(hrp) + data)
    for encoding in Encoding:
        if encoding.value == constant:
            return hrp, data[:-_CHECKSUM_LENGTH], encoding
    raise ValueError("invalid checksum")


def _convert_bits(data: bytes | list[int], from_bits: int, to_bits: int, pad: bool) -> list[int]:
    accumulator = 0
    bits = 0
    result = []
    max_value = (1 << to_bits) - 1
    max_accumulator = (1 << (from_bits + to_bits - 1)) - 1
    for value in data:
        accumulator = ((accumulator << from_bits) | value) & max_accumulator
        bits += from_bits
        while bits >= to_bits:
            bits -= to_bits
            result.append((accumulator >> bits) & max_value)
    if pad:
        if bits:
            result.append((accumulator << (to_bits - bits)) & max_value)
    elif bits >= from_bits or (accumulator << (to_bits - bits)) & max_value:
        raise ValueError("invalid padding")
    return result


def _check_program(version: int, program: bytes) -> None:
    if not 0 <= version <= 16:
        raise ValueError(f"invalid witness version {version}")
    if not 2 <= len(program) <= 40:
        raise ValueError(f"invalid witness program length {len(program)}")
    if version == 0 and len(program) not in (20, 32):
        raise ValueError(f"invalid version 0 program length {len(program)}")


def _encoding_for(version: int) -> Encoding:
    return Encoding.BECH32 if version == 0 else Encoding.BECH32M


def encode_segwit_address(hrp: str, version: int, program: bytes) -> str:
    _check_program(version, program)
    return bech32_encode(hrp, [version, *_convert_bits(program, 8, 5, pad=True)], _encoding_for(version))


def decode_segwit_address(hrp: str, address: str) -> tuple[int, bytes]:
    """Return (witness version, witness program); raise ValueError."""
    found_hrp, data, encoding = bech32_decode(address)
    if found_hrp != hrp:
        raise ValueError(f"human-readable part {found_hrp!r}, expected {hrp!r}")
    if not data:
        raise ValueError("empty data section")
    version = data[0]
    program = bytes(_convert_bits(data[1:], 5, 8, pad=False))
    _check_program(version, program)
    if encoding is not _encoding_for(version):
        raise ValueError(f"witness version {version} needs {_encoding_for(version).name}")
    return version, program
