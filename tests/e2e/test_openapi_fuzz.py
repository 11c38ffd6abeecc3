"""Every operation of the gateway's OpenAPI document, fed generated input (schemathesis) on a running stack,
as a customer and as an operator, each by the session cookie and its CSRF header: no 5xx, no response
outside its documented statuses, media types and schemas.

The run has a stack of its own: an operator's generated writes (payment methods switched off, nodes
added or drained) must not reach the other end-to-end tests. Examples are bounded per operation and the
seed is fixed, so a failure found once is found again.
"""

from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from infra.local.isolation import running_stack
from kernodeck_gateway.auth import CSRF_COOKIE, CSRF_HEADER, session_cookie_name
from kernodeck_gateway.internal import OPENAPI_PATH
from tests.e2e.conftest import new_customer, post_when_let_in, watchers_reporting
from tests.e2e.test_payments_http import new_operator

EXAMPLES_PER_OPERATION = 8
SEED = 14
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# Logging out ends the session the rest of the run calls with: each of its examples logs out a session
# of its own, opened for it, so it is fuzzed as every other operation is and the others keep theirs.
LOGOUT = ("DELETE", "/api/v1/sessions/current")
ROLE_CHECK = {"customer": "/api/v1/me", "operator": "/api/v1/admin/nodes"}


@pytest.fixture(scope="module")
def fuzz_stack(tmp_path_factory):
    with (
        running_stack(Path(tmp_path_factory.mktemp("fuzz-stack-logs")), "kd_fuzz") as stack,
        watchers_reporting(stack.env["AMQP_URI"]),
    ):
        yield stack


@pytest.fixture(scope="module")
def served_document(fuzz_stack):
    return schemathesis.openapi.from_url(fuzz_stack.url + OPENAPI_PATH)


@pytest.fixture(scope="module")
def people(fuzz_stack):
    """A customer and an operator (each with an SSH key on the account), by email and password."""
    with httpx.Client(base_url=fuzz_stack.url, timeout=10) as client:
        return {"customer": new_customer(client), "operator": new_operator(fuzz_stack, client)}


def cookie_session(url: str, person: dict) -> dict:
    """Headers that carry a fresh session of `person` as a browser does: its cookie and its CSRF header."""
    with httpx.Client(base_url=url, timeout=10) as client:
        response = post_when_let_in(
            client, "/api/v1/sessions", {"email": person["email"], "password": person["password"]}
        )
        assert response.status_code == 201, response.text
        token, csrf = response.cookies[session_cookie_name(False)], response.cookies[CSRF_COOKIE]
    return {"Cookie": f"{session_cookie_name(False)}={token}; {CSRF_COOKIE}={csrf}", CSRF_HEADER: csrf}


@pytest.fixture(scope="module")
def sessions(fuzz_stack, people):
    return {role: cookie_session(fuzz_stack.url, person) for role, person in people.items()}


def fuzz(document, url: str, person: dict, headers: dict, mode: GenerationMode) -> list[str]:
    """Each operation's examples in `mode`; what each operation that broke its document answered, shrunk."""
    broken = []
    for result in document.get_all_operations():
        operation = result.ok()

        @seed(SEED)
        @FUZZING
        @given(case=operation.as_strategy(generation_mode=mode))
        def keeps_to_its_document(case) -> None:
            call = headers
            if (case.method.upper(), case.path) == LOGOUT:
                call = cookie_session(url, person)
            case.call_and_validate(base_url=url, headers=call, checks=CHECKS, timeout=10)

        try:
            keeps_to_its_document()
        except Unsatisfiable:
            # Invalid input needs an input that can be invalid: an operation with no parameters and no body, or
            # only path parameters that take any string (an id), has none; its valid examples ran above.
            if mode is not GenerationMode.NEGATIVE:
                raise
        except Exception as failure:
            broken.append(f"{operation.label} ({mode.value}):\n{failure}")
    return broken


FUZZING = settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["valid", "invalid"])
@pytest.mark.parametrize("role", ["customer", "operator"])
def test_every_operation_keeps_to_its_document(fuzz_stack, served_document, people, sessions, role, mode):
    broken = fuzz(served_document, fuzz_stack.url, people[role], sessions[role], mode)
    assert not broken, "\n\n".join(broken)
    # The run was made as `role` to its end, not as a caller logged out or refused on the way (401s and
    # 403s are documented answers, so a lost session would otherwise pass unnoticed).
    still = httpx.get(fuzz_stack.url + ROLE_CHECK[role], headers=sessions[role], timeout=10)
    assert still.status_code == 200, still.text
