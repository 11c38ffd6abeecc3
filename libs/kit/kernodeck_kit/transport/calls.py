"""ServiceErrors raised by another service arrive here with their code and field errors.

nameko rebuilds a remote exception as a RemoteError that keeps only its text,
unless the exception's path is in `nameko.exceptions.registry`, which maps it
to any callable taking the serialised args. Registering ServiceError's path
to a RemoteError subclass keeps every `except RemoteError` in the process
working while carrying the ServiceError itself.
"""

import json
import sys
from collections.abc import Callable
from typing import Any

import eventlet
from nameko.exceptions import RemoteError, UnknownService, get_module_path, registry

from kernodeck_contracts.errors import ErrorCode, ServiceError


class RemoteServiceError(RemoteError):
    def __init__(self, code: str, detail: str, errors: list[dict], retry_after: str | None = None):
        # nameko sends as text every argument that is not a string, a list or a dict: None too.
        seconds = None if retry_after in (None, "None") else int(retry_after)
        self.service_error = ServiceError(code, detail, errors, seconds)
        self.code, self.detail, self.errors, self.retry_after = code, detail, errors, seconds
        super().__init__(ServiceError.__name__, str(self.service_error))


registry[get_module_path(ServiceError)] = RemoteServiceError


def call_service(method, *args, timeout: float = 5.0, **kwargs):
    """Call another service's RPC method as if it were local.

    Its ServiceError is raised again as is; a service that is missing or does
    not answer within `timeout` becomes SERVICE_UNAVAILABLE, so no worker
    waits forever on a stopped peer (nameko 2 proxies have no timeout).
    """
    try:
        with eventlet.Timeout(timeout):
            return method(*args, **kwargs)
    except RemoteServiceError as remote:
        raise remote.service_error from None
    except (UnknownService, eventlet.Timeout):
        raise ServiceError(
            ErrorCode.SERVICE_UNAVAILABLE, f"{method.service_name} is not answering, try again"
        ) from None


def print_answer(call: Callable[[], Any]) -> int:
    """An operator command's call (a typed client's, on its own timeout): the answer printed as JSON (exit status
    0), or the service's refusal with its code and field errors on stderr (exit status 1)."""
    try:
        result = call()
    except ServiceError as refused:
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in refused.errors) or refused.detail
        print(f"refused ({refused.code}): {detail}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0
