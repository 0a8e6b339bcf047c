"""What PgBouncer's file readers share: the located `Problem` and C-style lexing.

The ini, auth_file and HBA parsers each follow a different reader of PgBouncer's, but
they report garbage the same way (a `Problem` at a file and line, fatal or only logged)
and they lex with the same two primitives as the C code: `isspace` and a double-quoted
string in which `""` stands for one quote.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """Something PgBouncer would reject (fatal) or only log (not fatal), with its place.

    `unreadable`: dbgauge cannot validate past it (an include loop); the run stops there
    with one error instead of findings.
    """

    message: str
    source: str
    line: int
    fatal: bool = True
    unreadable: bool = False


def is_space(ch: str) -> bool:
    """C isspace() in the "C" locale."""
    return ch in " \t\n\r\v\f"


def read_quoted(line: str, i: int) -> tuple[str | None, int]:
    """Read "..." with "" escapes starting at line[i] == '"': (text or None, next index)."""
    out, i = [], i + 1
    while i < len(line):
        if line[i] == '"':
            if i + 1 < len(line) and line[i + 1] == '"':
                out.append('"')
                i += 2
                continue
            return "".join(out), i + 1
        out.append(line[i])
        i += 1
    return None, i
