"""One client per network, each behind the same small interface (chains.base)."""
