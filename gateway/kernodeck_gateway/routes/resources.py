"""Customer resources of the pilot guide, served as files: no login needed, versioned with the project."""

from fastapi import APIRouter, Response
from kernodeck_resources import bundle

from kernodeck_gateway.responses import Resource

PREFIX = "/api/v1/resources"
router = APIRouter(prefix=PREFIX, tags=["resources"])


def _download(content: bytes, media_type: str, filename: str) -> Response:
    headers = {"content-disposition": f'attachment; filename="{filename}"', "x-resource-version": bundle.version()}
    return Response(content, media_type=media_type, headers=headers)


@router.get("")
async def list_resources() -> list[Resource]:
    return bundle.index(PREFIX)


@router.get("/diagnostic.py", response_class=Response, responses={200: {"content": {"text/x-python": {}}}})
async def diagnostic() -> Response:
    """The readiness check provisioning runs on every node: run it with your program's interpreter."""
    return _download(bundle.diagnostic_script(), "text/x-python; charset=utf-8", "diagnostic.py")


@router.get("/pilot-project.zip", response_class=Response, responses={200: {"content": {"application/zip": {}}}})
async def pilot_project() -> Response:
    """The CPU mini-project with its resume test, unpacking into kernodeck-pilot/."""
    return _download(bundle.pilot_zip(), "application/zip", "kernodeck-pilot.zip")
