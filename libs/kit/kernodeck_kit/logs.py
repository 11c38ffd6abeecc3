"""Structured JSON logs that never carry secrets.

Fields passed with `extra={...}` are emitted as JSON keys; any key that names
a secret is replaced by "[redacted]" wherever it appears, nested or not.
"""

import json
import logging
import sys
from datetime import UTC, datetime

SECRET_MARKERS = ("password", "token", "secret", "authorization", "cookie", "xpub", "api_key")
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


def redact(value):
    if isinstance(value, dict):
        return {
            k: "[redacted]" if any(m in str(k).lower() for m in SECRET_MARKERS) else redact(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str):
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "service": self.service,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        extra = {k: v for k, v in record.__dict__.items() if k not in _STANDARD}
        entry.update(redact(extra))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def dict_config(service: str, level: str = "INFO") -> dict:
    """The same JSON logs as a logging.config dict (what uvicorn takes)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter, "service": service}},
        "handlers": {"stdout": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stdout"}},
        "root": {"handlers": ["stdout"], "level": level},
        "loggers": {name: {"handlers": [], "propagate": True} for name in ("uvicorn", "uvicorn.error")},
    }


def configure(service: str, level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonFormatter(service))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # nameko logs every RPC payload at DEBUG; those can hold passwords.
    logging.getLogger("nameko").setLevel(max(logging.INFO, logging.getLevelName(level)))
