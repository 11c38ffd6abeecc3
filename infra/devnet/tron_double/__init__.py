"""A test double of the Tron full-node HTTP API whose TRX and TRC-20 execution runs on anvil (see README.md)."""

from .double import DoubleError, TronDouble

__all__ = ["DoubleError", "TronDouble"]
