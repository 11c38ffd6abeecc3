"""The SQL unit of work on PostgreSQL: no GPU is held twice, however many holds race for it; a model copied
by two units at once is written, not refused."""

from datetime import UTC, datetime, timedelta

import eventlet
from sqlalchemy import func, select

from kernodeck_contracts.errors import ServiceError
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.testing import truncate_all
from kernodeck_kit.units import SqlUnits
from kernodeck_provisioning.domain import GpuModel, Isolation
from kernodeck_provisioning.store import GpuClaimRow, SqlProvisioning
from kernodeck_provisioning.use_cases import capacity, inventory
from services.provisioning.tests.keys import HOST_KEY

NOW = datetime.now(UTC)


def test_200_racing_holds_for_10_gpus_give_exactly_10(database_url):
    truncate_all(database_url)
    engine = make_engine(database_url, pool_size=8)  # 200 greenthreads race for 16 connections
    store = Store(engine, "provisioning", relay=None)
    model = GpuModel("h100", "cuda", 1)
    units = SqlUnits(store, SqlProvisioning)
    for index in range(2):
        node = inventory.add_node(units, f"10.0.0.{index}", 22, HOST_KEY, model, "h100", 5, "", NOW)
        inventory.node_checked(units, node.id, Isolation.KERNEL, "", NOW)

    def hold(order_index: int) -> bool:
        try:
            capacity.hold(units, f"o{order_index}", "a", "h100", 1, NOW + timedelta(minutes=30), NOW)
            return True
        except ServiceError as refused:
            assert refused.code == "out_of_capacity"
            return False

    pool = eventlet.GreenPool(200)
    outcomes = list(pool.imap(hold, range(200)))
    assert outcomes.count(True) == 10
    with store.read() as session:
        assert session.execute(select(func.count()).select_from(GpuClaimRow)).scalar() == 10
        with units.transaction() as unit:
            assert capacity.loads_of(unit, "h100")[0].free == []
    engine.dispose()


def test_a_model_copied_by_two_units_at_once_is_written_not_refused(database_url):
    truncate_all(database_url)
    engine = make_engine(database_url)
    store = Store(engine, "provisioning", relay=None)

    def add_while_the_sync_holds_its_copy():  # an operator's add_node, which found no copy either
        with store.transaction() as tx:
            SqlProvisioning(tx).save_model(GpuModel("h100", "cuda", 1))  # waits for the sync's row, then writes

    with store.transaction() as sync:
        SqlProvisioning(sync).save_model(GpuModel("h100", "cuda", 1, published_lots=3))
        adding = eventlet.spawn(add_while_the_sync_holds_its_copy)
        eventlet.sleep(0.5)
    adding.wait()
    with store.transaction() as tx:
        unit = SqlProvisioning(tx)
        assert unit.list_models() == [GpuModel("h100", "cuda", 1)]
        unit.save_model(GpuModel("h100", "cuda", 1, published_lots=5))
        assert unit.get_model("h100").published_lots == 5
    engine.dispose()


def test_a_hold_taken_released_and_taken_again_claims_its_gpus_once_and_tells_the_free_lots(database_url):
    """A new hold is inserted without reading its rental again; one taken again after its release replaces its
    claims; each announces the lots left, from the model read under its lock."""
    truncate_all(database_url)
    engine = make_engine(database_url)
    store = Store(engine, "provisioning", relay=None)
    units = SqlUnits(store, SqlProvisioning)
    node = inventory.add_node(units, "10.0.0.1", 22, HOST_KEY, GpuModel("h100", "cuda", 1), "h100", 5, "", NOW)
    inventory.node_checked(units, node.id, Isolation.KERNEL, "", NOW)
    until = NOW + timedelta(minutes=30)

    def claims_and_lots() -> tuple[list[tuple[str, int]], int]:
        with units.transaction() as unit:
            lots = unit.get_model("h100").published_lots
        with store.read() as session:
            claims = session.execute(select(GpuClaimRow.order_id, GpuClaimRow.gpu_index)).all()
        return sorted(claims), lots

    assert capacity.hold(units, "o1", "a", "h100", 2, until, NOW)["new"]
    assert claims_and_lots() == ([("o1", 0), ("o1", 1)], 3)
    assert capacity.release(units, "o1", "released_by_payments")
    assert claims_and_lots() == ([], 5)
    assert capacity.hold(units, "o1", "a", "h100", 1, until, NOW)["new"]
    assert capacity.hold(units, "o2", "a", "h100", 1, until, NOW)["new"]
    claims, lots = claims_and_lots()
    assert [order for order, _ in claims] == ["o1", "o2"] and len({index for _, index in claims}) == 2
    assert lots == 3
    engine.dispose()
