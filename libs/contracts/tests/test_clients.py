"""The typed clients: each method calls its service's method by name with named arguments, and reads the answer
into its result model, refusing one that lacks a field."""

import pytest
from pydantic import ValidationError

from kernodeck_contracts.clients import CatalogClient
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
    """The transport: records each call and answers with `answer`."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    async def __call__(self, service, method, /, **kwargs):
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
