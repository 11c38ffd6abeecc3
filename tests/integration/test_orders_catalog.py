"""Orders prices through the real catalog: its quote becomes the order's summary, its refusals come through."""

import pytest

from kernodeck_kit.transport.calls import RemoteServiceError

ALICE = "acct-alice"


def test_an_order_keeps_the_catalogs_quote(orders):
    summary = orders.create_order(ALICE, "b200", 7, 2, "pytorch")["summary"]
    # A B200 lot holds two cards; its 7-day price is the catalog file's 1,999.00 USD.
    assert (summary["model_name"], summary["total_gpus"]) == ("NVIDIA B200", 4)
    assert (summary["lot_price_usd_cents"], summary["total_usd_cents"]) == (199900, 399800)


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
    assert orders.list_orders(ALICE) == {"items": [], "next_cursor": None}
