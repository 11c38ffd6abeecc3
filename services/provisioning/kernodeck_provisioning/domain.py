"""Provisioning rules: GPU nodes, who holds which GPU, the rental's status and term, and what a host agent is
asked and answers. No I/O."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from kernodeck_contracts.errors import ErrorCode, ServiceError

BACKENDS = ("cuda", "rocm")
PREPARATIONS = ("ubuntu", "python", "pytorch", "notebook", "inference", "blender", "custom")
WARNING_HOURS = (24, 1)  # RentalEnding goes out this many hours before the end, once each


class NodeState(StrEnum):
    AVAILABLE = "available"
    DRAINING = "draining"  # keeps its rentals to their end, takes no new one
    MAINTENANCE = "maintenance"  # out of service (by an operator, or after it failed a delivery)
    RETIRED = "retired"


class Isolation(StrEnum):
    """Whether the kernel keeps rentals on a node apart (its check, probe.sh, found all it needs)."""

    UNCHECKED = "unchecked"  # not checked yet, or the check could not reach it: taken as NONE
    KERNEL = "kernel"  # GPU device files per rental, hidden processes, keys in a root-owned place
    NONE = "none"  # something is missing (its note says what): one rental at a time


_N = NodeState
NODE_MOVES: dict[NodeState, frozenset[NodeState]] = {
    _N.AVAILABLE: frozenset({_N.DRAINING, _N.MAINTENANCE, _N.RETIRED}),
    _N.DRAINING: frozenset({_N.AVAILABLE, _N.MAINTENANCE, _N.RETIRED}),
    _N.MAINTENANCE: frozenset({_N.AVAILABLE, _N.DRAINING, _N.RETIRED}),
    _N.RETIRED: frozenset(),
}


class RentalStatus(StrEnum):
    HELD = "held"  # GPUs set aside while the order's payment is under way
    RELEASED = "released"  # the hold lapsed or the order was cancelled: GPUs free again
    DELIVERING = "delivering"  # paid: the GPUs are the customer's, the node is being prepared
    READY = "ready"  # delivered and checked: the term runs
    ENDED = "ended"  # reclaimed and wiped
    FAILED = "failed"  # nothing could be delivered: refunded


_R = RentalStatus
RENTAL_MOVES: dict[RentalStatus, frozenset[RentalStatus]] = {
    _R.HELD: frozenset({_R.RELEASED, _R.DELIVERING}),
    _R.RELEASED: frozenset({_R.HELD, _R.DELIVERING, _R.FAILED}),
    _R.DELIVERING: frozenset({_R.READY, _R.FAILED}),
    _R.READY: frozenset({_R.ENDED}),
    _R.ENDED: frozenset(),
    _R.FAILED: frozenset(),
}
# A GPU belongs to a rental in these statuses and to no other.
CLAIMING = frozenset({_R.HELD, _R.DELIVERING, _R.READY})
# A rental that reached one of these was paid for: its account is no newcomer.
PAID = frozenset({_R.DELIVERING, _R.READY, _R.ENDED, _R.FAILED})


@dataclass(frozen=True)
class HoldLimits:
    """What unpaid holds may take: GPUs per account (all models), and the share (percent) of a model's GPUs in
    service that the accounts yet to pay a first order may hold together."""

    gpus_per_account: int
    newcomers_percent: int


@dataclass(frozen=True)
class HeldNow:
    """The unpaid holds a new hold is weighed against: the account's own, and, when it is a newcomer's, all
    newcomers' on the model, out of the model's GPUs in service."""

    by_account: int
    newcomer: bool
    by_newcomers: int
    model_gpus: int


def check_hold_limits(limits: HoldLimits, held: HeldNow, gpus: int) -> None:
    """Refuse a hold of `gpus` more that would pass the account's cap or, for a newcomer, the newcomers' share."""
    if held.by_account + gpus > limits.gpus_per_account:
        raise ServiceError(
            ErrorCode.HOLD_LIMIT_REACHED,
            f"your unpaid orders hold {held.by_account} GPUs and an account may hold {limits.gpus_per_account} "
            f"before paying: pay or cancel one of them first",
        )
    if held.newcomer and (held.by_newcomers + gpus) * 100 > limits.newcomers_percent * held.model_gpus:
        raise ServiceError(
            ErrorCode.OUT_OF_CAPACITY,
            f"the share of these GPUs that accounts without a paid order may hold ({limits.newcomers_percent}%) "
            f"is held right now; try again in a few minutes",
        )


@dataclass(frozen=True)
class GpuModel:
    """What provisioning needs of a catalog model, copied when its first node is added."""

    id: str
    backend: str
    gpus_per_lot: int
    published_lots: int | None = None  # the last count announced to the catalog
    published_held_lots: int | None = None  # the last count of held lots announced


@dataclass
class Node:
    id: str
    host: str
    port: int
    host_key: str  # pinned `type base64`; a host presenting another key is refused
    model_id: str
    backend: str
    gpu_count: int
    state: NodeState
    created_at: datetime
    note: str = ""
    isolation: Isolation = Isolation.UNCHECKED
    isolation_note: str = ""  # what the last check found missing (or the node's facts when nothing was)
    isolation_checked_at: datetime | None = None  # the last check tried, reached or not


@dataclass
class Rental:
    """One order's GPUs: held before payment, then allocated, delivered, reclaimed."""

    order_id: str
    account_id: str
    model_id: str
    gpus: int
    status: RentalStatus
    node_id: str | None = None
    gpu_indices: tuple[int, ...] = ()
    held_until: datetime | None = None
    payments_in_flight: frozenset[str] = frozenset()  # seen, not yet settled: the hold waits for them
    tried_nodes: tuple[str, ...] = ()
    delivery_lease_until: datetime | None = None
    unix_user: str = ""
    delivered_at: datetime | None = None
    starts_at: datetime | None = None
    ends_at: datetime | None = None
    extra_days: int = 0  # paid extensions not yet added to ends_at
    extensions: tuple[str, ...] = ()  # extension ids applied, so a redelivery adds nothing
    warned_hours: tuple[int, ...] = ()
    access_secret: str = ""  # encrypted; see crypto.py
    reason: str = ""
    leftover_nodes: tuple[str, ...] = ()  # nodes where a failed delivery could not be undone yet: reclaimed later

    @property
    def claims(self) -> tuple[int, ...]:
        return self.gpu_indices if self.status in CLAIMING and self.node_id else ()


