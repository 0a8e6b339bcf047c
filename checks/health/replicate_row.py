"""check replicate-row: how long a write on the primary takes to be readable on each
standby (check_postgres' replicate_row), timed from the commit to its first sight there.

dbgauge writes only to its own schema: the token is the heartbeat table's
`dbgauge replicate-row` row (`dbgauge.heartbeat`, sql/schema/postgres/heartbeat.sql,
created when missing), never a user table. check_postgres' form (`--repinfo
table,pk,id,column,val1,val2`: an UPDATE of the user's own row) is refused, saying why.
The nodes are the PostgreSQL nodes of the run, grouped by cluster (system identifier):
each primary with a standby among them writes its token, and its standbys are timed. The
write is refused on a server that is read-only (`toolkit.write_guard`; no option
overrides it here), and commits with synchronous_commit local, so a stalled synchronous
standby is timed, not waited on.

-w/-c are times (seconds, or 5s, '1 minute'): each standby's arrival time is judged; one
that has not shown the token when the longest level passes is CRITICAL (WARNING when only
-w is given). Differences: check_postgres returns WARNING as soon as the warning time
passes (with both levels it never reaches CRITICAL), polls once a second and times in
whole seconds; dbgauge waits for the critical time, polls every 0.1 s, and reports each
standby's time as perfdata (`standby:replicate_seconds`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import (
    CheckOption,
    HealthCheck,
    NodeOutcome,
    Thresholds,
    cannot_tell,
)
from dbgauge.checks.health.scope import Scope
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.ranges import Range
from dbgauge.toolkit.result import Finding, Status, perf_label

if TYPE_CHECKING:
    from dbgauge.checks.nodes import Connected
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Deadline, Target

NEVER = Range(start=-math.inf)
POLL = 0.1
REPINFO_REFUSED = (
    "--repinfo: dbgauge does not write to user tables (check_postgres' replicate_row "
    "UPDATEs the row you name); replicate-row writes its token to dbgauge's own heartbeat "
    "table (dbgauge.heartbeat) instead: drop --repinfo, and give the role CREATE on the "
    "database or create the dbgauge schema it owns")


def wait_limit(limits: Thresholds) -> float:
    """How long to wait for a standby: the longest finite level (ConfigError: none)."""
    levels = [r.end for r in (limits.warning, limits.critical)
              if not r.inside and r.start <= 0 and math.isfinite(r.end)]
    if not levels:
        raise ConfigError("replicate-row takes times to wait: -w 5s -c 30s (a plain level "
                          "in seconds, or with its unit)")
    return max(levels)


def arrival_status(limits: Thresholds, seconds: float | None) -> Status:
    """A standby's state: its arrival time judged; not arrived: past the longest level."""
    if seconds is not None:
        return limits.status(seconds)
    return Status.CRITICAL if math.isfinite(limits.critical.end) else Status.WARNING


def _role(_node: Target, conn: Connection) -> tuple[str, bool]:
    """(system identifier, standby?) of a node."""
    from dbgauge.toolkit.db.values import flag, text

    row = conn.query("replicate_row_role")[0]
    return text(row.get("system_identifier")), bool(flag(row.get("standby")))


def _write_token(node: Target, conn: Connection) -> int:
    """The token written on the primary, after the write guard and the table are ready."""
    from dbgauge.toolkit.db.values import flag
    from dbgauge.toolkit.sql import load_sql
    from dbgauge.toolkit.write_guard import check_writable

    check_writable(conn, "write replicate-row's token (dbgauge.heartbeat)",
                   f"node {node.name}", override=None)
    ready = conn.query("replicate_row_ready")[0]
    if not flag(ready.get("has_table")):
        script = load_sql("schema/postgres", "heartbeat")
        if flag(ready.get("has_schema")):  # it needs CREATE on the database even then
            script = script.replace("CREATE SCHEMA IF NOT EXISTS dbgauge;", "", 1)
        conn.execute_sql(script)
    conn.execute_sql("SELECT set_config('synchronous_commit', 'local', false)")
    return int(conn.query("replicate_row_write")[0]["token"])


def _seen(_node: Target, conn: Connection) -> int | None:
    from dbgauge.toolkit.db.values import flag, number

    if not flag(conn.query("replicate_row_ready")[0].get("has_table")):
        return None  # the table's creation not replayed yet
    got = number(conn.query("replicate_row_read")[0].get("token"))
    return None if got is None else int(got)


