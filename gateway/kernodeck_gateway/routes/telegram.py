from typing import Literal

from fastapi import APIRouter, Request, Response

from kernodeck_contracts.languages import LANGUAGES
from kernodeck_gateway.auth import CurrentCaller
from kernodeck_gateway.clients import AccountsService
from kernodeck_gateway.languages import preferred_language
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.responses import TelegramLink
from kernodeck_gateway.schemas import Body

router = APIRouter(prefix="/api/v1/me/telegram-link", tags=["telegram"])


class TelegramLinkRequest(Body):
    # The bot greets the chat in this language; without it, in the browser's (Accept-Language).
    language: Literal[LANGUAGES] | None = None


@router.post("", responses=refusals(429))
async def link_telegram(
    caller: CurrentCaller, request: Request, accounts: AccountsService, body: TelegramLinkRequest | None = None
) -> TelegramLink:
    """A one-time deep link to the bot (`https://t.me/<bot>?start=<token>`) that binds the chat to this account."""
    language = (body.language if body else None) or preferred_language(request.headers.get("accept-language"))
    link = await accounts.create_telegram_link(account_id=caller.account_id, language=language)
    return {"url": link["url"]}


@router.delete("", status_code=204)
async def unlink_telegram(caller: CurrentCaller, accounts: AccountsService) -> Response:
    """Every chat linked to this account stops receiving notifications."""
    await accounts.unlink_telegram(account_id=caller.account_id)
    return Response(status_code=204)
