"""Server values read one way: numbers, text, and booleans in every spelling the servers
use (MySQL ON/OFF and Yes/No, PostgreSQL t/f, PgBouncer yes/no, 1/0 from any of them)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dbgauge.toolkit.db.values import flag, is_on, number, numbers, text


@pytest.mark.parametrize(("value", "expected"), [
    (True, True), (False, False), (1, True), (0, False), (Decimal("1"), True), (1.0, True),
    ("ON", True), ("OFF", False), ("on", True), (" off ", False), ("Yes", True), ("NO", False),
    ("t", True), ("f", False), ("true", True), ("FALSE", False), ("1", True), ("0", False),
    (b"ON", True), (b"0", False),
    (None, None), ("", None), ("Connecting", None), ("2", None), (2, None), ("maybe", None),
    (float("nan"), None),
])
def test_flag_reads_every_server_spelling(value: object, expected: bool | None) -> None:
    assert flag(value) is expected
    assert is_on(value) is (expected is True)


def test_numbers_and_text() -> None:
    assert number("12.5") == 12.5 and number(b"3") == 3.0 and number("ON") is None
    assert number(None) is None and text(None) == "" and text(b"x") == "x"
    row = {"a": "1", "b": None, "c": "text", "d": Decimal("2.5")}
    assert numbers(row, ("a", "b", "c", "d", "missing")) == {"a": 1.0, "d": 2.5}
