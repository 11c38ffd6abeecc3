import pytest

from kernodeck_contracts.events import ALL_EVENTS, TransferConfirmed

pytestmark = pytest.mark.unit


def test_each_event_type_is_declared_once_per_source():
    keys = [(event.source, event.type) for event in ALL_EVENTS]
    assert len(keys) == len(set(keys))


def test_an_event_survives_the_wire_and_ignores_unknown_fields():
    event = TransferConfirmed(network="litecoin", txid="ab" * 32, index=1, address="rltc1q", amount=10**8, sequence=7)
    message = {**event.to_message(), "added_later": True}
    assert TransferConfirmed.from_message(message) == event
    assert message["version"] == 1
