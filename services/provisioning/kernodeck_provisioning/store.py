"""Provisioning's tables and its SQL unit (use_cases.unit.ProvisioningUnit) on a kit transaction."""

import json
from datetime import datetime

from sqlalchemy import Index, PrimaryKeyConstraint, bindparam, delete, insert, or_
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Column, Field, SQLModel, func, select

from kernodeck_kit.db import is_postgres
from kernodeck_kit.rows import copy_as
from kernodeck_kit.types import UtcDateTime
from kernodeck_kit.units import SqlUnit
from kernodeck_provisioning.domain import (
    CLAIMING,
    PAID,
    GpuModel,
    Isolation,
    Node,
    NodeState,
    OrderCopy,
    Rental,
    RentalStatus,
)


class ModelRow(SQLModel, table=True):
    __tablename__ = "model_copies"

    id: str = Field(primary_key=True, max_length=32)
    backend: str = Field(max_length=8)
    gpus_per_lot: int
    published_lots: int | None = None
    published_held_lots: int | None = None


class NodeRow(SQLModel, table=True):
    __tablename__ = "nodes"
    __table_args__ = (Index("ux_nodes_host_port", "host", "port", unique=True),)

    id: str = Field(primary_key=True, max_length=32)
    host: str = Field(max_length=253)
    port: int
    host_key: str
    model_id: str = Field(max_length=32, index=True)
    backend: str = Field(max_length=8)
    gpu_count: int
    state: str = Field(max_length=16)
    note: str = ""
    created_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    isolation: str = Field(default="unchecked", max_length=16)
    isolation_note: str = ""
    isolation_checked_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))


class RentalRow(SQLModel, table=True):
    __tablename__ = "rentals"
    __table_args__ = (
        Index("ix_rentals_status_held_until", "status", "held_until"),
        Index("ix_rentals_status_ends_at", "status", "ends_at"),
        Index("ix_rentals_account_id", "account_id"),
    )

    order_id: str = Field(primary_key=True, max_length=64)
    account_id: str = Field(max_length=64)
    model_id: str = Field(max_length=32)
    gpus: int
    status: str = Field(max_length=16)
    node_id: str | None = Field(default=None, max_length=32)
    gpu_indices: str = "[]"
    held_until: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    payments_in_flight: str = "[]"
    tried_nodes: str = "[]"
    delivery_lease_until: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    unix_user: str = Field(default="", max_length=32)
    delivered_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    starts_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    ends_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    extra_days: int = 0
    extensions: str = "[]"
    warned_hours: str = "[]"
    access_secret: str = ""
    reason: str = ""
    leftover_nodes: str = "[]"


class GpuClaimRow(SQLModel, table=True):
    """One row per GPU a live rental holds: the primary key makes a GPU impossible to hand out twice."""

    __tablename__ = "gpu_claims"
    __table_args__ = (PrimaryKeyConstraint("node_id", "gpu_index"),)

    node_id: str = Field(max_length=32)
    gpu_index: int
    order_id: str = Field(max_length=64, index=True)


class OrderCopyRow(SQLModel, table=True):
    __tablename__ = "order_copies"

    order_id: str = Field(primary_key=True, max_length=64)
    account_id: str = Field(max_length=64)
    model_id: str = Field(max_length=32)
    duration_days: int
    lots: int
    total_gpus: int
    preparation: str = Field(max_length=32)
    ssh_public_key: str | None = None
    preparation_note: str | None = None
    cancelled: bool = False


class AccountKeyRow(SQLModel, table=True):
    __tablename__ = "account_ssh_keys"

    account_id: str = Field(primary_key=True, max_length=64)
    public_key: str
    updated_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


_MODEL_COLUMNS = (
    ModelRow.id,
    ModelRow.backend,
    ModelRow.gpus_per_lot,
    ModelRow.published_lots,
    ModelRow.published_held_lots,
)
_LIST_FIELDS = ("gpu_indices", "payments_in_flight", "tried_nodes", "extensions", "warned_hours", "leftover_nodes")


def _save_model(dialect):
    statement = dialect.insert(ModelRow.__table__)
    fields = ("backend", "gpus_per_lot", "published_lots", "published_held_lots")
    return statement.on_conflict_do_update(index_elements=["id"], set_={f: statement.excluded[f] for f in fields})


