"""What every route answers, as typed models: the OpenAPI document and the generated web client rely on them.

Extra fields are forbidden: a presenter that adds a field the document does not describe fails its route
(and the tests) instead of letting the document drift from the wire.
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from kernodeck_contracts import statuses
from kernodeck_contracts.statuses import values
from kernodeck_contracts.timeline import TimelineCode

Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
UsdText = Annotated[str, WithJsonSchema({"type": "string", "pattern": r"^\d+\.\d{2}$"})]
SignedUsdText = Annotated[str, WithJsonSchema({"type": "string", "pattern": r"^-?\d+\.\d{2}$"})]
CryptoText = Annotated[str, WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?$"})]
BaseUnitsText = Annotated[str, WithJsonSchema({"type": "string", "pattern": r"^\d+$"})]

OrderStatus = Literal[values(statuses.OrderStatus)]
PaymentStatus = Literal[values(statuses.PaymentStatus)]
LedgerReason = Literal[
    "topup", "overpayment", "underpayment", "late_transfer", "refused_payment", "review_credit", "order_payment"
]
Params = dict[str, str | int]


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldError(Answer):
    field: str
    message: str


class Problem(Answer):
    """An error (RFC 9457), `code` stable for machines; `errors` names the fields at fault."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[FieldError]


class Status(Answer):
    status: Literal["ok"]


class WatcherReport(Answer):
    state: Literal["following", "lagging", "silent"]
    lag_blocks: int
    reported_at: Timestamp
    degraded: list[str] = Field(
        description="what the watcher cannot see (ETH or TRX sent by a contract); the balance check backs it up"
    )


class Readiness(Answer):
    status: Literal["ready"]
    services: dict[str, bool]
    watchers: dict[str, WatcherReport]


class LotRange(Answer):
    min: int
    max: int


class Preparation(Answer):
    id: str
    name: str
    description: str


class GpuModel(Answer):
    id: str
    name: str
    vendor: str
    backend: Literal["cuda", "rocm"]
    memory_gb_per_gpu: int
    gpus_per_lot: int
    lot_prices_usd: dict[str, UsdText] = Field(description="the price of one lot per duration in days")
    available_lots: int = Field(description="the largest order, in lots, that one node can take now")
    held_lots: int = Field(
        description="lots set aside, over all nodes, by payments under way for orders not paid yet: they come back "
        "when those payments lapse"
    )


class Catalog(Answer):
    models: list[GpuModel]
    durations_days: list[int]
    lots: LotRange
    preparations: list[Preparation]


class OrderSummary(Answer):
    model: str
    model_name: str
    backend: Literal["cuda", "rocm"]
    duration_days: int
    lots: int
    gpus_per_lot: int
    total_gpus: int
    preparation: str
    lot_price_usd: UsdText
    total_usd: UsdText


class Quote(OrderSummary):
    available: bool


class Account(Answer):
    id: str
    first_name: str
    last_name: str
    email: str
    created_at: Timestamp


class Session(Answer):
    token: str
    expires_at: Timestamp
    account: Account


class AccountSshKey(Answer):
    ssh_public_key: str | None = Field(description="the account's key, null when none was given")


class TelegramLink(Answer):
    url: str


class Received(Answer):
    amount: CryptoText
    confirmed_amount: CryptoText


class Transfer(Answer):
    txid: str
    amount: CryptoText
    confirmations: int
    required_confirmations: int
    status: Literal[values(statuses.TransferStatus)]


class Credit(Answer):
    at: Timestamp
    amount_usd: UsdText
    reason: LedgerReason


class PaymentCheck(Answer):
    status: Literal["open", "resolved"]
    decision: Literal["credit_to_balance", "refunded_off_system", "dismissed"] | None


class PaymentFields(Answer):
    id: str
    asset: str
    network: str
    address: str
    amount: CryptoText
    amount_base_units: BaseUnitsText
    amount_usd: UsdText
    rate: str
    uri: str
    created_at: Timestamp
    expires_at: Timestamp
    status: PaymentStatus
    reported_at: Timestamp | None
    received: Received
    transfers: list[Transfer]
    credits: list[Credit] = Field(
        description="what the payment brought to the balance besides paying what it was for (an excess, a short or"
        " late transfer, a payment given back, a credit after a check), oldest first"
    )
    checks: list[PaymentCheck] = Field(description="checks by the team a transfer to this payment went to")


class OrderPayment(PaymentFields):
    purpose: Literal["order"]
    order_id: str


class TopupPayment(PaymentFields):
    purpose: Literal["topup"]
    topup_id: str


class ExtensionPayment(PaymentFields):
    purpose: Literal["extension"]
    extension_id: str


Payment = Annotated[OrderPayment | TopupPayment | ExtensionPayment, Field(discriminator="purpose")]


class PaymentMethod(Answer):
    asset: str
    network: str
    available: bool
    reason: str | None = Field(description="why the method is unavailable; null when it is available")


