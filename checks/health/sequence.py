"""check sequence: how close the connected database's sequences are to running out.

A sequence at its max_value (min_value descending) makes every following INSERT fail; a
`serial` column gets there after 2^31 rows. The threshold applies to the sequence nearest
its end, in percent of its range used (the postgres_sequences collector's facts, cycling
sequences left out). PostgreSQL shows last_value only with USAGE or SELECT on the
sequence: the ones the role may not read are not judged, and make the check UNKNOWN
naming the grant (a sequence it cannot read may be the one running out); those another
session's lock kept it from reading this time are counted in the message. When no sequence
could be judged because of locks alone, the check is UNKNOWN too. A threshold is a
percentage (`-w 85` or `-w 85%`); one outside 0..100 is refused. Each sequence read
(the collector's top N) has its perfdata item, `schema.sequence` as check_postgres labels
it; `--include`/`--exclude` pick sequences by name (`schema.` a schema), reading them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    Share,
    Thresholds,
    cannot_tell,
    nothing_to_check,
)
from dbgauge.toolkit.result import Finding, Status

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

ALL = 1_000_000  # sequences read when --include/--exclude pick among them


def _read(node: Target, conn: Connection, scope: Scope) -> Measured | NodeOutcome:
    from dbgauge.collectors.postgres_sequences import read_sequences

    # the collector reads the top N; a filter must see them all to pick from
    facts = read_sequences(conn, ALL) if scope.filtered else read_sequences(conn)
    used = [s for s in facts.sequences if s.used_ratio is not None
            and not scope.skips(s.sequence, s.schema)]
    if scope.filtered and not used:
        return cannot_tell(node, "no-matching-sequence",
                           f"no sequence in use matched --include/--exclude "
                           f"({facts.total:.0f} sequence(s))")
    unreadable = (f", {facts.unreadable:.0f} not readable by this role"
                  if facts.unreadable else "") + \
        (f", {facts.locked:.0f} locked by another session (not read)" if facts.locked else "")
    unseen = (Finding(Status.UNKNOWN, node.name, "insufficient-privilege",
                      f"{facts.unreadable:.0f} sequence(s) not readable by this role, not "
                      "judged: GRANT SELECT ON ALL SEQUENCES IN SCHEMA ... TO ... (and ALTER "
                      "DEFAULT PRIVILEGES ... GRANT SELECT ON SEQUENCES)"),) \
        if facts.unreadable else ()
    if not used and facts.locked:
        locked = cannot_tell(node, "sequence-unknown", (
            f"no sequence could be judged ({facts.total:.0f} sequence(s){unreadable}); "
            "try again when the lock is released"))
        return NodeOutcome(node.name, (*unseen, *locked.findings), note=locked.note)
    if not used:
        note = f"no sequence in use ({facts.total:.0f} sequence(s){unreadable})"
        return NodeOutcome(node.name, unseen, note=note) if unseen \
            else nothing_to_check(node, note)
    top = used[0]  # the statement orders by used_ratio, nearest the end first
    percent = 100.0 * (top.used_ratio or 0.0)
    return Measured(percent, f"sequence {top.schema}.{top.sequence} {percent:.1f}% used "
                             f"({facts.total:.0f} sequence(s){unreadable})",
                    extra=(("sequences_unreadable", facts.unreadable),
                           ("sequences_locked", facts.locked),
                           *((f"{q.schema}.{q.sequence}:sequence_used_percent",
                              100.0 * (q.used_ratio or 0.0)) for q in used)),
                    findings=unseen)


CHECK = HealthCheck(
    name="sequence", summary="The sequence nearest its end, percent used (PostgreSQL).",
    measures="the sequence nearest its end, percent used", kinds=frozenset({"postgres"}),
    metric="sequence_used_percent", scoped=_read,
    filters="sequence", defaults=Thresholds.above(85.0, 95.0, Share()),
    unit="percent", finding="sequence-exhaustion")