def _save_order(dialect):
    statement = dialect.insert(OrderCopyRow.__table__)
    return statement.on_conflict_do_update(
        index_elements=["order_id"], set_={"cancelled": statement.excluded.cancelled}
    )


def _unpaid_held(*where):
    return select(func.coalesce(func.sum(RentalRow.gpus), 0)).where(
        RentalRow.status == RentalStatus.HELD.value,
        or_(RentalRow.held_until > bindparam("now"), RentalRow.payments_in_flight != "[]"),
        *where,
    )


# The statements of every hold, built once: building a statement (its clauses, its cache key) costs about as much
# as running it.
_ADD_RENTAL = insert(RentalRow.__table__)
_ADD_CLAIMS = insert(GpuClaimRow.__table__)
_ORDER = select(*OrderCopyRow.__table__.columns).where(OrderCopyRow.__table__.c.order_id == bindparam("order_id"))
_SAVE_ORDER = {"postgresql": _save_order(postgresql), "sqlite": _save_order(sqlite)}  # by the dialect's name
_DELETE_CLAIMS = delete(GpuClaimRow.__table__).where(GpuClaimRow.__table__.c.order_id == bindparam("order_id"))
_MODEL = select(*_MODEL_COLUMNS).where(ModelRow.id == bindparam("model_id"))
_MODEL_LOCKED = _MODEL.with_for_update()
_SAVE_MODEL = {"postgresql": _save_model(postgresql), "sqlite": _save_model(sqlite)}  # by the dialect's name
_NODES_OF_MODEL = select(NodeRow).where(NodeRow.model_id == bindparam("model_id")).order_by(NodeRow.created_at)
_CLAIMED_ON = select(GpuClaimRow.node_id, GpuClaimRow.gpu_index).where(
    GpuClaimRow.node_id.in_(bindparam("node_ids", expanding=True))
)
_LAPSED = (
    select(RentalRow)
    .where(
        RentalRow.status == RentalStatus.HELD.value,
        RentalRow.held_until <= bindparam("now"),
        RentalRow.payments_in_flight == "[]",
    )
    .order_by(RentalRow.held_until)
    .limit(bindparam("limit"))
)
_LAPSED_OF_MODEL = _LAPSED.where(RentalRow.model_id == bindparam("model_id"))
_HELD_GPUS = select(func.coalesce(func.sum(RentalRow.gpus), 0)).where(
    RentalRow.model_id == bindparam("model_id"), RentalRow.status == RentalStatus.HELD.value
)
_PAID_STATUSES = sorted(s.value for s in PAID)
_HAS_PAID = (
    select(RentalRow.order_id)
    .where(RentalRow.account_id == bindparam("account_id"), RentalRow.status.in_(_PAID_STATUSES))
    .limit(1)
)
_UNPAID_HELD_BY = _unpaid_held(RentalRow.account_id == bindparam("account_id"))
_UNPAID_HELD_BY_NEWCOMERS = _unpaid_held(
    RentalRow.model_id == bindparam("model_id"),
    RentalRow.account_id.not_in(select(RentalRow.account_id).where(RentalRow.status.in_(_PAID_STATUSES))),
)


