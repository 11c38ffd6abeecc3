"""timeline entries as a code with parameters (kernodeck_contracts.timeline) instead of English sentences

The stored sentences were written by this service's own f-strings: each is read back into its code and
parameters here (the forms are copied, not imported, so that later changes to the service do not change what
this migration does). A sentence of no known form is kept as written, as a `note`.

Revision ID: 0005_timeline_codes
Revises: 0004_processed_at_index
"""

import re

import sqlalchemy as sa
from alembic import op

revision = "0005_timeline_codes"
down_revision = "0004_processed_at_index"
branch_labels = None
depends_on = None

BATCH = 1000
FAILURES = {
    "no_ssh_public_key": "failed_no_ssh_key",
    "no_node_passed": "failed_no_node",
    "capacity_lost": "failed_capacity_lost",
}
TIME = r"(\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:\d\d))"
CONFIRMED_ANSWER = re.compile(
    rf"^Confirmed: (\d+) more days for (\d+\.\d\d) USD, to pay on the order page before {TIME}\."
    r" The new end counts once it is paid\.(?:\n(.*))?$",
    re.DOTALL,
)
# kind -> [(form, code, parameter names in the form's order)], tried in order.
FORMS = {
    "payment_reported": [(r"the customer reports paying with (\w+)", "payment_reported", ("network",))],
    "ready": [(rf"delivered; the term ends {TIME}", "ready", ("ends_at",))],
    "rental_ending": [
        (rf"the rental ends in (\d+) h \({TIME}\): export your results now", "rental_ending", ("hours", "ends_at"))
    ],
    "rental_extended": [(rf"the term now ends {TIME}", "rental_extended", ("ends_at",))],
    "support_request": [(r"(incident|question|extension) request \S+ sent to support", "support_", ("kind",))],
    "extension_confirmed": [
        (
            rf"extension \S+ confirmed: (\d+) more days for (\d+\.\d\d) USD, to pay by {TIME}; the end moves once paid",
            "extension_confirmed",
            ("days", "price_usd", "due_by"),
        )
    ],
    "extension_paid": [(r"extension \S+ paid: the node is being extended by (\d+) days", "extension_paid", ("days",))],
}
COUNTS = ("hours", "days")


def said(kind: str, detail: str) -> tuple[str, dict]:
    """The code and parameters an entry of `kind` with the sentence `detail` stands for."""
    simple = {"created": "order_recorded", "provisioning": "preparing", "ended": "ended"}
    if kind in simple:
        return simple[kind], {}
    if kind == "paid" and detail.startswith("paid: "):
        method = detail.removeprefix("paid: ")
        if method == "balance":
            return "paid_balance", {}
        asset, _, network = method.partition("/")
        return "paid_crypto", {"asset": asset, "network": network}
    if kind == "cancelled":
        return ("cancelled_unpaid" if detail == "unpaid_timeout" else "cancelled_by_customer"), {}
    if kind == "failed":
        return FAILURES.get(detail.split(":", 1)[0].strip(), "failed"), {}
    if kind == "support_answered":
        return _answer(detail)
    for form, code, names in FORMS.get(kind, ()):
        match = re.fullmatch(form, detail)
        if match:
            params = {n: int(v) if n in COUNTS else v for n, v in zip(names, match.groups(), strict=True)}
            if code == "support_":
                return f"support_{params['kind']}", {}
            return code, params
    return "note", {"text": detail}


def _answer(detail: str) -> tuple[str, dict]:
    """Support's old confirmation sentence: its note as an answer, or without one the confirmation's terms."""
    match = CONFIRMED_ANSWER.match(detail)
    if match is None:
        return "support_answered", {"text": detail}
    days, price, due_by, note = match.groups()
    if note:
        return "support_answered", {"text": note}
    return "extension_confirmed", {"days": int(days), "price_usd": price, "due_by": due_by}


def upgrade() -> None:
    with op.batch_alter_table("order_timeline") as batch_op:
        batch_op.add_column(sa.Column("code", sa.String(length=40), nullable=False, server_default="note"))
        batch_op.add_column(sa.Column("params", sa.JSON(), nullable=False, server_default="{}"))
    bind = op.get_bind()
    table = sa.table(
        "order_timeline",
        sa.column("id", sa.Integer),
        sa.column("kind", sa.String),
        sa.column("detail", sa.String),
        sa.column("code", sa.String),
        sa.column("params", sa.JSON),
    )
    last = 0
    while True:
        rows = bind.execute(
            sa.select(table.c.id, table.c.kind, table.c.detail).where(table.c.id > last).order_by(table.c.id).limit(BATCH)
        ).all()
        if not rows:
            break
        changes = [dict(zip(("code", "params"), said(row.kind, row.detail or ""), strict=True)) for row in rows]
        bind.execute(
            table.update().where(table.c.id == sa.bindparam("row_id")),
            [{"row_id": row.id, **change} for row, change in zip(rows, changes, strict=True)],
        )
        last = rows[-1].id
    with op.batch_alter_table("order_timeline") as batch_op:
        batch_op.alter_column("code", server_default=None)
        batch_op.alter_column("params", server_default=None)
        batch_op.drop_column("detail")


def downgrade() -> None:
    with op.batch_alter_table("order_timeline") as batch_op:
        batch_op.add_column(sa.Column("detail", sa.String(), nullable=False, server_default=""))
    # The sentences are not written back: an entry migrated down reads as an empty detail.
    with op.batch_alter_table("order_timeline") as batch_op:
        batch_op.drop_column("params")
        batch_op.drop_column("code")
