"""postgres_exporter's names (prometheus-community/postgres_exporter; Debian's 0.11 and
upstream).

Every `pg_*` family its default collectors export, from dbgauge's facts. The families and
translations live in helper modules by subject, merged here: `_postgres_database`
(pg_stat_database, pg_stat_activity, pg_locks), `_postgres_server` (sizes, pg_static,
settings, bgwriter/checkpointer/archiver, replication) and `_postgres_activity` (the
peer's opt-in session, buffer cache and WAL receiver collectors, opt-in here too);
per-table families join the same way (a helper's FAMILIES.all into FAMILIES, its TRANSLATE
into TRANSLATE).

Where two of the peer's versions export one family name with different labels (0.11 adds
`server` to its built-in families, upstream does not), 0.11's labels win: one name has one
label set per scrape. Names that differ between versions are all exported.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from dbgauge.collectors.dialects import (
    _postgres_activity,
    _postgres_database,
    _postgres_server,
    _postgres_tables,
)
from dbgauge.toolkit.dialect import (
    Dialect,
    PeerFamilies,
    PeerFamily,
    PeerSpec,
    ScrapeStats,
    Translate,
)
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.metrics import Sample
from dbgauge.toolkit.targets import Target

UP = PeerSpec("pg_up", "gauge", "Whether the last scrape of metrics from PostgreSQL was "
              "able to connect to the server (1 for yes, 0 for no).")

LAST_DURATION = PeerSpec("pg_exporter_last_scrape_duration_seconds", "gauge",
                         "Duration of the last scrape of metrics from PostgreSQL.")
LAST_ERROR = PeerSpec("pg_exporter_last_scrape_error", "gauge",
                      "Whether the last scrape of metrics from PostgreSQL resulted in an error "
                      "(1 for error, 0 for success).")
SCRAPES = PeerSpec("pg_exporter_scrapes_total", "counter",
                   "Total number of times PostgreSQL was scraped for metrics.")
COLLECTOR_DURATION = PeerSpec("pg_scrape_collector_duration_seconds", "gauge",
                              "postgres_exporter: Duration of a collector scrape.",
                              ("collector",))
COLLECTOR_SUCCESS = PeerSpec("pg_scrape_collector_success", "gauge",
                             "postgres_exporter: Whether a collector succeeded.", ("collector",))
# The peer's collector names (0.11's and upstream's) whose data each dbgauge collector reads.
PEER_COLLECTORS = {
    "postgres_server": ("database", "postmaster", "roles", "database_wraparound"),
    "postgres_checkpoints": ("bgwriter", "stat_bgwriter", "stat_archiver", "stat_checkpointer",
                             "wal"),
    "postgres_database": ("stat_database", "stat_activity"),
    "postgres_locks": ("locks",),
    "postgres_settings": ("settings",),
    "postgres_replication": ("replication", "replication_slots", "stat_replication"),
    "postgres_vacuum_progress": ("stat_progress_vacuum",),
    "postgres_tables": ("stat_user_tables", "statio_user_tables"),
    "postgres_activity": ("long_running_transactions", "stat_activity_autovacuum",
                          "process_idle"),
    "postgres_buffercache": ("buffercache_summary",),
    "postgres_wal_receiver": ("stat_wal_receiver",),
    "postgres_indexes": ("statio_user_indexes",),
}

# Opt-in in dbgauge as in the peer: the dialect does not add them to a target's defaults.
OPT_IN = frozenset({"postgres_activity", "postgres_buffercache", "postgres_wal_receiver",
                    "postgres_indexes"})

# The merge point: each helper's families and translations (by dbgauge collector).
_PARTS = (_postgres_database, _postgres_server, _postgres_tables, _postgres_activity)

FAMILIES = PeerFamilies(
    PeerFamily(UP, "dbgauge_up"),
    PeerFamily(LAST_DURATION, "dbgauge_target_scrape_duration_seconds"),
    PeerFamily(LAST_ERROR, "dbgauge_collector_success",
               "1 when a collector failed or the target did not answer"),
    PeerFamily(SCRAPES, "", "scrapes of this target since dbgauge started"),
    PeerFamily(COLLECTOR_DURATION, "dbgauge_collector_duration_seconds",
               "by the peer's collector names; each carries its dbgauge collector's value"),
    PeerFamily(COLLECTOR_SUCCESS, "dbgauge_collector_success",
               "by the peer's collector names; each carries its dbgauge collector's value"),
    *(family for part in _PARTS for family in part.FAMILIES.all),
)


def self_samples(stats: ScrapeStats) -> Iterator[Sample]:
    """pg_exporter_* and pg_scrape_collector_* of one scrape."""
    yield FAMILIES.sample(LAST_DURATION.name, stats.duration)
    yield FAMILIES.sample(LAST_ERROR.name, 1.0 if stats.error else 0.0)
    yield FAMILIES.sample(SCRAPES.name, float(stats.scrapes))
    for collector, success, seconds in stats.collectors:
        for name in PEER_COLLECTORS.get(collector, ()):
            labels = {"collector": name}
            yield FAMILIES.sample(COLLECTOR_DURATION.name, seconds, labels)
            yield FAMILIES.sample(COLLECTOR_SUCCESS.name, 1.0 if success else 0.0, labels)


def _merged() -> dict[str, Translate]:
    """One translation per collector: the helpers' in turn (two helpers may map one
    collector)."""
    by_collector: dict[str, list[Translate]] = {}
    for part in _PARTS:
        for collector, translate in part.TRANSLATE.items():
            by_collector.setdefault(collector, []).append(translate)

    def chain(translations: list[Translate]) -> Translate:
        def run(facts: object) -> Iterator[Sample]:
            for translate in translations:
                yield from translate(facts)
        return run

    return {c: t[0] if len(t) == 1 else chain(t) for c, t in by_collector.items()}


TRANSLATE = _merged()


def server_label(target: Target) -> Mapping[str, str]:
    """postgres_exporter's `server` label: the DSN's host:port as written, localhost and
    5432 when it names none (its parseFingerprint)."""
    try:
        params = parse_dsn(target.dsn)
    except ConfigError:
        return {"server": "localhost:5432"}
    return {"server": f"{params.host or 'localhost'}:{params.port or 5432}"}


def _collectors(translate: Iterable[str]) -> tuple[str, ...]:
    """The collectors behind the peer's default set: the opt-in ones left out."""
    return tuple(sorted(c for c in translate if c not in OPT_IN))


DIALECT = Dialect(
    name="postgres_exporter", kind="postgres",
    help="postgres_exporter's pg_* names, labels and values",
    up=UP, families=FAMILIES, translate=TRANSLATE, collectors=_collectors(TRANSLATE),
    target_labels=server_label, self_samples=self_samples,
)
