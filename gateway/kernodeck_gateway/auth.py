"""Who is calling: a bearer token or the session cookie, with CSRF on cookie writes."""

import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from kernodeck_gateway.client_address import client_address as address_of_client
from kernodeck_gateway.problems import Problem
from kernodeck_gateway.rpc import RpcClient

SESSION_COOKIE = "kd_session"
CSRF_COOKIE = "kd_csrf"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


async def rpc_client(request: Request) -> RpcClient:
    return request.app.state.rpc


Rpc = Annotated[RpcClient, Depends(rpc_client)]


@dataclass(frozen=True)
class Caller:
    account: dict
    token: str

    @property
    def account_id(self) -> str:
        return self.account["id"]


def session_token(request: Request) -> tuple[str | None, bool]:
    """The token and whether it came from the cookie."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip(), False
    return request.cookies.get(SESSION_COOKIE), True


def check_csrf(request: Request) -> None:
    # Double-submit: a cross-site page can make the browser send the cookie,
    # but cannot read kd_csrf to copy it into the header.
    expected = request.cookies.get(CSRF_COOKIE, "")
    given = request.headers.get(CSRF_HEADER, "")
    if not expected or not hmac.compare_digest(expected, given):
        raise Problem(403, "csrf_failed", f"cookie-authenticated writes need the {CSRF_HEADER} header")


async def current_caller(request: Request, rpc: Rpc) -> Caller:
    token, via_cookie = session_token(request)
    if not token:
        raise Problem(401, "unauthenticated", "log in first")
    if via_cookie and request.method not in SAFE_METHODS:
        check_csrf(request)
    account = await rpc.call("accounts", "resolve_session", token)
    return Caller(account=account, token=token)


CurrentCaller = Annotated[Caller, Depends(current_caller)]


async def current_operator(caller: CurrentCaller) -> Caller:
    if not caller.account["is_operator"]:
        raise Problem(403, "forbidden", "this is for operators only")
    return caller


CurrentOperator = Annotated[Caller, Depends(current_operator)]


def client_address(request: Request) -> str:
    peer = request.client.host if request.client else None
    forwarded_for = request.headers.getlist("x-forwarded-for")
    return address_of_client(peer, forwarded_for, request.app.state.settings.trusted_proxies)
