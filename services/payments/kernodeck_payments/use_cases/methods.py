"""An operator switches a payment method on or off, recorded with who did it and when."""

from datetime import datetime
from typing import Protocol

from kernodeck_contracts.errors import ServiceError
from kernodeck_kit.units import Units
from kernodeck_payments.domain.methods import Method


class MethodsUnit(Protocol):
    def set_switch(self, method: Method, enabled: bool, operator_id: str, now: datetime) -> None:
        """The method's switch as the operator set it (the settings' default until one did)."""


def switch_method(units: Units[MethodsUnit], operator_id: str, method: Method, enabled, now: datetime) -> None:
    if not isinstance(enabled, bool):
        raise ServiceError.field("enabled", "enabled is true or false")
    with units.transaction() as unit:
        unit.set_switch(method, enabled, operator_id, now)
