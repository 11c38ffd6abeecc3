import json
import logging

import pytest

from kernodeck_kit.logs import JsonFormatter

pytestmark = pytest.mark.unit


def render(extra: dict) -> dict:
    record = logging.LogRecord("t", logging.INFO, __file__, 1, "login attempt", (), None)
    record.__dict__.update(extra)
    return json.loads(JsonFormatter("accounts").format(record))


def test_secret_fields_are_redacted_at_any_depth():
    entry = render({"password": "hunter2hunter2hunter2", "request": {"Authorization": "Bearer abc", "path": "/me"}})
    assert entry["password"] == "[redacted]"
    assert entry["request"] == {"Authorization": "[redacted]", "path": "/me"}
    assert "hunter2" not in json.dumps(entry)


def test_ordinary_fields_pass_through_as_json():
    entry = render({"order_id": "o-1", "lots": 2})
    assert (entry["service"], entry["msg"], entry["order_id"], entry["lots"]) == ("accounts", "login attempt", "o-1", 2)
