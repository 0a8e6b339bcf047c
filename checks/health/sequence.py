"""check sequence: how close the connected database's sequences are to running out.

A sequence at its max_value (min_value descending) makes every following INSERT fail; a
`serial` column gets there after 2^31 rows. The threshold applies to the sequence nearest
its end, in percent of its range used (the postgres_sequences collector's facts, cycling
sequences left out). PostgreSQL shows last_value only with USAGE or SELECT on the
sequence: the ones the role may not read are counted in the message (grant SELECT on
them, or they are not judged). A threshold is a percentage (`-w 85` or `-w 85%`); one
outside 0..100 is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import (
    HealthCheck,
    Measured,
    NodeOutcome,
    Share,
    Thresholds,
    nothing_to_check,
)

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target


def _read(node: Target, conn: Connection) -> Measured | NodeOutcome:
    from dbgauge.collectors.postgres_sequences import read_sequences

    facts = read_sequences(conn)
    used = [s for s in facts.sequences if s.used_ratio is not None]
    unreadable = f", {facts.unreadable:.0f} not readable by this role" \
        if facts.unreadable else ""
    if not used:
        return nothing_to_check(node, f"no sequence in use ({facts.total:.0f} sequence(s)"
                                      f"{unreadable})")
    top = used[0]  # the statement orders by used_ratio, nearest the end first
    percent = 100.0 * (top.used_ratio or 0.0)
    return Measured(percent, f"sequence {top.schema}.{top.sequence} {percent:.1f}% used "
                             f"({facts.total:.0f} sequence(s){unreadable})",
                    extra=(("sequences_unreadable", facts.unreadable),))


CHECK = HealthCheck(
    name="sequence", summary="The sequence nearest its end, percent used (PostgreSQL).",
    measures="the sequence nearest its end, percent used", kinds=frozenset({"postgres"}),
    metric="sequence_used_percent", read=_read, defaults=Thresholds.above(85.0, 95.0, Share()),
    unit="percent", finding="sequence-exhaustion")
