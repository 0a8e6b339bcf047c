"""DSNs of every form dbgauge accepts or is likely to be handed, carrying a marked password.

A password is `sep + MARK1 + sep + MARK2 + sep`: two markers, so a password cut in two by a
parser (libpq reads up to the first '@', urllib stops the host at a '/') is caught when
either piece shows. Separators are the characters that break DSNs: @ : / , = ' " space
% ? # & \\ ; ( ).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import quote

from dbgauge.toolkit import redact as redact_module

MARK1 = "Qzq7kMark"
MARK2 = "Wxw9kMark"
MARKS = (MARK1, MARK2)
SEPARATORS = "@:/,='\" %?#&\\;()"


def marked(sep1: str = "", sep2: str = "", sep3: str = "") -> str:
    return f"{sep1}{MARK1}{sep2}{MARK2}{sep3}"


def leaked(text: str) -> list[str]:
    """The markers `text` shows, in any case (a test asserts this is empty)."""
    return [m for m in MARKS if m.lower() in text.lower()]


def _libpq_quoted(pw: str) -> str:
    return "'" + pw.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _enc(pw: str) -> str:
    return quote(pw, safe="")


# form -> (user, password, host, port) -> DSN
Form = Callable[[str, str, str, int], str]

# What dbgauge accepts, written as the form asks (the password encoded or quoted).
WELL_FORMED: dict[str, Form] = {
    "mysql-uri": lambda u, pw, h, p: f"mysql://{u}:{_enc(pw)}@{h}:{p}/",
    "mariadb-uri": lambda u, pw, h, p: f"mariadb://{u}:{_enc(pw)}@{h}:{p}/",
    "postgresql-uri": lambda u, pw, h, p: f"postgresql://{u}:{_enc(pw)}@{h}:{p}/app",
    "postgres-uri-query": lambda u, pw, h, p:
        f"postgres://{u}@{h}:{p}/app?sslmode=disable&password={_enc(pw)}",
    "libpq-kv": lambda u, pw, h, p:
        f"host={h} port={p} user={u} password={_libpq_quoted(pw)} dbname=app",
    "named-mysql-uri": lambda u, pw, h, p: f"node1=mysql://{u}:{_enc(pw)}@{h}:{p}/",
    "named-libpq-kv": lambda u, pw, h, p:
        f"node1=host={h} port={p} user={u} password={_libpq_quoted(pw)}",
}

# What a user may hand dbgauge: peers' spellings and typos, the password as typed.
HANDED: dict[str, Form] = {
    "pt": lambda u, pw, h, p: f"h={h},P={p},u={u},p={pw}",
    "pt-password-first": lambda u, pw, h, p: f"p={pw},h={h},P={p},u={u}",
    "go-tcp": lambda u, pw, h, p: f"{u}:{pw}@tcp({h}:{p})/",
    "go-paren": lambda u, pw, h, p: f"{u}:{pw}@({h}:{p})/",
    "go-unix": lambda u, pw, h, p: f"{u}:{pw}@unix(/tmp/no-such.sock)/app",
    "named-go-tcp": lambda u, pw, h, p: f"node1={u}:{pw}@tcp({h}:{p})/",
    "mysql-one-slash": lambda u, pw, h, p: f"mysql:/{u}:{pw}@{h}:{p}/",
    "mysql-no-slash": lambda u, pw, h, p: f"mysql:{u}:{pw}@{h}:{p}/",
    "postgres-one-slash": lambda u, pw, h, p: f"postgresql:/{u}:{pw}@{h}:{p}/app",
    "named-one-slash": lambda u, pw, h, p: f"node1=mysql:/{u}:{pw}@{h}:{p}/",
    "mysql-uri-raw": lambda u, pw, h, p: f"mysql://{u}:{pw}@{h}:{p}/",
    "postgresql-uri-raw": lambda u, pw, h, p: f"postgresql://{u}:{pw}@{h}:{p}/app",
    "postgres-uri-query-raw": lambda u, pw, h, p: f"postgresql://{u}@{h}:{p}/app?password={pw}",
    "libpq-kv-unquoted": lambda u, pw, h, p: f"host={h} port={p} user={u} password={pw}",
    "libpq-kv-unterminated": lambda u, pw, h, p: f"host={h} port={p} password='{pw}",
    "jdbc": lambda u, pw, h, p: f"jdbc:mysql://{u}:{_enc(pw)}@{h}:{p}/",
    "unknown-scheme": lambda u, pw, h, p: f"mysqlx://{u}:{_enc(pw)}@{h}:{p}/",
    "upper-scheme": lambda u, pw, h, p: f"MYSQL://{u}:{_enc(pw)}@{h}:{p}/",
}

FORMS: dict[str, Form] = {**WELL_FORMED, **HANDED}


@contextmanager
def no_known_secrets() -> Iterator[None]:
    """An empty registry for the block (what other tests registered is put back)."""
    saved, ordered = set(redact_module._secrets), redact_module._ordered
    redact_module._secrets.clear()
    redact_module._ordered = []
    try:
        yield
    finally:
        redact_module._secrets.clear()
        redact_module._secrets.update(saved)
        redact_module._ordered = ordered
