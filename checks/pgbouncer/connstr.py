"""Pure parser of the connection strings in [databases], [users] and [peers].

PgBouncer reads `key=value key='quoted ''value'''` with its own `cstr_get_pair`, not
libpq's: no escapes but doubled quotes, no empty values. The first malformed pair stops
the parse; the pairs read so far and the error are both kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbgauge.checks.pgbouncer.tokens import is_space


@dataclass(frozen=True)
class ConnString:
    pairs: tuple[tuple[str, str], ...]
    error: str | None = None

    def get(self, key: str) -> str | None:
        found = None
        for k, v in self.pairs:
            if k == key:
                found = v
        return found


def parse_connstr(value: str) -> ConnString:
    """`key=value key='quoted ''value'''` as PgBouncer's cstr_get_pair reads it."""
    pairs: list[tuple[str, str]] = []
    i, n = 0, len(value)
    while True:
        while i < n and is_space(value[i]):
            i += 1
        if i >= n:
            return ConnString(tuple(pairs))
        start = i
        while i < n and value[i] not in "= ":
            i += 1
        key = value[start:i]
        while i < n and is_space(value[i]):
            i += 1
        if i >= n or value[i] != "=" or not key:
            return ConnString(tuple(pairs), f"expected key=value at {value[start:start + 20]!r}")
        i += 1
        while i < n and is_space(value[i]):
            i += 1
        if i < n and value[i] == "'":
            i += 1
            out = []
            while True:
                if i >= n:
                    return ConnString(tuple(pairs), f"unterminated quote in value of {key!r}")
                if value[i] == "'":
                    if i + 1 < n and value[i + 1] == "'":
                        out.append("'")
                        i += 2
                        continue
                    i += 1
                    break
                out.append(value[i])
                i += 1
            val = "".join(out)
        else:
            vstart = i
            while i < n and value[i] != " ":
                i += 1
            val = value[vstart:i]
        if not val:
            return ConnString(tuple(pairs), f"empty value for {key!r}")
        pairs.append((key, val))