class SqlProvisioning(SqlUnit):
    """Provisioning's unit on one kit transaction (its events leave through the outbox)."""

    def __init__(self, tx):
        super().__init__(tx)
        # Orders `get_rental` found no rental of in this transaction: saving one is an insert, with no row to read
        # again nor claims to clear (a hold does it under its model's lock, where each round trip makes the next
        # hold of the model wait).
        self._absent: set[str] = set()

    # Models are read as plain rows and written by one upsert: a model copied by the catalog sync and by an
    # operator's add_node at once (neither sees the other's row before its commit) is written twice, not refused.
    def get_model(self, model_id, lock=False):
        query = _MODEL_LOCKED if lock and is_postgres(self.session.get_bind()) else _MODEL
        row = self.session.exec(query, params={"model_id": model_id}).first()
        return None if row is None else GpuModel(*row)

    def save_model(self, model):
        values = {
            "id": model.id,
            "backend": model.backend,
            "gpus_per_lot": model.gpus_per_lot,
            "published_lots": model.published_lots,
            "published_held_lots": model.published_held_lots,
        }
        self.session.execute(_SAVE_MODEL[self.session.get_bind().dialect.name], values)

    def list_models(self):
        return [GpuModel(*row) for row in self.session.exec(select(*_MODEL_COLUMNS))]

    def nodes_of_model(self, model_id):
        return [_node(row) for row in self.session.exec(_NODES_OF_MODEL, params={"model_id": model_id})]

    def get_node(self, node_id):
        row = self.session.get(NodeRow, node_id)
        return None if row is None else _node(row)

    def node_at(self, host, port):
        row = self.session.exec(select(NodeRow).where(NodeRow.host == host, NodeRow.port == port)).first()
        return None if row is None else _node(row)

    def list_nodes(self):
        return [_node(row) for row in self.session.exec(select(NodeRow).order_by(NodeRow.created_at, NodeRow.id))]

    def save_node(self, node):
        row = self.session.get(NodeRow, node.id) or NodeRow(id=node.id, created_at=node.created_at)
        for name in ("host", "port", "host_key", "model_id", "backend", "gpu_count", "note", "isolation_note"):
            setattr(row, name, getattr(node, name))
        row.state, row.isolation = node.state.value, node.isolation.value
        row.isolation_checked_at = node.isolation_checked_at
        self.session.add(row)
        self.session.flush()

    def claimed_on(self, node_ids):
        claimed = {node_id: set() for node_id in node_ids}
        if node_ids:
            # Plain rows, not ORM objects: this runs twice for every hold, over every claim of the model.
            for node_id, gpu_index in self.session.execute(_CLAIMED_ON, {"node_ids": list(node_ids)}):
                claimed[node_id].add(gpu_index)
        return claimed

    def live_rentals_on(self, node_id):
        return self.session.exec(
            select(func.count()).where(RentalRow.node_id == node_id, RentalRow.status.in_([s.value for s in CLAIMING]))
        ).one()

    def get_rental(self, order_id):
        self.session.expire_all()  # read what the row holds now: the caller may just have taken the model's lock
        row = self.session.get(RentalRow, order_id)
        if row is None:
            self._absent.add(order_id)
            return None
        self._absent.discard(order_id)
        return _rental(row)

    def save_rental(self, rental):
        """A rental `get_rental` found absent is inserted, its claims too, by plain statements (nothing of them is
        read back as ORM rows); the row of one it read takes the rental's values."""
        new = rental.order_id in self._absent
        self._absent.discard(rental.order_id)
        values = _rental_values(rental)
        row = None if new else self.session.get(RentalRow, rental.order_id)
        if row is None:
            keys = {"order_id": rental.order_id, "account_id": rental.account_id, "model_id": rental.model_id}
            self.session.execute(_ADD_RENTAL, {**keys, **values})
        else:
            for name, value in values.items():
                setattr(row, name, value)
            self.session.flush()
        if not new:
            self.session.execute(_DELETE_CLAIMS, {"order_id": rental.order_id})
        claims = [{"node_id": rental.node_id, "gpu_index": i, "order_id": rental.order_id} for i in rental.claims]
        if claims:
            self.session.execute(_ADD_CLAIMS, claims)

    def lapsed_holds(self, model_id, now, limit):
        query, params = (_LAPSED, {}) if model_id is None else (_LAPSED_OF_MODEL, {"model_id": model_id})
        return [_rental(row) for row in self.session.exec(query, params={**params, "now": now, "limit": limit})]

    def lock_account(self, account_id):
        if is_postgres(self.session.get_bind()):
            self.session.execute(select(func.pg_advisory_xact_lock(func.hashtext(f"holds:{account_id}"))))

    def held_gpus(self, model_id):
        return self.session.exec(_HELD_GPUS, params={"model_id": model_id}).one()

    def unpaid_held_by(self, account_id, now):
        return self.session.exec(_UNPAID_HELD_BY, params={"account_id": account_id, "now": now}).one()

    def has_paid(self, account_id):
        return self.session.exec(_HAS_PAID, params={"account_id": account_id}).first() is not None

    def unpaid_held_by_newcomers(self, model_id, now):
        return self.session.exec(_UNPAID_HELD_BY_NEWCOMERS, params={"model_id": model_id, "now": now}).one()

    def deliveries_due(self, now, limit):
        query = select(RentalRow.order_id).where(
            RentalRow.status == RentalStatus.DELIVERING.value,
            or_(RentalRow.delivery_lease_until.is_(None), RentalRow.delivery_lease_until <= now),
        )
        return list(self.session.exec(query.limit(limit)).all())

    def nodes_to_check(self, tried_before, limit):
        query = select(NodeRow).where(
            NodeRow.isolation == Isolation.UNCHECKED.value,
            NodeRow.state != NodeState.RETIRED.value,
            or_(NodeRow.isolation_checked_at.is_(None), NodeRow.isolation_checked_at <= tried_before),
        )
        return [_node(row) for row in self.session.exec(query.order_by(NodeRow.created_at).limit(limit))]

    def rentals_with_leftovers(self, limit):
        query = select(RentalRow).where(RentalRow.leftover_nodes != "[]").order_by(RentalRow.order_id).limit(limit)
        return [_rental(row) for row in self.session.exec(query)]

    def ready_ending_before(self, before, limit):
        query = (
            select(RentalRow)
            .where(RentalRow.status == RentalStatus.READY.value, RentalRow.ends_at <= before)
            .order_by(RentalRow.ends_at)
            .limit(limit)
        )
        return [_rental(row) for row in self.session.exec(query)]

    def rentals_of(self, account_id, order_ids):
        if not order_ids:
            return []
        query = select(RentalRow).where(RentalRow.account_id == account_id, RentalRow.order_id.in_(order_ids))
        return [_rental(row) for row in self.session.exec(query)]

    def get_order(self, order_id):
        row = self.session.execute(_ORDER, {"order_id": order_id}).first()
        return None if row is None else OrderCopy(**row._mapping)

    def save_order(self, order):
        """A new order's copy, or whether a known one is cancelled: one upsert."""
        self.session.execute(_SAVE_ORDER[self.session.get_bind().dialect.name], order.__dict__)

    def account_key(self, account_id):
        row = self.session.get(AccountKeyRow, account_id)
        return None if row is None else row.public_key

    def set_account_key(self, account_id, key, now):
        row = self.session.get(AccountKeyRow, account_id) or AccountKeyRow(
            account_id=account_id, public_key="", updated_at=now
        )
        row.public_key, row.updated_at = key, now
        self.session.add(row)


