"""Finding where the node's best chain and the scanned chain part."""

from collections.abc import Callable, Iterable


def common_ancestor(
    scanned: Iterable[tuple[int, str]], best_chain_hash: Callable[[int], str | None]
) -> tuple[int, str] | None:
    """The newest scanned block still on the best chain; None when none of the remembered ones is.

    `scanned` runs from the newest block down; `best_chain_hash(height)` is the
    node's block hash at that height, None above its tip.
    """
    for height, block_hash in scanned:
        if best_chain_hash(height) == block_hash:
            return height, block_hash
    return None
