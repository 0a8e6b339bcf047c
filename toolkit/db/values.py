"""Server values as Python values: what a driver hands back (str, bytes, Decimal, NULL)
read the same way by collectors, checks and the sandbox."""

from __future__ import annotations


def number(value: object) -> float | None:
    """A server value as float, or None when it is NULL or not numeric."""
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def text(value: object) -> str:
    """A server value as str ('' for NULL); bytes are decoded."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
