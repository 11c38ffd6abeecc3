"""Who is calling: a bearer token or the session cookie, with CSRF on cookie writes."""

import base64
import hashlib
import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from kernodeck_contracts.clients import AccountsClient
from kernodeck_gateway.client_address import client_address as address_of_client
from kernodeck_gateway.problems import Problem
from kernodeck_gateway.rpc import RpcClient

SESSION_COOKIE = "kd_session"
# Secure, the session cookie carries the __Host- prefix: the browser then keeps it only if it was set over
# HTTPS, for the whole host and no other, so no sibling domain can plant or overwrite it.
SECURE_SESSION_COOKIE = f"__Host-{SESSION_COOKIE}"
CSRF_COOKIE = "kd_csrf"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


def session_cookie_name(secure: bool) -> str:
    return SECURE_SESSION_COOKIE if secure else SESSION_COOKIE


def csrf_token(session_token: str) -> str:
    """The CSRF token of a session: derived from its token, which only the session's own (HttpOnly)
    cookie carries, so a token planted or read elsewhere is worth nothing for another session."""
    digest = hmac.new(session_token.encode(), b"kernodeck csrf v1", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


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
    return request.cookies.get(session_cookie_name(request.app.state.settings.cookie_secure)), True


def check_csrf(request: Request, token: str) -> None:
    # A cross-site page can make the browser send the session cookie, but cannot read the session's
    # CSRF token (the kd_csrf cookie, readable by this site's pages only) to copy it into the header.
    given = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(csrf_token(token).encode(), given.encode(errors="replace")):
        raise Problem(403, "csrf_failed", f"cookie-authenticated writes need the session's {CSRF_HEADER} header")


async def current_caller(request: Request, rpc: Rpc) -> Caller:
    token, via_cookie = session_token(request)
    if not token:
        raise Problem(401, "unauthenticated", "log in first")
    if via_cookie and request.method not in SAFE_METHODS:
        check_csrf(request, token)
    account = await AccountsClient(rpc.call).resolve_session(token=token)
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
