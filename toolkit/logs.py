"""Logging as text or JSON lines, with every record scrubbed of secrets."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from dbgauge.toolkit.redact import redact

_STD_ATTRS = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message"}


class _TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        extra = {k: v for k, v in record.__dict__.items() if k not in _STD_ATTRS}
        line = super().format(record)
        if extra:
            line += " " + " ".join(f"{k}={v}" for k, v in sorted(extra.items()))
        return redact(line)


class _JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STD_ATTRS:
                out[key] = value if isinstance(value, int | float | bool) else str(value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(out, default=str))


def setup_logging(fmt: str = "text", level: str = "info") -> None:
    """Configure the root logger once (again on SIGHUP) to stderr."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(_JSONFormatter())
    else:
        handler.setFormatter(_TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
