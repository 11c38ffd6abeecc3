"""Unpaid holds cost the holder, not everyone else (on PostgreSQL): an account holds at most its cap of GPUs, and the
accounts yet to pay a first order hold together at most their share of a model, however many race for it."""

from datetime import UTC, datetime, timedelta

import eventlet
import pytest
from nameko.exceptions import RemoteError

from kernodeck_contracts.errors import ServiceError
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.testing import truncate_all
from kernodeck_kit.units import SqlUnits
from kernodeck_provisioning.domain import GpuModel, HoldLimits, Isolation, Rental, RentalStatus
from kernodeck_provisioning.store import SqlProvisioning
from kernodeck_provisioning.use_cases import capacity, inventory
from services.provisioning.tests.keys import HOST_KEY

NOW = datetime.now(UTC)
UNTIL = NOW + timedelta(minutes=30)
LIMITS = HoldLimits(gpus_per_account=4, newcomers_percent=50)
H100 = GpuModel("h100", "cuda", 1)


@pytest.fixture
def hold_settings() -> dict:
    return {}  # the defaults


@pytest.fixture
def units(database_url):
    truncate_all(database_url)
    engine = make_engine(database_url, pool_size=8)
    yield SqlUnits(Store(engine, "provisioning", relay=None), SqlProvisioning)
    engine.dispose()


def add_nodes(units, count: int, gpus: int, model: GpuModel = H100, subnet: int = 0) -> None:
    for index in range(count):
        node = inventory.add_node(units, f"10.0.{subnet}.{index}", 22, HOST_KEY, model, model.id, gpus, "", NOW)
        inventory.node_checked(units, node.id, Isolation.KERNEL, "", NOW)


def hold(units, order_id, account="a", gpus=1, model="h100", limits=LIMITS, until=UNTIL, now=NOW):
    return capacity.hold(units, order_id, account, model, gpus, until, now, limits=limits)


def refusal(units, order_id, account="a", gpus=1, model="h100", limits=LIMITS) -> str:
    with pytest.raises(ServiceError) as refused:
        hold(units, order_id, account, gpus, model, limits)
    return refused.value.code.value


def paid_before(units, account: str) -> None:
    """An earlier rental of the account's, paid for and ended."""
    with units.transaction() as unit:
        unit.save_rental(Rental(f"old-{account}", account, "h100", 1, RentalStatus.ENDED))


def test_an_account_holds_up_to_its_cap_and_not_one_gpu_more(units):
    add_nodes(units, 1, 16)
    hold(units, "o1", gpus=3)
    assert hold(units, "o2", gpus=1)["new"] is True  # 4 of 4
    assert refusal(units, "o3", gpus=1) == "hold_limit_reached"
    assert hold(units, "o1", gpus=3, until=UNTIL + timedelta(minutes=5))["new"] is False  # extending takes nothing
    assert hold(units, "o4", account="b", gpus=4)["new"] is True  # another account's cap is its own


def test_the_cap_counts_every_model_and_forgets_lapsed_holds(units):
    add_nodes(units, 1, 16)
    add_nodes(units, 1, 16, GpuModel("mi300x", "rocm", 1), subnet=1)
    hold(units, "o1", gpus=3, until=NOW + timedelta(minutes=1))
    assert refusal(units, "o2", gpus=2, model="mi300x") == "hold_limit_reached"
    assert hold(units, "o2", gpus=1, model="mi300x")["new"] is True
    later = NOW + timedelta(minutes=2)  # o1's hold lapsed, nothing on its way: its GPUs no longer count
    assert capacity.hold(units, "o3", "a", "mi300x", 3, later + timedelta(minutes=30), later, limits=LIMITS)["new"]


def test_a_hold_paid_in_the_same_call_passes_the_cap(units):
    add_nodes(units, 1, 16)
    hold(units, "o1", gpus=4)
    assert hold(units, "o2", gpus=2, limits=None)["new"] is True


def test_newcomers_hold_up_to_their_share_of_a_model_together(units):
    add_nodes(units, 2, 8)  # 16 GPUs: newcomers together hold at most 8 unpaid
    hold(units, "o1", account="a", gpus=4)
    hold(units, "o2", account="b", gpus=3)
    assert hold(units, "o3", account="c", gpus=1)["new"] is True  # 8 of 8
    assert refusal(units, "o4", account="d", gpus=1) == "out_of_capacity"
    paid_before(units, "e")  # an account that paid before is held to its own cap only
    assert hold(units, "o5", account="e", gpus=4)["new"] is True


def test_the_share_counts_only_the_gpus_in_service(units):
    add_nodes(units, 1, 4)
    assert refusal(units, "o1", gpus=3) == "out_of_capacity"  # 3 of 4 GPUs is past half
    assert hold(units, "o1", gpus=2)["new"] is True


def test_20_free_accounts_acting_together_take_at_most_the_newcomers_share(units):
    """The attack of the issue: free accounts re-opening holds on every lot. They get half the model, no more,
    and a paying customer still finds the other half."""
    add_nodes(units, 5, 4)  # 20 lots of one GPU
    outcomes = []

    def grab(account: int) -> None:
        for attempt in range(LIMITS.gpus_per_account + 2):
            try:
                hold(units, f"a{account}-o{attempt}", account=f"a{account}")
                outcomes.append("held")
            except ServiceError as refused:
                outcomes.append(refused.code.value)

    pool = eventlet.GreenPool(20)
    for account in range(20):
        pool.spawn(grab, account)
    pool.waitall()
    assert outcomes.count("held") == 10  # 50% of 20 lots
    assert set(outcomes) == {"held", "out_of_capacity"}
    with units.transaction() as unit:
        assert unit.held_gpus("h100") == 10
    paid_before(units, "customer")
    assert hold(units, "customer-o1", account="customer", gpus=4)["new"] is True


def test_the_catalog_hears_the_lots_held_as_well_as_the_lots_free(units):
    add_nodes(units, 1, 8)
    hold(units, "o1", gpus=2)
    with units.transaction() as unit:
        assert capacity.announce_capacity(unit, "h100", force=True) == 6
        assert unit.get_model("h100").published_held_lots == 2
    capacity.release(units, "o1", "cancelled")
    with units.transaction() as unit:
        assert (unit.get_model("h100").published_lots, unit.get_model("h100").published_held_lots) == (8, 0)


def test_the_service_refuses_past_the_cap_with_its_code_and_lets_a_payment_in_the_same_call_pass(
    provisioning, database_url
):
    """Over the broker, with the settings' defaults: 16 GPUs per account, newcomers half of a model."""
    engine = make_engine(database_url)
    add_nodes(SqlUnits(Store(engine, "provisioning", relay=None), SqlProvisioning), 1, 40)
    engine.dispose()
    until = (datetime.now(UTC) + timedelta(minutes=30)).isoformat()
    assert provisioning.hold_capacity("o1", "a", "h100", 16, until)["new"] is True
    with pytest.raises(RemoteError) as refused:
        provisioning.hold_capacity("o2", "a", "h100", 1, until)
    assert refused.value.code == "hold_limit_reached"
    assert provisioning.hold_capacity("o2", "a", "h100", 1, until, paid_now=True)["new"] is True
    assert provisioning.hold_capacity("o3", "b", "h100", 3, until)["new"] is True  # newcomers: 20 of 20
    with pytest.raises(RemoteError) as refused:
        provisioning.hold_capacity("o4", "c", "h100", 1, until)
    assert refused.value.code == "out_of_capacity"