class TimelineEntry(Answer):
    at: Timestamp
    kind: str = Field(description="the status the order moved to, or a note (payment_reported, rental_ending...)")
    code: TimelineCode = Field(description="what the entry says, rendered in the customer's language with `params`")
    params: Params
    detail: str = Field(description="the same in English")


class Rental(Answer):
    delivered_at: Timestamp
    starts_at: Timestamp
    ends_at: Timestamp


class Access(Answer):
    ssh_host: str
    ssh_port: int
    ssh_user: str
    jupyter_url: str | None = Field(description="JupyterLab on the customer's side of `jupyter_tunnel`")
    jupyter_token: str | None
    jupyter_tunnel: str | None = Field(description="the `ssh -L` command that reaches the rental's JupyterLab")


class Extension(Answer):
    id: str
    request_id: str
    extra_days: Literal[3, 7, 30]
    price_usd: UsdText = Field(description="the catalog's lot price for the added days, times the order's lots")
    due_by: Timestamp = Field(description="payable until then")
    status: Literal["confirmed", "paid", "applied", "refunded"]
    payments: list[ExtensionPayment]


class Order(Answer):
    id: str
    status: OrderStatus
    summary: OrderSummary
    created_at: Timestamp
    updated_at: Timestamp
    timeline: list[TimelineEntry]
    payments: list[OrderPayment]
    preparation_note: str | None
    rental: Rental | None
    access: Access | None = Field(description="only for the owner, only while the rental is live")
    extensions: list[Extension] = Field(description="extensions confirmed by support; the end moves once one is paid")


class Balance(Answer):
    available_usd: UsdText
    pending_usd: UsdText


class LedgerEntry(Answer):
    at: Timestamp
    amount_usd: SignedUsdText = Field(description="a debit is negative")
    reason: LedgerReason
    ref: str


class Topup(Answer):
    id: str
    amount_usd: UsdText
    status: Literal["credited"] | PaymentStatus
    created_at: Timestamp
    payment: TopupPayment
    payments: list[TopupPayment] = Field(description="the top-up's payments, newest first (one today)")


class ReviewAudit(Answer):
    at: Timestamp
    actor: str
    action: str
    detail: str


class Review(Answer):
    id: str
    reason: str
    status: Literal["open", "resolved"]
    payment_id: str | None
    account_id: str | None
    transfer_key: str | None
    decision: str | None
    amount_usd: UsdText | None
    note: str
    created_at: Timestamp
    resolved_at: Timestamp | None
    resolved_by: str | None
    audit: list[ReviewAudit]


class Node(Answer):
    id: str
    host: str
    port: int
    host_key: str
    model: str
    backend: Literal["cuda", "rocm"]
    gpu_count: int
    gpus_in_use: int
    live_rentals: int
    state: Literal["available", "draining", "maintenance", "retired"]
    note: str
    isolation: Literal["unchecked", "kernel", "none"] = Field(
        description="kernel: the node keeps rentals apart; unchecked or none: it takes one rental at a time"
    )
    isolation_note: str = Field(description="what the node's check found missing, or its facts")
    created_at: Timestamp


class SupportAnswer(Answer):
    at: Timestamp
    text: str = Field(description="an operator's words, plain text: show it as text, never as HTML; may be empty")
    code: TimelineCode | None = Field(
        description="what support says with them: an extension confirmed or refused, a change of configuration"
        " confirmed (a timeline code, rendered with `params`)"
    )
    params: Params


class SupportRequestFields(Answer):
    id: str
    order_id: str | None = Field(description="the order it is about; null for a top-up or the account")
    topup_id: str | None = Field(description="the top-up it is about")
    kind: Literal["incident", "extension", "question"]
    status: Literal["open", "answered"]
    message: str = Field(description="as the customer typed it: show it as text, never as HTML")
    failed_at: Timestamp | None
    launch_command: str | None
    versions: str | None
    first_error: str | None
    minimal_example: str | None
    extra_days: Literal[3, 7, 30] | None
    configuration: str | None
    due_by: Timestamp | None
    decision: Literal["confirmed", "refused"] | None = Field(description="an extension request's")
    created_at: Timestamp
    updated_at: Timestamp


class SupportRequest(SupportRequestFields):
    answers: list[SupportAnswer]


class SupportRequestPage(Answer):
    items: list[SupportRequest]
    next_cursor: str | None


class AnswerByOperator(SupportAnswer):
    author_id: str


class OperatorSupportRequest(SupportRequestFields):
    account_id: str
    answers: list[AnswerByOperator]


class OperatorSupportRequestPage(Answer):
    items: list[OperatorSupportRequest]
    next_cursor: str | None


class SupportRequestWithOrder(OperatorSupportRequest):
    order: Order | None = Field(description="the request's order with its payments and their transfers")
    topup: Topup | None = Field(description="the request's top-up with its payment and its transfers")


class Resource(Answer):
    id: str
    name: str
    description: str = Field(description="what it is for, and what its result does and does not prove")
    url: str
    version: str = Field(description="the project's version this resource comes with")
