import io

import segno
from fastapi import APIRouter, Response

from kernodeck_gateway.auth import CurrentCaller
from kernodeck_gateway.clients import PaymentsService
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.outcomes import attach_outcomes
from kernodeck_gateway.responses import Payment, PaymentMethod
from kernodeck_gateway.schemas import present_method, present_payment

router = APIRouter(prefix="/api/v1", tags=["payments"])


@router.get("/payment-methods")
async def list_methods(payments: PaymentsService) -> list[PaymentMethod]:
    return [present_method(m) for m in await payments.list_methods()]


@router.get("/payments/{payment_id}", responses=refusals(404))
async def get_payment(payment_id: str, caller: CurrentCaller, payments: PaymentsService) -> Payment:
    payment = await payments.get_payment(account_id=caller.account_id, payment_id=payment_id)
    await attach_outcomes(payments, caller.account_id, [payment])
    return present_payment(payment)


@router.post("/payments/{payment_id}/reported", responses=refusals(404, 409))
async def report_payment(payment_id: str, caller: CurrentCaller, payments: PaymentsService) -> Payment:
    payment = await payments.report_payment(account_id=caller.account_id, payment_id=payment_id)
    await attach_outcomes(payments, caller.account_id, [payment])
    return present_payment(payment)


@router.get(
    "/payments/{payment_id}/qr.svg",
    response_class=Response,
    responses={200: {"content": {"image/svg+xml": {}}}, **refusals(404)},
)
async def payment_qr_code(payment_id: str, caller: CurrentCaller, payments: PaymentsService) -> Response:
    payment = await payments.get_payment(account_id=caller.account_id, payment_id=payment_id)
    svg = io.BytesIO()
    # make_qr: a plain QR code; segno.make may pick a Micro QR, which wallets do not scan.
    segno.make_qr(payment["uri"], error="m").save(svg, kind="svg", scale=4)
    return Response(svg.getvalue(), media_type="image/svg+xml")
