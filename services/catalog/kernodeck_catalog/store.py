"""Catalog tables and the queries the service needs."""

from datetime import datetime

from sqlmodel import Column, Field, Session, SQLModel, select

from kernodeck_catalog.domain import DURATIONS_DAYS, Capacity, Catalog, GpuModel, Preparation
from kernodeck_kit.db import make_engine
from kernodeck_kit.types import UtcDateTime
from kernodeck_kit.units import SqlUnit


class GpuModelRow(SQLModel, table=True):
    __tablename__ = "gpu_models"

    id: str = Field(primary_key=True, max_length=32)
    position: int
    name: str
    vendor: str
    backend: str = Field(max_length=8)
    memory_gb_per_gpu: int
    gpus_per_lot: int
    price_3_cents: int
    price_7_cents: int
    price_30_cents: int
    available_lots: int
    held_lots: int = 0
    capacity_as_of: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    listed: bool = True
    unsupported_preparations: str = ""  # comma-separated preparation ids


class PreparationRow(SQLModel, table=True):
    __tablename__ = "preparations"

    id: str = Field(primary_key=True, max_length=32)
    position: int
    name: str
    description: str
    listed: bool = True


def apply_catalog_file(session: Session, catalog: Catalog) -> None:
    """Make the tables match the operator's file.

    Availability is kept from the database for models already known: after
    the first start it belongs to provisioning. Models dropped from the file
    are unlisted, not deleted, so past orders keep their references.
    """
    known = {row.id: row for row in session.exec(select(GpuModelRow)).all()}
    for position, model in enumerate(catalog.models.values()):
        row = known.pop(model.id, None) or GpuModelRow(id=model.id, available_lots=model.available_lots, position=0)
        row.position = position
        row.name, row.vendor, row.backend = model.name, model.vendor, model.backend
        row.memory_gb_per_gpu, row.gpus_per_lot = model.memory_gb_per_gpu, model.gpus_per_lot
        row.price_3_cents, row.price_7_cents, row.price_30_cents = (model.lot_prices_cents[d] for d in DURATIONS_DAYS)
        row.unsupported_preparations = ",".join(model.unsupported_preparations)
        row.listed = True
        session.add(row)
    for row in known.values():
        row.listed = False
        session.add(row)

    preps = {row.id: row for row in session.exec(select(PreparationRow)).all()}
    for position, prep in enumerate(catalog.preparations.values()):
        row = preps.pop(prep.id, None) or PreparationRow(id=prep.id, position=0, name="", description="")
        row.position, row.name, row.description, row.listed = position, prep.name, prep.description, True
        session.add(row)
    for row in preps.values():
        row.listed = False
        session.add(row)


# Built once: the catalog is loaded again after every burst of capacity events, and building a statement (its
# clauses, its cache key) costs about as much as running it.
_LISTED_MODELS = select(GpuModelRow).where(GpuModelRow.listed).order_by(GpuModelRow.position)
_LISTED_PREPARATIONS = select(PreparationRow).where(PreparationRow.listed).order_by(PreparationRow.position)


def load_catalog(session: Session) -> Catalog:
    models = session.exec(_LISTED_MODELS).all()
    preps = session.exec(_LISTED_PREPARATIONS).all()
    return Catalog(
        models={
            row.id: GpuModel(
                id=row.id,
                name=row.name,
                vendor=row.vendor,
                backend=row.backend,
                memory_gb_per_gpu=row.memory_gb_per_gpu,
                gpus_per_lot=row.gpus_per_lot,
                lot_prices_cents={3: row.price_3_cents, 7: row.price_7_cents, 30: row.price_30_cents},
                available_lots=row.available_lots,
                held_lots=row.held_lots,
                unsupported_preparations=tuple(p for p in row.unsupported_preparations.split(",") if p),
            )
            for row in models
        },
        preparations={row.id: Preparation(row.id, row.name, row.description) for row in preps},
    )


class SqlCatalog(SqlUnit):
    """The catalog's unit of work on one database transaction."""

    def catalog(self) -> Catalog:
        return load_catalog(self.session)

    def capacity(self, model_id: str) -> Capacity | None:
        row = self.session.get(GpuModelRow, model_id)
        return None if row is None else Capacity(row.available_lots, row.capacity_as_of, row.held_lots)

    def set_capacity(self, model_id: str, capacity: Capacity) -> None:
        row = self.session.get(GpuModelRow, model_id)
        row.available_lots, row.capacity_as_of = capacity.available_lots, capacity.as_of
        row.held_lots = capacity.held_lots
        self.session.add(row)


def seed(database_url: str, catalog: Catalog) -> None:
    engine = make_engine(database_url)
    try:
        with Session(engine) as session:
            apply_catalog_file(session, catalog)
            session.commit()
    finally:
        engine.dispose()
