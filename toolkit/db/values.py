"""Server values as Python values: what a driver hands back (str, bytes, Decimal, bool,
NULL) read the same way by collectors, checks and the sandbox."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# How servers spell a boolean: MySQL variables ON/OFF (1/0 through @@), replica threads and
# performance_schema setup columns Yes/No, PostgreSQL t/f, on/off and true/false, PgBouncer
# yes/no and 1/0.
_TRUE = frozenset({"on", "yes", "true", "t", "1"})
_FALSE = frozenset({"off", "no", "false", "f", "0"})


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


def flag(value: object) -> bool | None:
    """A server boolean as bool: a driver's bool, 1/0, or ON/OFF, YES/NO, TRUE/FALSE, T/F in
    any case; None for NULL and anything else (a third state such as 'Connecting')."""
    if isinstance(value, bool):
        return value
    word = text(value).strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    n = number(value)
    return None if n is None or n not in (0.0, 1.0) else n == 1.0


def is_on(value: object) -> bool:
    """True only for a server boolean that is on (NULL and anything else are not)."""
    return flag(value) is True


def numbers(row: Mapping[str, object], columns: Iterable[str]) -> dict[str, float]:
    """The numeric values of `columns` in `row`, by column name; NULL and text left out."""
    return {column: value for column in columns
            if (value := number(row.get(column))) is not None}
