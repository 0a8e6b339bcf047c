"""check pgbouncer-checksum: whether PgBouncer's settings are still the ones they were
(check_postgres' pgbouncer_checksum): the MD5 of `key = value` per line of SHOW CONFIG, in
the order PgBouncer lists them, held against the checksum given with -c or -w (`-c 0` or
neither: UNKNOWN, printing it). The same checksum as check_postgres' for the same
PgBouncer, so a baseline carries over. `--include`/`--exclude` pick the settings by name.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from dbgauge.checks.health.expected import checksum_outcome, expected_value
from dbgauge.checks.health.model import HealthCheck, NodeOutcome

if TYPE_CHECKING:
    from dbgauge.checks.health.filters import Scope
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def config_checksum(rows: list[tuple[str, str]]) -> str:
    """check_postgres' checksum: MD5 hex of `key = value\\n` per setting, in order."""
    return hashlib.md5("".join(f"{k} = {v}\n" for k, v in rows).encode(),
                       usedforsecurity=False).hexdigest()


def _read(node: Target, conn: Connection, scope: Scope) -> NodeOutcome:
    from dbgauge.toolkit.db.values import text

    rows = [(text(r.get("key")), text(r.get("value"))) for r in conn.query("show_config")]
    return checksum_outcome(node, rows, scope, config_checksum, "pgbouncer-settings-changed",
                            "pgbouncer-checksum")


CHECK = HealthCheck(
    name="pgbouncer-checksum",
    summary="Whether PgBouncer's settings' checksum is still the one given: -c CHECKSUM.",
    measures="MD5 of PgBouncer's SHOW CONFIG (-c/-w: the expected checksum)",
    kinds=frozenset({"pgbouncer"}), metric="", scoped=_read, filters="setting",
    own_thresholds=expected_value("CHECKSUM", "an MD5 checksum (32 hex digits)",
                                  lambda v: len(v) == 32 and all(
                                      c in "0123456789abcdef" for c in v)))
