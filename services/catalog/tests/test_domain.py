import pytest

from kernodeck_catalog.domain import GpuModel
from kernodeck_contracts.errors import ServiceError

pytestmark = pytest.mark.unit


def fields(error: ServiceError) -> set[str]:
    return {e["field"] for e in error.errors}


@pytest.mark.parametrize("lots", [1, 10])
def test_lots_inside_bounds_are_accepted(catalog_file, lots):
    assert catalog_file.quote("h100", 3, lots, "ubuntu").lots == lots


@pytest.mark.parametrize("lots", [0, 11, -1, True, "2", 2.0])
def test_lots_outside_bounds_are_refused(catalog_file, lots):
    with pytest.raises(ServiceError) as caught:
        catalog_file.quote("h100", 3, lots, "ubuntu")
    assert fields(caught.value) == {"lots"}


@pytest.mark.parametrize("days", [3, 7, 30])
def test_the_three_durations_are_accepted(catalog_file, days):
    assert catalog_file.quote("h100", days, 1, "ubuntu").duration_days == days


@pytest.mark.parametrize("days", [2, 31, 0, 14, None, "7"])
def test_other_durations_are_refused(catalog_file, days):
    with pytest.raises(ServiceError) as caught:
        catalog_file.quote("h100", days, 1, "ubuntu")
    assert fields(caught.value) == {"duration_days"}


def test_unknown_model_and_preparation_are_reported_together(catalog_file):
    with pytest.raises(ServiceError) as caught:
        catalog_file.quote("tpu-v5", 7, 0, "windows")
    assert caught.value.code == "validation_error"
    assert fields(caught.value) == {"model", "lots", "preparation"}


def test_b200_lot_holds_two_gpus_and_its_price_is_not_multiplied_again(catalog_file):
    quote = catalog_file.quote("b200", 7, 2, "pytorch")
    lot_price = catalog_file.models["b200"].lot_prices_cents[7]
    assert quote.gpus_per_lot == 2
    assert quote.total_gpus == 4
    assert quote.total_usd_cents == 2 * lot_price


def test_single_gpu_lots(catalog_file):
    quote = catalog_file.quote("h100", 30, 3, "notebook")
    assert (quote.total_gpus, quote.total_usd_cents) == (3, 3 * catalog_file.models["h100"].lot_prices_cents[30])


def test_mi300x_runs_on_rocm_and_nvidia_on_cuda(catalog_file):
    assert catalog_file.quote("mi300x", 3, 1, "pytorch").backend == "rocm"
    assert {m.backend for m in catalog_file.models.values() if m.vendor == "NVIDIA"} == {"cuda"}


def test_availability_is_shown_before_paying(catalog_file):
    available = catalog_file.models["b200"].available_lots
    assert catalog_file.quote("b200", 3, available, "ubuntu").available is True
    if available < 10:
        assert catalog_file.quote("b200", 3, available + 1, "ubuntu").available is False


def test_the_seeded_catalog_has_the_required_models_and_preparations(catalog_file):
    assert {"h100", "h200", "b200", "a100", "l40s", "rtx4090", "mi300x"} <= set(catalog_file.models)
    assert set(catalog_file.preparations) == {
        "ubuntu",
        "python",
        "pytorch",
        "notebook",
        "inference",
        "blender",
        "custom",
    }


@pytest.mark.parametrize(
    "change",
    [{"backend": "opencl"}, {"gpus_per_lot": 0}, {"lot_prices_cents": {3: 100, 7: 200}}, {"available_lots": -1}],
)
def test_a_broken_model_definition_is_refused(change):
    base = dict(
        id="x",
        name="X",
        vendor="V",
        backend="cuda",
        memory_gb_per_gpu=1,
        gpus_per_lot=1,
        lot_prices_cents={3: 1, 7: 2, 30: 3},
        available_lots=1,
    )
    with pytest.raises(ValueError):
        GpuModel(**{**base, **change})


def test_a_preparation_the_model_does_not_support_is_refused(catalog_file):
    with pytest.raises(ServiceError) as caught:
        catalog_file.quote("mi300x", 3, 1, "blender")
    assert fields(caught.value) == {"preparation"}
    assert catalog_file.quote("h100", 3, 1, "blender").preparation == "blender"
