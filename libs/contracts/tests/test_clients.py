"""The typed clients: each method calls its service's method by name with named arguments, and reads the answer
into its result model, refusing one that lacks a field; on an awaited transport (the gateway's) or a plain one
(a nameko proxy's)."""

import pytest
from pydantic import ValidationError

from kernodeck_contracts.clients import CatalogClient, OrdersClient, ServiceClient
from kernodeck_contracts.clients.base import rpc_method
from kernodeck_contracts.rpc import CatalogListing, Quote

pytestmark = pytest.mark.unit

QUOTE = {
    "model": "h100",
    "model_name": "NVIDIA H100",
    "backend": "cuda",
    "duration_days": 7,
    "lots": 2,
    "gpus_per_lot": 1,
    "total_gpus": 2,
    "preparation": "pytorch",
    "lot_price_usd_cents": 10_000,
    "total_usd_cents": 20_000,
    "available": True,
}
LISTING = {
    "models": [
        {
            "id": "h100",
            "name": "NVIDIA H100",
            "vendor": "nvidia",
            "backend": "cuda",
            "memory_gb_per_gpu": 80,
            "gpus_per_lot": 1,
            "lot_prices_cents": {"3": 5_000, "7": 10_000, "30": 40_000},
            "available_lots": 4,
            "held_lots": 1,
            "unsupported_preparations": [],
            "added_later": "ignored",
        }
    ],
    "durations_days": [3, 7, 30],
    "lots": {"min": 1, "max": 10},
    "preparations": [{"id": "pytorch", "name": "PyTorch", "description": "CUDA and PyTorch"}],
}


class Recorder:
    """The asyncio transport: records each call and answers with `answer`."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    async def __call__(self, service, method, /, **kwargs):
        self.calls.append((service, method, kwargs))
        return self.answer


class PlainRecorder(Recorder):
    """The eventlet transport (a nameko proxy's): the answer itself."""

    def __call__(self, service, method, /, **kwargs):
        self.calls.append((service, method, kwargs))
        return self.answer


def run(coroutine):
    """The result of a coroutine that awaits nothing but its transport's answer (no event loop in this lane)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the coroutine waited for something")


def test_a_quote_is_asked_by_name_and_read_as_a_quote():
    call = Recorder(QUOTE)
    quote = run(CatalogClient(call).quote(model="h100", duration_days=7, lots=2, preparation="pytorch"))
    assert call.calls == [
        ("catalog", "quote", {"model": "h100", "duration_days": 7, "lots": 2, "preparation": "pytorch"})
    ]
    assert quote == Quote(**QUOTE) and quote.total_usd_cents == 20_000


def test_the_listing_is_read_with_the_fields_it_knows():
    call = Recorder(LISTING)
    listing = run(CatalogClient(call).list_catalog())
    assert call.calls == [("catalog", "list_catalog", {})]
    assert isinstance(listing, CatalogListing)
    assert listing.models[0].lot_prices_cents == {"3": 5_000, "7": 10_000, "30": 40_000}
    assert listing.lots.max == 10 and listing.preparations[0].id == "pytorch"


def test_an_answer_without_a_field_of_its_result_is_refused():
    incomplete = {key: value for key, value in QUOTE.items() if key != "total_usd_cents"}
    with pytest.raises(ValidationError, match="total_usd_cents"):
        run(CatalogClient(Recorder(incomplete)).quote(model="h100", duration_days=7, lots=2, preparation="pytorch"))


def test_the_arguments_are_named_only():
    with pytest.raises(TypeError):
        CatalogClient(Recorder(QUOTE)).quote("h100", 7, 2, "pytorch")


def test_on_a_plain_transport_the_result_comes_back_itself():
    call = PlainRecorder(QUOTE)
    quote = CatalogClient(call).quote(model="h100", duration_days=7, lots=2, preparation="pytorch")
    assert quote == Quote(**QUOTE)
    assert call.calls == [
        ("catalog", "quote", {"model": "h100", "duration_days": 7, "lots": 2, "preparation": "pytorch"})
    ]


def test_a_dict_answer_goes_through_with_every_field():
    order = {"id": "o-1", "status": "paid", "summary": {"model": "h100"}, "added_later": [1, 2]}
    call = PlainRecorder(order)
    assert OrdersClient(call).get_order(account_id="a-1", order_id="o-1") == order
    assert call.calls == [("orders", "get_order", {"account_id": "a-1", "order_id": "o-1"})]


def test_the_transport_options_go_with_every_call():
    call = PlainRecorder({"items": [], "next_cursor": None})
    orders = OrdersClient(call, timeout=2.0).using(operator="op-1")
    orders.list_orders(account_id="a-1", limit=5)
    assert call.calls == [
        ("orders", "list_orders", {"timeout": 2.0, "operator": "op-1", "account_id": "a-1", "limit": 5})
    ]


def test_an_argument_left_out_is_not_sent_so_the_services_default_applies():
    call = PlainRecorder({"items": [], "next_cursor": None})
    OrdersClient(call).list_orders(account_id="a-1")
    assert call.calls == [("orders", "list_orders", {"account_id": "a-1"})]


def test_a_wrong_or_missing_argument_fails_before_anything_is_sent():
    call = PlainRecorder({})
    with pytest.raises(TypeError):
        OrdersClient(call).get_order(account_id="a-1", order="o-1")
    with pytest.raises(TypeError):
        OrdersClient(call).get_order(account_id="a-1")
    assert call.calls == []


def test_an_rpc_method_declares_its_parameters_keyword_only():
    with pytest.raises(TypeError, match="keyword-only"):

        class Positional(ServiceClient):
            service = "catalog"

            @rpc_method
            def quote(self, model: str) -> dict: ...