def _poll(conns: Connected, standbys: list[str], token: int, wait: float
          ) -> dict[str, float | None]:
    """Each standby's seconds from the commit until it showed the token (None: not by
    `wait`)."""
    started = time.monotonic()
    arrived: dict[str, float | None] = {}
    while True:
        pending = [s for s in standbys if s not in arrived and s in conns.names]
        elapsed = time.monotonic() - started
        if not pending or elapsed > wait:
            break
        seen = conns.each(_seen, pending, best_effort=True, within=0.9)
        at = time.monotonic() - started
        arrived.update({s: at for s, got in seen.items() if got is not None and got >= token})
        time.sleep(POLL)
    return {s: arrived.get(s) for s in standbys if s in conns.names}


def _across(nodes: Sequence[Target], limits: Thresholds | None, scope: Scope,
            deadline: Deadline | None, down: Status) -> list[NodeOutcome]:
    from dbgauge.checks.nodes import Connected

    if scope.option("repinfo"):
        raise ConfigError(REPINFO_REFUSED)
    if limits is None:
        raise ConfigError("replicate-row has no default times: give --warning or --critical")
    wait = wait_limit(limits)
    if deadline is not None and wait >= deadline.left():
        raise ConfigError(f"replicate-row waits up to {wait:g} s: give -t/--timeout above "
                          "that")
    with Connected(nodes, deadline=deadline, down=down, connecting=0.2) as conns:
        outcomes = [NodeOutcome(f.node, (f,), note=f.detail) for f in conns.findings]
        clusters: dict[str, list[tuple[str, bool]]] = {}
        for name, (system, standby) in conns.each(_role).items():
            clusters.setdefault(system, []).append((name, standby))
        if not any(len(members) > 1 for members in clusters.values()):
            found = "; ".join(f"{', '.join(n for n, _ in m)}" for m in clusters.values())
            return [*outcomes, cannot_tell(nodes[0], "replicate-row-nodes", (
                f"no primary with a standby among the nodes (clusters: {found or 'none'}): "
                "name a primary and its standbys with --target or --node"))]
        for members in clusters.values():
            outcomes += _cluster(nodes, conns, members, limits, wait, down)
        done = {o.node for o in outcomes}
        outcomes += [NodeOutcome(f.node, (f,), note=f.detail) for f in conns.findings
                     if f.node not in done]
    return outcomes


def _cluster(nodes: Sequence[Target], conns: Connected, members: list[tuple[str, bool]],
             limits: Thresholds, wait: float, down: Status) -> list[NodeOutcome]:
    """One cluster's primary writes, its standbys are timed."""
    from dbgauge.checks.nodes import failure

    primaries = [n for n, standby in members if not standby]
    standbys = [n for n, standby in members if standby]
    if len(primaries) != 1:
        why = (f"{len(primaries)} primaries of one cluster: see check split-brain"
               if primaries else "its primary is not among the nodes: add it")
        return [cannot_tell(_target(nodes, n), "replicate-row-nodes", why) for n in standbys
                or primaries]
    (primary,) = primaries
    if not standbys:
        return [NodeOutcome(primary, note="no standby of it among the nodes: nothing written")]
    try:
        token = _write_token(_target(nodes, primary), conns.connection(primary))
    except Exception as exc:  # refused, no privilege, a failed statement: the primary's
        return [NodeOutcome(primary, (failure(primary, exc, down=down),))]
    arrived = _poll(conns, standbys, token, wait)
    return [NodeOutcome(primary, note="token written"),
            *(_judged(name, limits, seconds, wait) for name, seconds in arrived.items())]


def _target(nodes: Sequence[Target], name: str) -> Target:
    return next(n for n in nodes if n.name == name)


def _judged(name: str, limits: Thresholds, seconds: float | None, wait: float
            ) -> NodeOutcome:
    status = arrival_status(limits, seconds)
    text = (f"the token replicated in {seconds:.2f} s" if seconds is not None else
            f"the token not replicated after {wait:g} s (replay stopped or far behind?)")
    findings = () if status is Status.OK else (
        Finding(status, name, "replicate-row", text + (
            f" (threshold {limits.critical if status is Status.CRITICAL else limits.warning})"
            if seconds is not None else "")),)
    perf = ((perf_label(name, "replicate_seconds"), seconds),) if seconds is not None else ()
    return NodeOutcome(name, findings, perf, text)


CHECK = HealthCheck(
    name="replicate-row",
    summary="Seconds a write on the primary takes to show on each standby, in dbgauge's "
            "own table (PostgreSQL).",
    measures="seconds from a token's commit on the primary (dbgauge.heartbeat) until each "
             "standby shows it",
    kinds=frozenset({"postgres"}), metric="replicate_seconds",
    across=_across, defaults=Thresholds(NEVER, NEVER), unit="seconds",
    finding="replicate-row", needs_thresholds=True,
    options=(CheckOption("repinfo", "TABLE,PK,ID,COL,V1,V2",
                         "check_postgres' form, refused: dbgauge writes no user table "
                         "(its token goes to dbgauge.heartbeat)."),))
