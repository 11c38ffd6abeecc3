"""Which bodies the unstorable-text guard reads as JSON: exactly those FastAPI parses as JSON."""

import pytest

from kernodeck_gateway.text_guard import is_json


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/JSON",
        "APPLICATION/Json; charset=UTF-8",
        "application/problem+json",
        "application/merge-patch+JSON",
        " application/json ",
    ],
)
def test_json_media_types_in_any_case_are_read(content_type):
    assert is_json(content_type)


@pytest.mark.parametrize(
    "content_type", ["", "text/json", "application/jsonx", "application/json-seq", "multipart/form-data", "json"]
)
def test_other_media_types_are_not(content_type):
    assert not is_json(content_type)
