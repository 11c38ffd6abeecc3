import pytest
from nameko.exceptions import RemoteError
from nameko.standalone.events import event_dispatcher
from nameko.standalone.rpc import ServiceRpcProxy

from kernodeck_catalog.service import CatalogService
from kernodeck_contracts.events import CapacityChanged
from kernodeck_kit.testing import wait_until


@pytest.fixture
def catalog(container_factory, config):
    container = container_factory(CatalogService, config)
    container.start()
    CatalogService._cache = None
    with ServiceRpcProxy("catalog", config) as proxy:
        yield proxy


def test_list_catalog_over_rpc(catalog):
    listing = catalog.list_catalog()
    models = {m["id"]: m for m in listing["models"]}
    assert models["b200"]["gpus_per_lot"] == 2
    assert models["mi300x"]["backend"] == "rocm"
    assert listing["durations_days"] == [3, 7, 30]
    assert listing["lots"] == {"min": 1, "max": 10}
    assert len(listing["preparations"]) == 7


def test_quote_over_rpc(catalog):
    quote = catalog.quote("b200", 7, 2, "pytorch")
    assert quote["total_gpus"] == 4
    assert quote["total_usd_cents"] == 2 * quote["lot_price_usd_cents"]


def test_quote_refusal_crosses_rpc_with_its_fields(catalog):
    with pytest.raises(RemoteError) as caught:
        catalog.quote("h100", 31, 11, "ubuntu")
    assert caught.value.exc_type == "ServiceError"


def test_a_capacity_event_reaches_the_catalog_through_the_broker(catalog, config):
    """The rules of counts (newer only, once) are tested in memory (test_use_cases.py); here, the wiring."""
    dispatch = event_dispatcher(config)
    changed = CapacityChanged(model_id="h100", available_lots=2, held_lots=5)
    dispatch("provisioning", "capacity_changed", changed.to_message())

    def h100_lots():
        CatalogService._cache = None
        h100 = {m["id"]: m for m in catalog.list_catalog()["models"]}["h100"]
        return h100["available_lots"], h100["held_lots"]

    wait_until(lambda: h100_lots() == (2, 5), what="the capacity event")
    assert catalog.quote("h100", 3, 3, "ubuntu")["available"] is False
