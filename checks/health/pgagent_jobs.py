"""check pgagent-jobs: pgAgent jobs whose steps failed recently (check_postgres'
pgagent_jobs). -w/-c are times, how far back to look: a failed step that ended within
the -c time is CRITICAL, within the -w time WARNING (give one or both, as there). Failed
is check_postgres' rule: an SQL step that returned -1, a batch step that returned
anything but 0. Run it on the database pgAgent's extension lives in (--dbname); without
the pgagent schema there the check is UNKNOWN saying so, as is a role that may not read
it (naming the grant), never "no failure".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, NodeOutcome, OwnThresholds
from dbgauge.toolkit.errors import CheckFailed, ConfigError, QueryError
from dbgauge.toolkit.result import Finding, Status
from dbgauge.toolkit.units import parse_duration

if TYPE_CHECKING:
    from dbgauge.checks.health.filters import Scope
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _window(text: str, option: str) -> float | None:
    if not text:
        return None
    try:
        return float(parse_duration(text))
    except ValueError as exc:
        raise ConfigError(f"{option} {text[:40]!r}: {exc}") from None


def _check(scope: Scope) -> None:
    if not scope.warning and not scope.critical:
        raise ConfigError("check pgagent-jobs needs --warning or --critical: how far back a "
                          "failed step counts (-c 1h), as check_postgres' pgagent_jobs")
    _window(scope.warning, "--warning")
    _window(scope.critical, "--critical")


def _read(node: Target, conn: Connection, scope: Scope) -> NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    critical, warning = _window(scope.critical, "--critical"), _window(scope.warning,
                                                                       "--warning")
    back = max(w for w in (critical, warning) if w is not None)
    try:
        rows = conn.query("check_pgagent_jobs", {"seconds": back})
    except QueryError as exc:
        if "pgagent" in str(exc) and "does not exist" in str(exc):
            raise CheckFailed("no pgagent schema in this database: run the check on the "
                              "database pgAgent's extension is in (--dbname)") from None
        if "permission denied" in str(exc):
            raise CheckFailed(f"{exc}: GRANT USAGE ON SCHEMA pgagent, SELECT ON ALL TABLES "
                              "IN SCHEMA pgagent TO the monitoring role") from None
        raise
    findings = []
    for r in rows:
        age = number(r.get("ended_seconds_ago")) or 0.0
        status = Status.CRITICAL if critical is not None and age < critical else Status.WARNING
        if status is Status.WARNING and (warning is None or age >= warning):
            continue
        output = " ".join((text(r.get("jsloutput")) or "(no output)").split())[:200]
        findings.append(Finding(status, node.name, "pgagent-job-failed",
                                f"{text(r.get('jobname'))}/{text(r.get('jstname'))} returned "
                                f"{r.get('jslresult')} {age:.0f} s ago: {output}"))
    note = f"{len(findings)} failed step(s) in the last {back:g} s" if findings else \
        f"no failed step in the last {back:g} s"
    return NodeOutcome(node.name, tuple(findings), note=note)


CHECK = HealthCheck(
    name="pgagent-jobs",
    summary="pgAgent job steps that failed within the time given: -c 1h (PostgreSQL).",
    measures="pgAgent's failed job steps within the -w/-c time",
    kinds=frozenset({"postgres"}), metric="", scoped=_read,
    own_thresholds=OwnThresholds(
        "TIME", "how far back a failed step counts (1h, '30 minutes'); no default: give "
        "one or both", _check, needed=True))
