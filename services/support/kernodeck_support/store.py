"""Support tables and the unit of work on them."""

from datetime import datetime

from sqlalchemy import JSON, Index, update
from sqlmodel import Column, Field, SQLModel, select

from kernodeck_contracts.timeline import TimelineCode
from kernodeck_kit.paging import Page
from kernodeck_kit.rows import copy_as, values_of
from kernodeck_kit.types import UtcDateTime
from kernodeck_kit.units import SqlUnit
from kernodeck_support.domain import (
    Answer,
    Details,
    Extension,
    ExtensionStatus,
    RequestStatus,
    SupportRequest,
)


class RequestRow(SQLModel, table=True):
    __tablename__ = "support_requests"
    __table_args__ = (
        Index("ix_support_requests_account_created", "account_id", "created_at", "id"),
        Index("ix_support_requests_status_created", "status", "created_at", "id"),
    )

    id: str = Field(primary_key=True, max_length=32)
    account_id: str = Field(max_length=64)
    order_id: str | None = Field(default=None, max_length=32, index=True)
    topup_id: str | None = Field(default=None, max_length=32, index=True)
    kind: str = Field(max_length=16)
    status: str = Field(max_length=16)
    message: str
    failed_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    launch_command: str | None = None
    versions: str | None = None
    first_error: str | None = None
    minimal_example: str | None = None
    extra_days: int | None = None
    configuration: str | None = None
    due_by: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    decision: str | None = Field(default=None, max_length=16)
    created_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    updated_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class AnswerRow(SQLModel, table=True):
    __tablename__ = "support_answers"

    id: int | None = Field(default=None, primary_key=True)
    request_id: str = Field(foreign_key="support_requests.id", index=True, max_length=32)
    at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    author_id: str = Field(max_length=64)
    text: str
    code: str | None = Field(default=None, max_length=40)
    params: dict = Field(default_factory=dict, sa_column=Column(JSON(), nullable=False))


class ExtensionRow(SQLModel, table=True):
    __tablename__ = "extensions"

    id: str = Field(primary_key=True, max_length=32)
    request_id: str = Field(foreign_key="support_requests.id", unique=True, max_length=32)
    order_id: str = Field(max_length=32, index=True)
    account_id: str = Field(max_length=64)
    extra_days: int
    price_usd_cents: int
    due_by: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    status: str = Field(max_length=16)
    payment_id: str | None = Field(default=None, max_length=64)
    created_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    updated_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class SqlSupport(SqlUnit):
    """Support's unit of work on one database transaction."""

    # --- requests ---------------------------------------------------------------

    def add_request(self, request: SupportRequest) -> None:
        self.session.add(
            copy_as(
                RequestRow,
                request,
                status=request.status.value,
                updated_at=request.updated_at or request.created_at,
                **values_of(request.details, Details),
            )
        )

    def get_request(self, request_id: str, lock: bool = False) -> SupportRequest | None:
        query = select(RequestRow).where(RequestRow.id == request_id)
        row = self.session.exec(query.with_for_update() if lock else query).first()
        return None if row is None else self._with_answers([row])[0]

    def requests_of(self, account_id: str, page: Page) -> list[SupportRequest]:
        """A page of the account's requests, newest first."""
        query = select(RequestRow).where(RequestRow.account_id == account_id)
        return self._with_answers(self.session.exec(page.select(query, RequestRow.created_at, RequestRow.id)).all())

    def requests_by_status(self, status: RequestStatus, page: Page) -> list[SupportRequest]:
        """A page of the requests in `status`, oldest first: the queue in the order it came."""
        query = select(RequestRow).where(RequestRow.status == status.value)
        return self._with_answers(self.session.exec(page.select(query, RequestRow.created_at, RequestRow.id)).all())

    def save_request(self, request: SupportRequest) -> None:
        self.session.execute(
            update(RequestRow)
            .where(RequestRow.id == request.id)
            .values(status=request.status.value, decision=request.decision, updated_at=request.updated_at)
        )

    def add_answer(self, request_id: str, reply: Answer) -> None:
        self.session.add(
            AnswerRow(
                request_id=request_id,
                at=reply.at,
                author_id=reply.author_id,
                text=reply.text,
                code=reply.code,
                params=reply.params,
            )
        )

    def _with_answers(self, rows: list[RequestRow]) -> list[SupportRequest]:
        answers: dict[str, list[Answer]] = {row.id: [] for row in rows}
        if rows:
            found = self.session.exec(
                select(AnswerRow).where(AnswerRow.request_id.in_(list(answers))).order_by(AnswerRow.id)
            )
            for a in found:
                code = None if a.code is None else TimelineCode(a.code)
                answers[a.request_id].append(Answer(a.at, a.author_id, a.text, code, a.params))
        return [_request(row, answers[row.id]) for row in rows]

    # --- extensions -------------------------------------------------------------

    def add_extension(self, extension: Extension) -> None:
        self.session.add(copy_as(ExtensionRow, extension, status=extension.status.value))

    def get_extension(self, extension_id: str, lock: bool = False) -> Extension | None:
        query = select(ExtensionRow).where(ExtensionRow.id == extension_id)
        row = self.session.exec(query.with_for_update() if lock else query).first()
        return None if row is None else _extension(row)

    def extensions_of(self, order_ids: list[str]) -> list[Extension]:
        rows = self.session.exec(
            select(ExtensionRow).where(ExtensionRow.order_id.in_(order_ids)).order_by(ExtensionRow.created_at)
        )
        return [_extension(row) for row in rows]

    def save_extension(self, extension: Extension) -> None:
        self.session.execute(
            update(ExtensionRow)
            .where(ExtensionRow.id == extension.id)
            .values(status=extension.status.value, payment_id=extension.payment_id, updated_at=extension.updated_at)
        )


def _request(row: RequestRow, answers: list[Answer]) -> SupportRequest:
    details = copy_as(Details, row)
    return copy_as(SupportRequest, row, details=details, status=RequestStatus(row.status), answers=answers)


def _extension(row: ExtensionRow) -> Extension:
    return copy_as(Extension, row, status=ExtensionStatus(row.status))
