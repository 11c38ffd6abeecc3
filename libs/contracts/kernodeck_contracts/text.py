"""Text nothing can keep: NUL (PostgreSQL stores none) or a lone UTF-16 surrogate (JSON's "\\ud800", which
no UTF-8 spells). Refused wherever text comes in: the gateway's requests and every service's RPC."""


def unstorable(text: str) -> bool:
    return any(character == "\x00" or "\ud800" <= character <= "\udfff" for character in text)


def printable(name: str) -> str:
    """`name` as an error can show it: unstorable characters escaped."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def unstorable_fields(value, path: str = "") -> list[str]:
    """The dotted paths (`path` first) of the strings, or keys, in a JSON-like value that hold unstorable text."""
    if isinstance(value, str):
        return [path] if unstorable(value) else []
    if isinstance(value, list | tuple):
        return [field for n, item in enumerate(value) for field in unstorable_fields(item, f"{path}.{n}")]
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            field = f"{path}.{printable(str(key))}" if path else printable(str(key))
            found += [field] if isinstance(key, str) and unstorable(key) else unstorable_fields(item, field)
        return found
    return []
