"""The OpenAPI document: every error a route can answer, as problem+json.

Routes declare the refusals of their own rules (`refusals(404, 409)`); the ones that follow from how a
route is built are added here: a body (400 unreadable JSON, 413 too large, 422), parameters (422), a
session (401; 403 for a cookie write without its CSRF header, or a customer on an operator route), and
the services behind it (503).
"""

from collections.abc import Iterable

from fastapi import APIRouter, FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute

from kernodeck_gateway.auth import SAFE_METHODS, current_caller, current_operator, rpc_client
from kernodeck_gateway.problems import TITLES
from kernodeck_gateway.responses import Problem

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}


def refusals(*statuses: int) -> dict:
    """`responses=` for the statuses a route's own rules answer with."""
    return {status: {"description": TITLES[status]} for status in statuses}


def _calls(dependant: Dependant) -> set:
    found = {dependant.call}
    for sub in dependant.dependencies:
        found |= _calls(sub)
    return found


def implied_statuses(route: APIRoute, method: str) -> set[int]:
    calls, dependant = _calls(route.dependant), route.dependant
    statuses = set()
    if dependant.body_params:
        statuses |= {400, 413, 422}
    if dependant.path_params or dependant.query_params:
        statuses.add(422)
    if current_caller in calls:
        statuses.add(401)
        if method not in SAFE_METHODS:
            statuses.add(403)
    if current_operator in calls:
        statuses.add(403)
    if rpc_client in calls:
        statuses.add(503)
    return statuses


def build_document(app: FastAPI, routers: Iterable[APIRouter]) -> dict:
    document = get_openapi(title=app.title, version=app.version, routes=app.routes)
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    problem = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(problem.pop("$defs"), Problem=problem)
    for route in (route for router in routers for route in router.routes):
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        for method in route.methods:
            responses = document["paths"][route.path_format][method.lower()]["responses"]
            for status in implied_statuses(route, method) | {int(s) for s in responses if int(s) >= 400}:
                responses[str(status)] = {
                    "description": TITLES[status],
                    "content": {PROBLEM_MEDIA_TYPE: {"schema": PROBLEM_REF}},
                }
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return document


def install(app: FastAPI, routers: Iterable[APIRouter]) -> None:
    """Serve the document of these routers (included in the app as they are, without a further prefix)."""
    routers = tuple(routers)

    def openapi() -> dict:
        if app.openapi_schema is None:
            app.openapi_schema = build_document(app, routers)
        return app.openapi_schema

    app.openapi = openapi


def document() -> dict:
    """The gateway's document, which no setting changes (only where it is served)."""
    from kernodeck_gateway.app import create_app
    from kernodeck_gateway.settings import NO_PROXY, GatewaySettings

    return create_app(GatewaySettings(trusted_proxies=NO_PROXY)).openapi()


def main() -> None:
    """`python -m kernodeck_gateway.openapi`: print the document (the web client is generated from it)."""
    import json

    print(json.dumps(document(), indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