@dataclass(frozen=True)
class OrderCopy:
    """What provisioning keeps of an order, from orders' OrderCreated."""

    order_id: str
    account_id: str
    model_id: str
    duration_days: int
    lots: int
    total_gpus: int
    preparation: str
    ssh_public_key: str | None = None
    preparation_note: str | None = None
    cancelled: bool = False


@dataclass(frozen=True)
class Access:
    """What the customer logs in with. `jupyter_token` is a secret: stored encrypted, shown only to the owner."""

    ssh_host: str
    ssh_port: int
    ssh_user: str
    jupyter_url: str | None = None  # on the customer's side of `jupyter_tunnel`
    jupyter_token: str | None = None
    jupyter_tunnel: str | None = None  # the `ssh -L` command to the rental's JupyterLab socket


@dataclass(frozen=True)
class DeliveryJob:
    """Everything a host agent needs to prepare one rental on one node."""

    order_id: str
    node: Node
    gpu_indices: tuple[int, ...]
    unix_user: str
    ssh_public_key: str
    preparation: str


@dataclass(frozen=True)
class StepTimes:
    """Seconds each step of a delivery took, for the benchmark and the metrics."""

    connect: float
    user: float
    preparation: float
    readiness: float
    access: float


@dataclass(frozen=True)
class Delivered:
    access: Access
    times: StepTimes


@dataclass(frozen=True)
class NodeCheck:
    """What a node provides to keep rentals apart: `kernel`, or `none` with what it lacks in `note`."""

    isolation: str
    note: str


class NodeRefused(Exception):
    """The node cannot be delivered (unreachable, wrong host key, a failing step or readiness check).

    `leftover`: what the delivery made on the node may still be there (undoing it failed too)."""

    def __init__(self, step: str, reason: str, leftover: bool = False):
        super().__init__(f"{step}: {reason}")
        self.step, self.reason, self.leftover = step, reason, leftover


class ProcessesSurvive(NodeRefused):
    """A process of the rental outlived the reclaim: nothing of the rental may be given to anyone."""


@dataclass
class Placement:
    node: Node
    gpu_indices: tuple[int, ...]


@dataclass
class NodeLoad:
    node: Node
    claimed: set[int] = field(default_factory=set)

    @property
    def free(self) -> list[int]:
        """A node the kernel cannot keep rentals apart on takes one rental at a time."""
        if self.claimed and self.node.isolation != Isolation.KERNEL:
            return []
        return [i for i in range(self.node.gpu_count) if i not in self.claimed]


def move_rental(rental: Rental, new_status: RentalStatus, reason: str = "") -> None:
    """The only way a rental changes status: refuses any move the machine does not allow."""
    if new_status not in RENTAL_MOVES[rental.status]:
        raise ServiceError(ErrorCode.INVALID_STATE, f"a rental that is {rental.status} cannot become {new_status}")
    rental.status = new_status
    if reason:
        rental.reason = reason
    if new_status not in CLAIMING:
        rental.node_id, rental.gpu_indices = None, ()


