"""A targeted look at a few addresses, now, recording what is there as a scan would: the address of a
"J'ai payé", and addresses newly watched (their payment may sit in a block scanned before the watch came).

Mempool transfers are recorded at once. A transfer in a block is recorded
only when the block it was found in is one the watcher has scanned (its
hash is the one remembered at that height): it was missed because the
address was not watched then. Newer blocks, or a chain that moved, are left to the scanner.
"""

from collections.abc import Callable, Mapping
from datetime import datetime

from kernodeck_kit.units import Units
from kernodeck_watchers.chains.base import ChainClient
from kernodeck_watchers.domain import transfers
from kernodeck_watchers.journal import journal
from kernodeck_watchers.unit import WatcherUnit


def look_at(
    units: Units[WatcherUnit],
    client: ChainClient,
    required: Mapping[str, int],
    blocks_back: int,
    now: Callable[[], datetime],
    scanned_from: int | None = None,
) -> int:
    """Record what the addresses (-> their required confirmations) received lately; how many events that made.

    `blocks_back` blocks below the tip, or below `scanned_from` when given: the height a scan started from
    while the addresses were not watched yet."""
    network = client.network
    tip = client.tip()
    newest = tip.height if scanned_from is None else min(scanned_from, tip.height)
    found = client.address_activity(list(required), max(newest - blocks_back + 1, 0))
    with journal(units, network, now()) as entry:
        cursor = entry.unit.get_cursor()
        entry.load({(seen.txid, seen.index) for seen, _ in found})
        scanned = entry.unit.scanned_hashes({block.height for _, block in found if block is not None})
        for seen, block in found:
            known = entry.known(seen.txid, seen.index)
            if block is None:
                entry.record(*transfers.in_mempool(known, seen, entry.now, required[seen.address]))
            elif cursor is not None and block.height <= cursor.height and scanned.get(block.height) == block.hash:
                entry.record(*transfers.in_block(known, seen, block, cursor.height, required[seen.address]))
        return len(entry.kinds)
