"""Orders prices through the real catalog: its quote becomes the order's summary, its refusals come through."""

import pytest

from kernodeck_kit.rpc_errors import RemoteServiceError

ALICE = "acct-alice"


def test_an_order_keeps_the_catalogs_quote(orders):
    order = orders.create_order(ALICE, "b200", 7, 2, "pytorch")
    assert order["summary"] == {
        "model": "b200",
        "model_name": "NVIDIA B200",
        "backend": "cuda",
        "duration_days": 7,
        "lots": 2,
        "gpus_per_lot": 2,
        "total_gpus": 4,
        "preparation": "pytorch",
        "lot_price_usd_cents": 199900,
        "total_usd_cents": 399800,
    }


@pytest.mark.parametrize(
    ("model", "days", "lots", "preparation", "field"),
    [
        ("h100", 3, 0, "ubuntu", "lots"),
        ("h100", 3, 11, "ubuntu", "lots"),
        ("h100", 2, 1, "ubuntu", "duration_days"),
        ("h100", 31, 1, "ubuntu", "duration_days"),
        ("tpu-v5", 3, 1, "ubuntu", "model"),
        ("h100", 3, 1, "windows", "preparation"),
    ],
)
def test_the_catalogs_validation_errors_come_through(orders, model, days, lots, preparation, field):
    with pytest.raises(RemoteServiceError) as caught:
        orders.create_order(ALICE, model, days, lots, preparation)
    error = caught.value.service_error
    assert (error.code, error.detail) == ("validation_error", "the order configuration is not valid")
    assert [e["field"] for e in error.errors] == [field]
    assert orders.list_orders(ALICE) == []
