"""Blocks from a Bitcoin Core node's own RPC, long-polled: `waitforblockheight` answers as soon as the node's
tip reaches the height asked for (or after WAIT_MS with the tip it has). For a node built without ZMQ
(Debian's litecoind) or reached only over RPC; one of the node's RPC threads is held while it waits.
"""

from collections.abc import Callable

from kernodeck_watchers.chains.jsonrpc import JsonRpc, RpcError

WAIT_MS = 20_000  # under the node's own HTTP idle limit (rpcservertimeout, 30 s by default)
METHOD_NOT_FOUND = -32601


class LongPollRefused(RuntimeError):
    """The node (or a provider in front of it) does not serve waitforblockheight: polling only."""


def listen(rpc: JsonRpc, on_block: Callable[[], None]) -> None:
    """Call `on_block` for every change of the node's tip; returns only by raising.

    Asking for the next height, rather than for "a new block", misses none that arrive between two calls:
    the node answers at once when it already has it. The first answer wakes too: blocks may have come while
    disconnected. A tip that went back (a reorganisation to a shorter chain) is told at the next answer.
    """
    tip = None
    while True:
        try:
            answer = rpc.call("waitforblockheight", tip["height"] + 1 if tip else 0, WAIT_MS)
        except RpcError as error:
            if error.code == METHOD_NOT_FOUND:
                raise LongPollRefused(str(error)) from None
            raise
        if tip is None or answer["hash"] != tip["hash"]:
            on_block()
        tip = answer
