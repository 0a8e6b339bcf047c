"""Durations as operators write them (5, 2.5, "500ms", "10s", "1m"), for the YAML config
and the command line alike; kept apart from toolkit.config so the CLI can parse an option
without loading pydantic."""

from __future__ import annotations

import re
from typing import Any

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(value: Any) -> Any:
    """Accept 5, 2.5, "500ms", "10s", "1m": always seconds as a float."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 5, 2.5s or 500ms")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        m = _DURATION.match(value)
        if m:
            return float(m.group(1)) * _UNITS[m.group(2)]
    raise ValueError(f"{value!r} is not a duration: use seconds (5, 2.5) or 500ms, 10s, 1m")
