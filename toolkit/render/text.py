"""Names and values as one line of a text report.

A table, schema or key value may hold a newline or another control character (MySQL and
PostgreSQL allow them in quoted identifiers): printed raw, it would split a report line in
two, and the second half would read as a line of its own. `one_line` shows such characters
as backslash sequences (`\\n`, `\\t`, `\\x1b`, `\\u2028`), as repr() does. A backslash is left
as it is: messages already hold repr()'d names ('a\\nb'), which doubling would garble; a name
that truly holds a backslash and an n reads the same in text -- JSON tells them apart. JSON
output needs none of this: it escapes by itself.
"""

from __future__ import annotations

import unicodedata

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    if unicodedata.category(char) in ("Cc", "Zl", "Zp", "Cf"):
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    return char


def one_line(text: str) -> str:
    """`text` with control, line- and paragraph-separator and format characters escaped:
    it cannot break a line, nor hide what it holds."""
    if text.isprintable():
        return text
    return "".join(_escaped(c) for c in text)
