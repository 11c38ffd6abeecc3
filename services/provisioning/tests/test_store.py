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
