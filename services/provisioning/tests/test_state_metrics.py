"""GPUs per model, free, held, rented and out of service, read from the tables at each scrape."""

from prometheus_client import REGISTRY

from services.provisioning.tests.test_delivery import _try_hold, register


def gpus(state: str, model: str = "h100") -> float | None:
    return REGISTRY.get_sample_value("kernodeck_gpus", {"model": model, "state": state})


def test_free_held_and_out_of_service_gpus_per_model(provisioning, test_hosts):
    serving, spare = register(provisioning, test_hosts(gpus=4)), register(provisioning, test_hosts(gpus=2))
    assert (gpus("free"), gpus("held"), gpus("rented"), gpus("out_of_service")) == (6, 0, 0, 0)

    _try_hold(provisioning, "order-1", 3)
    provisioning.set_node_state(spare["id"], "maintenance", "fan noise")

    assert (gpus("free"), gpus("held"), gpus("rented"), gpus("out_of_service")) == (1, 3, 0, 2)
    assert serving["gpu_count"] == 4
    assert REGISTRY.get_sample_value("kernodeck_state_metrics_up", {"service": "provisioning"}) == 1
