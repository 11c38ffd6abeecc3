"""Support's unit of work on plain objects (kernodeck_kit.memory): its use cases run here without a database."""

from copy import deepcopy
from dataclasses import dataclass, field

from kernodeck_kit.memory import MemoryUnit
from kernodeck_kit.paging import Page
from kernodeck_kit.units import MemoryUnits
from kernodeck_support.domain import Answer, Extension, RequestStatus, SupportRequest, request_key


@dataclass
class SupportTables:
    requests: dict[str, SupportRequest] = field(default_factory=dict)
    extensions: dict[str, Extension] = field(default_factory=dict)


class MemorySupport(MemoryUnit[SupportTables]):
    def add_request(self, request: SupportRequest) -> None:
        self.put(self.tables.requests, request)

    def get_request(self, request_id: str, lock: bool = False) -> SupportRequest | None:
        return self.read(self.tables.requests, request_id)

    def requests_of(self, account_id: str, page: Page) -> list[SupportRequest]:
        return self.page(self.tables.requests, page, request_key, lambda r: r.account_id == account_id)

    def requests_by_status(self, status: RequestStatus, page: Page) -> list[SupportRequest]:
        return self.page(self.tables.requests, page, request_key, lambda r: r.status == status)

    def save_request(self, request: SupportRequest) -> None:
        stored = self.tables.requests[request.id]
        stored.status, stored.decision, stored.updated_at = request.status, request.decision, request.updated_at

    def add_answer(self, request_id: str, reply: Answer) -> None:
        self.tables.requests[request_id].answers.append(reply)

    def add_extension(self, extension: Extension) -> None:
        if any(e.request_id == extension.request_id for e in self.tables.extensions.values()):
            raise ValueError("one extension per request")  # the unique constraint of the table
        self.put(self.tables.extensions, extension)

    def get_extension(self, extension_id: str, lock: bool = False) -> Extension | None:
        return self.read(self.tables.extensions, extension_id)

    def extensions_of(self, order_ids: list[str]) -> list[Extension]:
        found = [e for e in self.tables.extensions.values() if e.order_id in order_ids]
        return deepcopy(sorted(found, key=lambda e: e.created_at))

    def save_extension(self, extension: Extension) -> None:
        self.put(self.tables.extensions, extension)


def memory_units() -> MemoryUnits:
    return MemoryUnits("support", SupportTables(), MemorySupport)
