"""check settings-checksum: whether the server's settings are still the ones they were
(check_postgres' settings_checksum): the MD5 of every visible setting and its value, one
`name value` line each in name order, held against the checksum given with `-w` or `-c`
(`-c 0`, or neither: UNKNOWN, printing the checksum to take as the baseline, as
check_postgres does). `--include`/`--exclude` pick the settings (check_postgres 2.25 dies
on them: "Label not found for next SLURP").

The checksum is check_postgres' for the same server, role and database, so a baseline
taken with it carries over: the settings are read in a session without dbgauge's own
timeouts, with the values check_postgres' psql session has (application_name `psql`,
statement_timeout 30000: its default --timeout), each value as check_postgres parses it
from psql (trailing blanks dropped). A baseline taken with check_postgres --timeout N
other than 30, or with PGAPPNAME/PGOPTIONS set, differs. It depends on the role (a
superuser sees more settings).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from dbgauge.checks.health.expected import checksum_outcome
from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import HealthCheck, NodeOutcome

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def settings_checksum(rows: list[tuple[str, str]]) -> str:
    """check_postgres' checksum: MD5 hex of `name value\\n` per setting, in the given
    order, each value as check_postgres reads it from psql's aligned output (trailing
    blanks dropped: log_line_prefix '%m [%p] ' counts as '%m [%p]')."""
    return hashlib.md5("".join(f"{n} {_as_psql_shows(v)}\n" for n, v in rows).encode(),
                       usedforsecurity=False).hexdigest()


def _as_psql_shows(value: str) -> str:
    first, newline, rest = value.partition("\n")
    return first.rstrip() + newline + rest


def _read(node: Target, conn: Connection, scope: Scope) -> NodeOutcome:
    from dbgauge.toolkit.db.values import text

    rows = [(text(r.get("name")), text(r.get("setting"))) for r in conn.query("check_settings")]
    return checksum_outcome(node, rows, scope, settings_checksum, "settings-changed",
                            "settings-checksum")


CHECK = HealthCheck(
    name="settings-checksum",
    summary="Whether the settings' checksum is still the one given: -c CHECKSUM (PostgreSQL).",
    measures="MD5 of every visible setting and its value (-c/-w: the expected checksum)",
    kinds=frozenset({"postgres"}), metric="",
    scoped=_read, filters="setting",
    takes_checksum=True, plain_session=True)
