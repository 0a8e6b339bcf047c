"""mysqld_exporter's perf_schema.eventsstatementssum scraper (the same names in Debian's 0.14
and upstream), from the facts of dbgauge's mysql_statement_totals: merged into the
mysqld_exporter dialect (`FAMILIES`, `TRANSLATE`).

One counter per column, unlabelled. As the peer's: `..._sum_timer_wait` is in seconds and
`..._sum_lock_time` in picoseconds (its help says so); the other names lack `_total`.
An empty digest table sums to NULL, which fails the peer's scraper: no series then.
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors._summary import PICOSECONDS, Summary
from dbgauge.collectors.mysql_statement_totals import COLUMNS_INFO
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import Sample

_P = "mysql_perf_schema_events_statements_sum_"
_HELP = {
    "total": "The total count of events statements.",
    "created_tmp_disk_tables": "The number of on-disk temporary tables created.",
    "created_tmp_tables": "The number of temporary tables created.",
    "errors": "Number of errors.",
    "lock_time": "Time in picoseconds spent waiting for locks.",
    "no_good_index_used": "Number of times no good index was found.",
    "no_index_used": "Number of times no index was found.",
    "rows_affected": "Number of rows affected by statements.",
    "rows_examined": "Number of rows read during statements' execution.",
    "rows_sent": "Number of rows returned.",
    "select_full_join": "Number of joins performed by statements which did not use an index.",
    "select_full_range_join": "Number of joins performed by statements which used a range "
                              "search of the first table.",
    "select_range": "Number of joins performed by statements which used a range of the first "
                    "table.",
    "select_range_check": "Number of joins without keys performed by statements that check "
                          "for key usage after each row.",
    "select_scan": "Number of joins performed by statements which used a full scan of the "
                   "first table.",
    "sort_merge_passes": "Number of merge passes by the sort algorithm performed by "
                         "statements.",
    "sort_range": "Number of sorts performed by statements which used a range.",
    "sort_rows": "Number of rows sorted.",
    "sort_scan": "Number of sorts performed by statements which used a full table scan.",
    "timer_wait": "Total wait time of the summarized events that are timed.",
    "warnings": "Number of warnings.",
}
_SCALE = {"timer_wait": PICOSECONDS}  # lock_time stays in picoseconds, as the peer's
FAMILIES: tuple[PeerFamily, ...] = tuple(
    PeerFamily(PeerSpec(f"{_P}{column}", "counter", help_),
               f"dbgauge_mysql_statements_all_{COLUMNS_INFO[column][0]}",
               "picoseconds, as the peer's (dbgauge's family: seconds)"
               if column == "lock_time" else "")
    for column, help_ in _HELP.items())
_MINE = PeerFamilies(*FAMILIES)


def statements_sum(facts: Summary) -> Iterator[Sample]:
    if not facts.rows or any(facts.rows[0].values.get(c) is None for c in _HELP):
        return  # the peer scans every sum: one NULL fails its scrape
    values = facts.rows[0].values
    for column in _HELP:
        yield _MINE.sample(f"{_P}{column}", values[column] * _SCALE.get(column, 1.0))


TRANSLATE: dict[str, Translate] = {"mysql_statement_totals": statements_sum}
