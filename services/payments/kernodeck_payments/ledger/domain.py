"""Ledger accounts, reasons and entries. No I/O.

An entry moves `amount_cents` from `debit_account` to `credit_account`. A
customer's balance is what was credited to `customer:<id>` minus what was
debited from it; money enters from `external:crypto` and order payments end
in `sales:orders`.
"""

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from kernodeck_contracts.errors import ServiceError

EXTERNAL_CRYPTO = "external:crypto"
SALES_ORDERS = "sales:orders"
CUSTOMER_PREFIX = "customer:"

CUSTOMER_ID_MAX = 64
ACCOUNT_MAX = len(CUSTOMER_PREFIX) + CUSTOMER_ID_MAX
KEY_MAX = 200
REF_MAX = 200


class Reason(StrEnum):
    TOPUP = "topup"
    OVERPAYMENT = "overpayment"
    UNDERPAYMENT = "underpayment"
    LATE_TRANSFER = "late_transfer"
    REFUSED_PAYMENT = "refused_payment"
    REVIEW_CREDIT = "review_credit"
    ORDER_PAYMENT = "order_payment"


REASONS = frozenset(Reason)
# Reasons to credit a balance with money that came in from a chain.
CREDIT_REASONS = REASONS - {Reason.ORDER_PAYMENT, Reason.REFUSED_PAYMENT}


def customer_account(customer_id: str) -> str:
    if not isinstance(customer_id, str) or not 0 < len(customer_id) <= CUSTOMER_ID_MAX:
        raise ServiceError.field("customer_id", f"a customer id is 1 to {CUSTOMER_ID_MAX} characters")
    return CUSTOMER_PREFIX + customer_id


def customer_of(account: str) -> str | None:
    """The customer id behind `customer:<id>`; None for any other account."""
    return account.removeprefix(CUSTOMER_PREFIX) if account.startswith(CUSTOMER_PREFIX) else None


@dataclass(frozen=True)
class Entry:
    debit_account: str
    credit_account: str
    amount_cents: int
    reason: Reason
    idempotency_key: str
    ref: str
    at: datetime

    def __post_init__(self):
        # bool is an int subclass: True would otherwise book one cent.
        if type(self.amount_cents) is not int or self.amount_cents <= 0:
            raise ServiceError.field("amount_cents", "an amount is a positive whole number of cents")
        if self.debit_account == self.credit_account:
            raise ServiceError.field("credit_account", "an entry moves money between two different accounts")
        if not isinstance(self.idempotency_key, str) or not 0 < len(self.idempotency_key) <= KEY_MAX:
            raise ServiceError.field("idempotency_key", f"an idempotency key is 1 to {KEY_MAX} characters")
        if len(self.ref) > REF_MAX:
            raise ServiceError.field("ref", f"a reference is at most {REF_MAX} characters")
        if self.reason not in REASONS:
            raise ServiceError.field("reason", f"unknown reason {self.reason!r}")
        object.__setattr__(self, "reason", Reason(self.reason))

    @property
    def customer_id(self) -> str | None:
        """The customer whose balance this entry moves, if any."""
        return customer_of(self.credit_account) or customer_of(self.debit_account)


def customer_credit(
    customer_id: str, amount_cents: int, reason: Reason, idempotency_key: str, ref: str, at: datetime
) -> Entry:
    if reason not in CREDIT_REASONS:
        raise ServiceError.field("reason", f"{reason} is not a reason to credit a balance")
    return Entry(EXTERNAL_CRYPTO, customer_account(customer_id), amount_cents, reason, idempotency_key, ref, at)


def order_debit(customer_id: str, amount_cents: int, order_id: str, idempotency_key: str, at: datetime) -> Entry:
    """An order paid from the customer's balance."""
    return Entry(
        customer_account(customer_id), SALES_ORDERS, amount_cents, Reason.ORDER_PAYMENT, idempotency_key, order_id, at
    )


def refused_order_payment(
    customer_id: str, amount_cents: int, payment_id: str, idempotency_key: str, at: datetime
) -> Entry:
    """A payment the order could not take (already paid, cancelled): out of sales, back to the customer."""
    return Entry(
        SALES_ORDERS,
        customer_account(customer_id),
        amount_cents,
        Reason.REFUSED_PAYMENT,
        idempotency_key,
        payment_id,
        at,
    )


def crypto_order_payment(amount_cents: int, order_id: str, idempotency_key: str, at: datetime) -> Entry:
    """An order paid straight from a crypto transfer: booked so that sales stay complete."""
    return Entry(EXTERNAL_CRYPTO, SALES_ORDERS, amount_cents, Reason.ORDER_PAYMENT, idempotency_key, order_id, at)


def refund_key(payment_id: str) -> str:
    """The one key a payment is given back under, whichever way (its order refused it, or the order's delivery
    failed): a payment is refunded once, never once per way."""
    return f"refused:{payment_id}"


def booked_payment(key: str, order_id: str) -> str:
    """The payment an order's booking into sales was made for, from its idempotency key: a crypto payment's
    intent (`order-payment:<intent id>`), or the balance debit (`balance-payment:<order id>`)."""
    kind, _, rest = key.partition(":")
    return f"balance-{order_id}" if kind == "balance-payment" else rest
