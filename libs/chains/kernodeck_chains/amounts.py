"""Base units as decimal text in whole units, exactly."""


def check_int(name: str, value: int, minimum: int) -> None:
    """Refuse anything but an int (bool included) of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")


def format_amount(base_units: int, decimals: int) -> str:
    """Exact decimal text in whole units, without exponent or trailing zeros:
    (123456, 8) -> "0.00123456", (10**18, 18) -> "1"."""
    check_int("base_units", base_units, 0)
    check_int("decimals", decimals, 0)
    whole, fraction = divmod(base_units, 10**decimals)
    if fraction == 0:
        return str(whole)
    return f"{whole}.{fraction:0{decimals}d}".rstrip("0")
