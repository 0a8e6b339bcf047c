"""Pure parser of PgBouncer's auth_file, as `load_auth_file` in loader.c reads it.

The surprises it reproduces: `;` starts a comment but `#` does not, and a line that does
not start with a double quote ends the file ("broken auth file"), so every user on a
later line silently cannot log in. Each user's secret is classified (plain, md5, SCRAM,
empty, malformed SCRAM) without being kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dbgauge.checks.pgbouncer.tokens import Problem, read_quoted

MAX_USERNAME = 128  # PgBouncer's MAX_USERNAME (bytes, including the terminator)


@dataclass(frozen=True)
class AuthUser:
    name: str
    secret_kind: str  # "plain", "md5", "scram", "empty"
    line: int


@dataclass(frozen=True)
class AuthFile:
    source: str
    users: tuple[AuthUser, ...]
    problems: tuple[Problem, ...]


_MD5 = re.compile(r"md5[0-9a-f]{32}")
_B64 = r"[A-Za-z0-9+/=]+"
_SCRAM = re.compile(rf"SCRAM-SHA-256\$(?P<iter>\d+):{_B64}\${_B64}:{_B64}")


def parse_auth_file(text: str, source: str) -> AuthFile:
    """Users of an auth_file. Like PgBouncer, stop at the first broken line."""
    users: list[AuthUser] = []
    problems: list[Problem] = []
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip(" \t\r\v\f")
        if not line or line.startswith(";"):
            continue
        stop = ("; PgBouncer stops reading the auth_file here, so users on later lines "
                "cannot log in")
        if not line.startswith('"'):
            hint = " ('#' is not a comment in auth_file, use ';')" if line[0] == "#" else ""
            problems.append(Problem(f"broken auth file: line does not start with '\"'{hint}"
                                    + stop, source, lineno))
            break
        name, pos = read_quoted(line, 0)
        if name is None:
            problems.append(Problem("broken auth file: unterminated user name" + stop,
                                    source, lineno))
            break
        if len(name.encode()) >= MAX_USERNAME:
            problems.append(Problem(f"user name longer than {MAX_USERNAME - 1} bytes" + stop,
                                    source, lineno))
            break
        rest = line[pos:]
        q = rest.find('"')
        if q < 0:
            problems.append(Problem("broken auth file: no password field for this line's user; "
                                    "PgBouncer would take the next line's first field as "
                                    "its password", source, lineno))
            break
        secret, _ = read_quoted(rest, q)
        if secret is None:
            problems.append(Problem("broken auth file: unterminated password"
                                    + stop, source, lineno))
            break
        users.append(AuthUser(name, _secret_kind(secret), lineno))
    return AuthFile(source, tuple(users), tuple(problems))


def _secret_kind(secret: str) -> str:
    if not secret:
        return "empty"
    if _MD5.fullmatch(secret):
        return "md5"
    if secret.startswith("SCRAM-SHA-256$"):
        return "scram" if _SCRAM.fullmatch(secret) else "bad-scram"
    return "plain"
