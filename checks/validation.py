"""What the configuration validators share (pgbouncer.ini, InnoDB Cluster my.cnf)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dbgauge.toolkit.errors import ConfigError

# A setting's number never needs more digits than a 64-bit integer (20) plus slack; a
# longer one is hostile or garbage, and converting it costs time (Python refuses past
# 4300 digits with a ValueError) for a verdict everybody knows.
MAX_DIGITS = 40
_LONG_NUMBER = re.compile(rf"\s*[+-]?(?:0[xX][0-9a-fA-F]{{{MAX_DIGITS},}}"
                          rf"|[0-9]{{{MAX_DIGITS + 1},}})\s*[A-Za-z]*\s*")


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The closest known name, for 'unknown key' messages."""
    import difflib  # only when a key is unknown: most files load without it

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


def refuse_long_numbers(values: Iterable[tuple[str, str, str, int]]) -> None:
    """ConfigError at the first (what, value, source, line) whose value is a number longer
    than MAX_DIGITS: such a file is not validated at all (exit 2)."""
    for what, value, source, line in values:
        if len(value) > MAX_DIGITS and _LONG_NUMBER.fullmatch(value):
            digits = sum(ch.isalnum() for ch in value)
            raise ConfigError(f"{what} is a number of {digits} digits: no setting takes one "
                              f"this long (dbgauge reads at most {MAX_DIGITS}); fix the value",
                              source=source, line=line)
