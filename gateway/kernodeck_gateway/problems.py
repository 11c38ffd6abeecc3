"""problem+json (RFC 9457) responses with Kernodeck's stable codes."""

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kernodeck_contracts.errors import HTTP_STATUS, ErrorCode
from kernodeck_gateway.rpc import RemoteError, RpcTimeout, ServiceUnavailable

SERVICE_ERROR_PATH = "kernodeck_contracts.errors.ServiceError"
TITLES = {
    400: "Bad request",
    401: "Not logged in",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    422: "Invalid input",
    429: "Too many requests",
    500: "Internal error",
    503: "Service unavailable",
}


class Problem(Exception):
    def __init__(self, status: int, code: str, detail: str, errors=None, headers=None):
        self.status, self.code, self.detail = status, code, detail
        self.errors = errors or []
        self.headers = headers or {}


def problem_response(problem: Problem) -> JSONResponse:
    body = {
        "type": f"urn:kernodeck:problem:{problem.code}",
        "title": TITLES.get(problem.status, "Error"),
        "status": problem.status,
        "detail": problem.detail,
        "code": problem.code,
        "errors": problem.errors,
    }
    return JSONResponse(
        body, status_code=problem.status, headers=problem.headers, media_type="application/problem+json"
    )


def from_remote(error: RemoteError) -> Problem:
    """A service's ServiceError keeps its code; anything else is hidden as a 500."""
    if error.exc_path == SERVICE_ERROR_PATH and len(error.exc_args) >= 3:
        # nameko turns arguments that are not str, list or dict into strings.
        code, detail, errors, *rest = error.exc_args
        retry_after = str(rest[0]) if rest and str(rest[0]).isdigit() else None
        headers = {"Retry-After": retry_after} if retry_after else {}
        status = HTTP_STATUS.get(ErrorCode(code), 400)
        return Problem(status, code, detail, errors, headers)
    return Problem(500, "internal_error", "the request could not be completed")


def _field(loc: tuple) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    return ".".join(parts) or "body"


async def on_problem(_request: Request, exc: Problem):
    return problem_response(exc)


async def on_remote_error(_request: Request, exc: RemoteError):
    return problem_response(from_remote(exc))


async def on_unavailable(_request: Request, exc: Exception):
    return problem_response(Problem(503, "service_unavailable", "a service is not answering; try again shortly"))


async def on_validation_error(_request: Request, exc: RequestValidationError):
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return problem_response(Problem(400, "validation_error", "the request body is not valid JSON"))
    fields = [{"field": _field(e.get("loc", ())), "message": e.get("msg", "invalid")} for e in errors]
    return problem_response(Problem(422, "validation_error", "the request is not valid", fields))


async def on_http_error(_request: Request, exc: StarletteHTTPException):
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return problem_response(Problem(exc.status_code, code, str(exc.detail), headers=getattr(exc, "headers", None)))


HANDLERS = {
    Problem: on_problem,
    RemoteError: on_remote_error,
    RpcTimeout: on_unavailable,
    ServiceUnavailable: on_unavailable,
    RequestValidationError: on_validation_error,
    StarletteHTTPException: on_http_error,
}