def move_node(node: Node, new_state: NodeState, live_rentals: int) -> None:
    """Operators' moves; a node with live rentals is drained, never cut (retired)."""
    if new_state == node.state:
        return
    if new_state not in NODE_MOVES[node.state]:
        raise ServiceError(ErrorCode.INVALID_STATE, f"a {node.state} node cannot become {new_state}")
    if new_state == NodeState.RETIRED and live_rentals:
        raise ServiceError(
            ErrorCode.INVALID_STATE,
            f"node {node.id} has {live_rentals} live rental(s): drain it and retire it once they have ended",
        )
    node.state = new_state


def place(loads: list[NodeLoad], gpus: int, exclude: tuple[str, ...] = ()) -> Placement | None:
    """The node for `gpus` GPUs, all on one node (a rental is one SSH host): the fullest node that fits,
    so that large free blocks stay whole for large orders."""
    fitting = [
        load
        for load in loads
        if load.node.state == NodeState.AVAILABLE and load.node.id not in exclude and len(load.free) >= gpus
    ]
    if not fitting:
        return None
    best = min(fitting, key=lambda load: (len(load.free), load.node.created_at, load.node.id))
    return Placement(best.node, tuple(best.free[:gpus]))


def available_lots(loads: list[NodeLoad], gpus_per_lot: int) -> int:
    """The largest order, in lots, that one node can take now."""
    return max((len(load.free) // gpus_per_lot for load in loads if load.node.state == NodeState.AVAILABLE), default=0)


def model_gpus(loads: list[NodeLoad]) -> int:
    """The model's GPUs in service (on nodes that take new rentals)."""
    return sum(load.node.gpu_count for load in loads if load.node.state == NodeState.AVAILABLE)


def unpaid_hold(rental: Rental, now: datetime) -> bool:
    """A hold that still sets GPUs aside for an order not paid yet (not lapsed)."""
    return rental.status == RentalStatus.HELD and not hold_lapsed(rental, now)


def hold_lapsed(rental: Rental, now: datetime) -> bool:
    return (
        rental.status == RentalStatus.HELD
        and not rental.payments_in_flight
        and rental.held_until is not None
        and rental.held_until <= now
    )


def start_term(rental: Rental, duration_days: int, now: datetime) -> None:
    """Delivered and checked: the term starts now, not when the order was recorded or reported paid."""
    rental.delivered_at = rental.starts_at = now
    rental.ends_at = now + timedelta(days=duration_days + rental.extra_days)
    rental.extra_days = 0


def extend_term(rental: Rental, extension_id: str, extra_days: int) -> bool:
    """Add a paid extension once; before delivery it waits and is added when the term starts."""
    if extension_id in rental.extensions:
        return False
    if rental.status in (RentalStatus.ENDED, RentalStatus.FAILED):
        raise ServiceError(
            ErrorCode.INVALID_STATE, f"a {rental.status} rental cannot be extended"
        )  # the caller refunds it
    rental.extensions = (*rental.extensions, extension_id)
    if rental.ends_at is None:
        rental.extra_days += extra_days
    else:
        rental.ends_at += timedelta(days=extra_days)
    return True


def warnings_due(rental: Rental, now: datetime) -> list[int]:
    """The end warnings to send now: each once, and only the closest when several are due together."""
    if rental.status != RentalStatus.READY or rental.ends_at is None or now >= rental.ends_at:
        return []
    due = [h for h in WARNING_HOURS if h not in rental.warned_hours and rental.ends_at - now <= timedelta(hours=h)]
    return due


def is_live(rental: Rental, now: datetime) -> bool:
    """Access is shown only while this holds."""
    return rental.status == RentalStatus.READY and rental.ends_at is not None and now < rental.ends_at


def unix_user_for(order_id: str) -> str:
    return f"kd{order_id[:16].lower()}"


def ssh_key_required() -> ServiceError:
    """The refusal of a hold for an order without an SSH key whose account has none: no money is taken for a
    machine that cannot be handed over."""
    return ServiceError(
        ErrorCode.SSH_KEY_REQUIRED,
        "the machine is handed over by SSH and neither the order nor the account has an SSH public key:"
        " save your key on the account page, then pay; nothing was charged and the order is kept",
        [{"field": "ssh_public_key", "message": "save an SSH public key on the account page"}],
    )


def check_gpus(gpus, gpus_per_lot: int) -> int:
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1 or gpus % gpus_per_lot:
        raise ServiceError.field("gpus", f"an order takes whole lots of {gpus_per_lot} GPU(s)")
    return gpus
