from datetime import datetime

from fastapi import APIRouter, Request, Response

from kernodeck_gateway.auth import CSRF_COOKIE, CurrentCaller, client_address, csrf_token, session_cookie_name
from kernodeck_gateway.clients import AccountsService
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.responses import Account, Session
from kernodeck_gateway.schemas import Credentials, NewAccount, present_account

router = APIRouter(prefix="/api/v1", tags=["accounts"])


def password_timeout(request: Request) -> float:
    """Registration and login may wait their turn for a password hash in accounts."""
    return request.app.state.settings.password_rpc_timeout_s


@router.post("/accounts", status_code=201, responses=refusals(409, 429))
async def register(body: NewAccount, request: Request, accounts: AccountsService) -> Account:
    account = await accounts.using(timeout=password_timeout(request)).register(
        first_name=body.first_name,
        last_name=body.last_name,
        email=body.email,
        password=body.password,
        client_address=client_address(request),
    )
    return present_account(account)


@router.post("/sessions", status_code=201, responses=refusals(401, 429))
async def log_in(body: Credentials, request: Request, response: Response, accounts: AccountsService) -> Session:
    session = await accounts.using(timeout=password_timeout(request)).login(
        email=body.email, password=body.password, client_address=client_address(request)
    )
    secure = request.app.state.settings.cookie_secure
    max_age = int((datetime.fromisoformat(session["expires_at"]) - datetime.now().astimezone()).total_seconds())
    cookie = {"max_age": max_age, "secure": secure, "samesite": "lax", "path": "/"}
    response.set_cookie(session_cookie_name(secure), session["token"], httponly=True, **cookie)
    response.set_cookie(CSRF_COOKIE, csrf_token(session["token"]), httponly=False, **cookie)
    return {
        "token": session["token"],
        "expires_at": session["expires_at"],
        "account": present_account(session["account"]),
    }


@router.delete("/sessions/current", status_code=204)
async def log_out(caller: CurrentCaller, request: Request, accounts: AccountsService) -> Response:
    await accounts.logout(token=caller.token)
    secure = request.app.state.settings.cookie_secure
    response = Response(status_code=204)
    response.delete_cookie(session_cookie_name(secure), path="/", secure=secure, httponly=True, samesite="lax")
    response.delete_cookie(CSRF_COOKIE, path="/", secure=secure, samesite="lax")
    return response


@router.get("/me")
async def me(caller: CurrentCaller) -> Account:
    return present_account(caller.account)
