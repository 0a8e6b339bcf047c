"""Keep secrets out of logs, errors, plugin lines, JSON, pages and HTTP responses.

The one home for redaction. Three layers:

- every password dbgauge has read is registered (`register_secret`) and removed verbatim,
  in the spellings it takes in text (percent-encoded, JSON or Python-escaped, libpq-quoted);
- `redact(text)` also masks, by pattern, what looks like a password in any text: the
  userinfo of a URI or a Go DSN (`mysql://u:PW@h`, `mysql:/u:PW@h`, `u:PW@tcp(h:3306)/`),
  `password=` (libpq, a URI query, `--password=`) and pt's `p=`;
- `redact_dsn(dsn)` shows a whole DSN, of whichever form or typo, with every span that is
  or may be its password masked (`password_spans`): a DSN that does not parse is shown
  this way, never verbatim, and its parser's message goes through `redact_fragments`.

Masking a little too much is fine; showing a password is not.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from typing import TypeVar, cast
from urllib.parse import quote, quote_plus, unquote

MASK = "***"
_T = TypeVar("_T")

# A run of text that may hold a URI's or a Go DSN's userinfo, masked by `_mask_run` in one
# pass (a regex looking for the '@' from every ':' takes quadratic time on a long run).
_RUN = re.compile(r"[^\s\"]+")
_RUN_SCHEME = re.compile(r"(?:^|(?<=[=?&'(<\[,;]))(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):/+")
# password=... (libpq, a URI's query, --password=): a quoted value with its escapes.
_KV_PASSWORD = re.compile(
    r"(?P<prefix>(?<![A-Za-z0-9_])(?:password|passwd|pwd)\s*=\s*)"
    r"(?P<pw>'(?:[^'\\]|\\.)*'?|[^\s\"]+?(?='?(?:[\s\"]|$)))", re.IGNORECASE)
# pt's DSN part p=PASSWORD (P is the port: case matters).
_PT_PASSWORD = re.compile(r"(?P<prefix>(?<![^\s,'\"(=&?])p=)(?P<pw>[^,\s'\"]*)")

_lock = threading.Lock()
_secrets: set[str] = set()
_ordered: list[str] = []  # the registered spellings, longest first


def spellings(secret: str) -> set[str]:
    """`secret` as text may carry it: itself, percent-encoded, JSON- and repr-escaped,
    quoted for libpq (a backslash before ' and \\)."""
    libpq = secret.replace("\\", "\\\\").replace("'", "\\'")
    return {secret, quote(secret, safe=""), quote_plus(secret, safe=""),
            json.dumps(secret)[1:-1], repr(secret)[1:-1], libpq}


# Spellings remembered at most: the config's and the command line's passwords come first;
# past this, a flood of distinct passwords (DSNs handed to /probe) can neither grow memory
# nor slow every later redaction. The patterns still mask a DSN's password in any form.
MAX_SPELLINGS = 6_000


def register_secret(secret: str | None) -> None:
    """Remember a secret so `redact` removes it (in every spelling) wherever it appears."""
    global _ordered
    if not secret or len(secret) < 3:
        return
    with _lock:
        new = {s for s in spellings(secret) if len(s) >= 3} - _secrets
        if new and len(_secrets) + len(new) <= MAX_SPELLINGS:
            _secrets.update(new)
            _ordered = sorted(_secrets, key=len, reverse=True)


def redact(text: str) -> str:
    """`text` with registered secrets, URI/Go userinfo passwords, password=... and pt
    p=... values masked."""
    for secret in _ordered:  # a snapshot: registration replaces the list, never edits it
        if secret in text:
            text = text.replace(secret, MASK)
    text = _RUN.sub(_mask_run, text)
    text = _KV_PASSWORD.sub(lambda m: f"{m.group('prefix')}{MASK}", text)
    return _PT_PASSWORD.sub(lambda m: f"{m.group('prefix')}{MASK}", text)


def _mask_run(m: re.Match[str]) -> str:
    """A run of non-blank text with the password of a userinfo in it masked: from its
    first ':' (after a DSN scheme, as in `target=mysql://`) to its last '@'."""
    run = m.group(0)
    at = run.rfind("@")
    if at < 0:
        return run
    scheme = _RUN_SCHEME.search(run, 0, at)
    known = scheme is not None and scheme.group("scheme").lower() in _URI_SCHEMES
    colon = run.find(":", scheme.end() if known and scheme is not None else 0, at)
    return run if colon < 0 else run[:colon + 1] + MASK + run[at:]


def redact_data(value: _T) -> _T:
    """A JSON-able document with every string in it redacted (before it is dumped: masking
    dumped text could cut an escape in two)."""
    if isinstance(value, str):
        return cast(_T, redact(value))
    if isinstance(value, dict):
        return cast(_T, {k: redact_data(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return cast(_T, [redact_data(v) for v in value])
    return value


# ----------------------------------------------------------------- a whole DSN

_URI_SCHEMES = ("mysql", "mariadb", "postgresql", "postgres", "http", "https")
_SCHEME = re.compile(r"\s*(?:[A-Za-z0-9][A-Za-z0-9_.:-]*=)?(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):/+")
_FIRST_KEY = re.compile(r"\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>\S*)")
_KEY_AHEAD = re.compile(r"\s+[a-z_]+\s*=")  # libpq's keywords are lower case
_PASSWORD_KEY = re.compile(r"(?:^|(?<=[\s&?;,]))(?:password|passwd|pwd)\s*=\s*", re.IGNORECASE)
_PARAM_AHEAD = re.compile(r"&[a-z_]+=")
_PT_KEY = re.compile(r"(?:^|(?<=,))\s*p=")
_PT_NEXT = re.compile(r",\s*[A-Za-z]=")


def _is_keyword_form(dsn: str) -> bool:
    """libpq key=value or pt h=,P=: a first `key=` whose value is not a URI or a Go DSN
    (NAME=DSN)."""
    m = _FIRST_KEY.match(dsn)
    return m is not None and "://" not in dsn and \
        not re.match(r"[^\s=@'\"]*:", m.group("value"))


def _quoted_end(dsn: str, start: int) -> int:
    """The end of a libpq-quoted value opening at `start` (the whole rest if unclosed)."""
    i = start + 1
    while i < len(dsn):
        if dsn[i] == "\\":
            i += 2
            continue
        if dsn[i] == "'":
            return i + 1
        i += 1
    return len(dsn)


def _keyword_spans(dsn: str, keyword_form: bool) -> Iterable[tuple[int, int]]:
    """The values of password= (libpq, a URI's query) and of pt's p=."""
    for m in _PASSWORD_KEY.finditer(dsn):
        start = m.end()
        if keyword_form:  # up to the next `key=`: a blank or a stray quote stays inside
            end = _quoted_end(dsn, start) if dsn[start:start + 1] == "'" else start
            ahead = _KEY_AHEAD.search(dsn, end)
            yield start, ahead.start() if ahead else len(dsn.rstrip())
        else:  # a URI's query (quotes mean nothing there): up to the next parameter
            ahead = _PARAM_AHEAD.search(dsn, start)
            yield start, ahead.start() if ahead else len(dsn)
    for m in _PT_KEY.finditer(dsn):
        ahead = _PT_NEXT.search(dsn, m.end())  # a comma in the password stays in it
        yield m.end(), ahead.start() if ahead else len(dsn)


def _userinfo_span(dsn: str) -> tuple[int, int] | None:
    """From the first ':' of the userinfo to the last '@': the widest password a URI, a
    one-slash typo or a Go DSN (`u:pw@tcp(h)/`) may hold, unencoded / ? # @ included."""
    at = dsn.rfind("@")
    if at < 0:
        return None
    m = _SCHEME.match(dsn)
    # After a DSN scheme (mysql:// or its one-slash typo); else from the first ':', as
    # `user:/pw@(host)/` is a Go DSN and `jdbc:mysql://` or `mysqlx://` no scheme of ours.
    known = m is not None and m.end() <= at and m.group("scheme").lower() in _URI_SCHEMES
    colon = dsn.find(":", m.end() if known and m is not None else 0, at)
    return (colon + 1, at) if colon >= 0 else None


def password_spans(dsn: str) -> list[tuple[int, int]]:
    """The (start, end) spans of `dsn` that are, or may be, a password, whatever its form."""
    keyword_form = _is_keyword_form(dsn)
    spans = list(_keyword_spans(dsn, keyword_form))
    if not keyword_form:
        userinfo = _userinfo_span(dsn)
        if userinfo is not None:
            spans.append(userinfo)
    return sorted((s, e) for s, e in spans if e > s)


def dsn_passwords(dsn: str) -> list[str]:
    """The texts that are, or may be, `dsn`'s password (as written, and decoded)."""
    out: list[str] = []
    for start, end in password_spans(dsn):
        raw = dsn[start:end]
        out += [raw, unquote(raw)]
        if raw.startswith("'"):
            out.append(re.sub(r"\\(.)", r"\1", raw[1:-1] if raw.endswith("'") else raw[1:]))
    return [p for p in dict.fromkeys(out) if p]


def redact_dsn(dsn: str, limit: int = 200) -> str:
    """`dsn` for a message: every password span masked (`password_spans`), then `redact`;
    shortened to `limit` characters."""
    shown, last = [], 0
    for start, end in password_spans(dsn):
        if start >= last:
            shown += [dsn[last:start], MASK]
        elif end > last:
            shown[-1] = MASK
        last = max(last, end)
    text = redact("".join(shown) + dsn[last:])
    return text if len(text) <= limit else text[:limit] + "..."


_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")


def redact_args(text: str, args: Iterable[str]) -> str:
    """`text` about a command line (click quoting what was typed, maybe shortened): each
    argument that holds a password shown as `redact_dsn` shows it, and any piece of its
    password masked (`redact_fragments`); then `redact`."""
    for arg in args:
        if dsn_passwords(arg):
            text = redact_fragments(text.replace(arg, redact_dsn(arg, limit=len(arg))), arg)
    return redact(text)


def register_args(args: Iterable[str]) -> None:
    """Register the passwords the command line's DSNs hold, however malformed, so that no
    later message can show them."""
    for arg in args:
        for password in dsn_passwords(arg):
            register_secret(password)


def _shared_runs(text: str, password: str, least: int = 4) -> list[tuple[int, int]]:
    """The spans of `text` that are `least` or more characters in a row of `password`."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i <= len(text) - least:
        k = least
        if text[i:i + k] not in password:
            i += 1
            continue
        while i + k < len(text) and text[i:i + k + 1] in password:
            k += 1
        spans.append((i, i + k))
        i += k
    return spans


def redact_fragments(message: str, dsn: str) -> str:
    """A parser's `message` about `dsn` without any piece of the DSN's password: a quoted
    piece that is part of it (libpq: `missing "=" after "WORD"`; urllib: `as 'WORD'`) and
    any 4 characters in a row of it (libpq: `invalid percent-encoded token: "%WORD@host"`);
    then `redact`."""
    passwords = dsn_passwords(dsn)

    def quoted(m: re.Match[str]) -> str:
        piece = m.group(1) if m.group(1) is not None else m.group(2)
        if piece and any(piece in p for p in passwords):
            return m.group(0)[0] + MASK + m.group(0)[-1]
        return m.group(0)

    text = _QUOTED.sub(quoted, message)
    for password in passwords:
        for start, end in reversed(_shared_runs(text, password)):
            text = text[:start] + MASK + text[end:]
    return redact(text)