def _rental_values(rental: Rental) -> dict:
    """The rental's columns but its keys (order, account, model), as its row keeps them."""
    values = {
        name: getattr(rental, name)
        for name in (
            "gpus",
            "node_id",
            "held_until",
            "delivery_lease_until",
            "unix_user",
            "delivered_at",
            "starts_at",
            "ends_at",
            "extra_days",
            "access_secret",
            "reason",
        )
    }
    values["status"] = rental.status.value
    for name in _LIST_FIELDS:
        listed = getattr(rental, name)
        values[name] = json.dumps(sorted(listed) if name == "payments_in_flight" else list(listed))
    return values


def _node(row: NodeRow) -> Node:
    return copy_as(Node, row, state=NodeState(row.state), isolation=Isolation(row.isolation))


def _rental(row: RentalRow) -> Rental:
    lists = {name: json.loads(getattr(row, name)) for name in _LIST_FIELDS}
    return Rental(
        order_id=row.order_id,
        account_id=row.account_id,
        model_id=row.model_id,
        gpus=row.gpus,
        status=RentalStatus(row.status),
        node_id=row.node_id,
        gpu_indices=tuple(lists["gpu_indices"]),
        held_until=row.held_until,
        payments_in_flight=frozenset(lists["payments_in_flight"]),
        tried_nodes=tuple(lists["tried_nodes"]),
        delivery_lease_until=row.delivery_lease_until,
        unix_user=row.unix_user,
        delivered_at=row.delivered_at,
        starts_at=row.starts_at,
        ends_at=row.ends_at,
        extra_days=row.extra_days,
        extensions=tuple(lists["extensions"]),
        warned_hours=tuple(lists["warned_hours"]),
        access_secret=row.access_secret,
        reason=row.reason,
        leftover_nodes=tuple(lists["leftover_nodes"]),
    )
