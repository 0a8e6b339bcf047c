"""check txn-wraparound: transaction-ID age per database, in percent of the 2^31 limit.

`age(datfrozenxid)` grows until (auto)vacuum freezes a database's oldest rows; near 2^31
PostgreSQL stops assigning transaction IDs (the forced shutdown for wraparound). The
threshold applies to the oldest database's percentage of 2^31; each database's
percentage, and the oldest one's against autovacuum_freeze_max_age (past 100 an
anti-wraparound autovacuum is due, and not yet done), are in the message and perfdata.
The postgres_server collector's facts, so a check and a scrape agree.

Thresholds as check_postgres' `txn_wraparound` reads them: a bare number is a count of
transactions (`-c 1_300_000_000`), held against the oldest database's xid age; `N%` a
share of 2^31 (the defaults: 50% and 75%). A bare number up to 100 is refused: it is a
percentage without its `%`, not a transaction count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dbgauge.checks.health.model import HealthCheck, Measured, Share, Thresholds
from dbgauge.toolkit.errors import CheckFailed

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

WRAP_LIMIT = 2.0 ** 31  # transaction IDs a database may be behind before wraparound


def _read(node: Target, conn: Connection) -> Measured:
    from dbgauge.collectors.postgres_server import read_server

    facts = read_server(conn)
    ages = {db.name: db.xid_age for db in facts.databases if db.xid_age is not None}
    if not ages:
        raise CheckFailed("the server reported no database's age(datfrozenxid)")
    oldest = max(ages, key=lambda name: (ages[name], name))
    percent = 100.0 * ages[oldest] / WRAP_LIMIT
    text = (f"database {oldest}: xid age {ages[oldest]:.0f}, {percent:.2f}% of the "
            "wraparound limit 2^31")
    extra = [(f"{name}:xid_wraparound_percent", 100.0 * age / WRAP_LIMIT)
             for name, age in sorted(ages.items())]
    extra.append(("xid_age", ages[oldest]))
    evidence = {"xid_age": f"{ages[oldest]:.0f}"}
    if facts.freeze_max_age:
        freeze = 100.0 * ages[oldest] / facts.freeze_max_age
        text += f", {freeze:.0f}% of autovacuum_freeze_max_age {facts.freeze_max_age:.0f}"
        extra.append(("xid_freeze_max_age_percent", freeze))
        if freeze >= 100:
            evidence["hint"] = ("past autovacuum_freeze_max_age: an anti-wraparound "
                                "autovacuum is due; check it runs (pg_stat_progress_vacuum) "
                                "and that no old transaction or slot holds back the horizon")
    return Measured(percent, text, evidence, extra)


CHECK = HealthCheck(
    name="txn-wraparound",
    summary="Transaction-ID age: transactions (-c 1300000000) or percent of 2^31 (-c 75%) "
            "(PostgreSQL).",
    measures="transaction-ID age of the oldest database, percent of 2^31",
    kinds=frozenset({"postgres"}), metric="xid_wraparound_percent", read=_read,
    defaults=Thresholds.above(50.0, 75.0, Share("transactions", "xid_age", ambiguous_upto=100)),
    unit="percent", finding="xid-wraparound")
