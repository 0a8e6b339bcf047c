"""postgres_settings: the numeric server settings, in base units.

Like postgres_exporter's pg_settings collector, every numeric setting by default (an alert
on any of them needs no change to dbgauge); the option `settings: curated` keeps an
allow-list instead (`SETTINGS`: memory, connections, autovacuum, checkpoints, WAL,
timeouts, planner costs), a smaller and steadier series set. Each becomes its own family,
`dbgauge_postgres_settings_<name>`, with `_bytes` for memory settings (8kB pages, kB and MB
converted) and `_seconds` for durations (ms, s and min converted); booleans are 1/0. A
name that would end in a suffix Prometheus reserves (`tcp_keepalives_count`) gets `_value`
appended. PostgreSQL's -1 ("disabled" or "use the other setting") is kept as -1,
unconverted. A setting this server version does not have gives no series, nor does one
that dbgauge's own connection overrides (source `client`: connection options), since that
value is not the server's. `parse_unit` and `setting_value` are pure and unit-tested.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import flag, number, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Option, Sample

PREFIX = "dbgauge_postgres_settings_"
METRICS = MetricTable()  # every family is named at run time, one per setting

# The default allow-list, grouped as the README lists them.
SETTINGS: tuple[str, ...] = (
    # memory
    "shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem",
    "autovacuum_work_mem", "temp_buffers", "wal_buffers", "logical_decoding_work_mem",
    "temp_file_limit", "huge_page_size",
    # connections and workers
    "max_connections", "superuser_reserved_connections", "reserved_connections",
    "max_prepared_transactions",
    "max_locks_per_transaction", "max_worker_processes", "max_parallel_workers",
    "max_parallel_workers_per_gather", "max_parallel_maintenance_workers",
    # autovacuum and vacuum
    "autovacuum", "autovacuum_max_workers", "autovacuum_naptime",
    "autovacuum_vacuum_threshold", "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_insert_threshold", "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_analyze_threshold", "autovacuum_analyze_scale_factor",
    "autovacuum_vacuum_cost_delay", "autovacuum_vacuum_cost_limit",
    "autovacuum_freeze_max_age", "autovacuum_multixact_freeze_max_age",
    "vacuum_cost_delay", "vacuum_cost_limit", "vacuum_freeze_min_age",
    "vacuum_freeze_table_age",
    # checkpoints and WAL
    "checkpoint_timeout", "checkpoint_completion_target", "checkpoint_warning",
    "max_wal_size", "min_wal_size", "wal_keep_size", "max_slot_wal_keep_size",
    "wal_segment_size", "wal_writer_delay", "fsync", "full_page_writes", "wal_log_hints",
    "archive_timeout", "max_wal_senders", "max_replication_slots",
    "wal_sender_timeout", "wal_receiver_timeout", "hot_standby", "hot_standby_feedback",
    "max_standby_streaming_delay", "max_standby_archive_delay",
    # timeouts and logging thresholds (statement_timeout, lock_timeout and
    # idle_in_transaction_session_timeout are not here: dbgauge sets its own at connect)
    "idle_session_timeout", "deadlock_timeout", "authentication_timeout",
    "log_min_duration_statement", "log_autovacuum_min_duration",
    # planner and I/O
    "random_page_cost", "seq_page_cost", "effective_io_concurrency",
    "default_statistics_target", "track_io_timing",
)

Base = Literal["bytes", "seconds", ""]
_UNIT = re.compile(r"^\s*(\d+)?\s*(B|kB|MB|GB|TB|us|ms|s|min|h|d)\s*$")
_SCALE: Mapping[str, tuple[float, Base]] = {
    "B": (1.0, "bytes"), "kB": (1024.0, "bytes"), "MB": (1024.0 ** 2, "bytes"),
    "GB": (1024.0 ** 3, "bytes"), "TB": (1024.0 ** 4, "bytes"),
    "us": (1e-6, "seconds"), "ms": (1e-3, "seconds"), "s": (1.0, "seconds"),
    "min": (60.0, "seconds"), "h": (3600.0, "seconds"), "d": (86400.0, "seconds"),
}


def parse_unit(unit: str | None) -> tuple[float, Base] | None:
    """pg_settings.unit -> (factor to base units, base): '8kB' -> (8192, 'bytes'),
    'min' -> (60, 'seconds'), no unit -> (1, ''); None for a unit dbgauge does not know
    (better no series than a wrong one)."""
    if unit is None or not unit.strip():
        return 1.0, ""
    m = _UNIT.match(unit)
    if not m:
        return None
    factor, base = _SCALE[m.group(2)]
    return factor * int(m.group(1) or 1), base


def setting_value(setting: str, vartype: str, unit: str | None) -> tuple[float, Base] | None:
    """One pg_settings row's value in base units and that base; None when it is not
    numeric or its unit is unknown. -1 stays -1 (PostgreSQL's 'disabled' marker)."""
    if vartype == "bool":
        on = flag(setting)
        return None if on is None else (float(on), "")
    if vartype not in ("integer", "real"):
        return None
    raw, scale = number(setting), parse_unit(unit)
    if raw is None or scale is None:
        return None
    factor, base = scale
    return (raw, base) if raw < 0 else (raw * factor, base)


@dataclass(frozen=True)
class Setting:
    """One numeric setting, converted (`raw` is the value in PostgreSQL's `unit`)."""

    name: str
    value: float
    base: Base
    unit: str  # as PostgreSQL reports it, for HELP ('' if none)
    vartype: str  # bool, integer, real
    raw: float = 0.0
    description: str = ""  # pg_settings.short_desc


@dataclass(frozen=True)
class PgSettingsFacts:
    settings: tuple[Setting, ...]


def parse_settings(rows: Iterable[Row]) -> tuple[Setting, ...]:
    """`settings` rows (name, setting, vartype, unit) -> Setting; unknown types or units
    are left out."""
    out = []
    for row in rows:
        unit = text(row.get("unit")) or None
        got = setting_value(text(row.get("setting")), text(row.get("vartype")), unit)
        if got is not None:
            raw = got[0] if text(row.get("vartype")) == "bool" else number(row.get("setting"))
            out.append(Setting(text(row.get("name")), got[0], got[1], unit or "",
                               text(row.get("vartype")), raw or 0.0,
                               text(row.get("short_desc"))))
    return tuple(out)


# Suffixes Prometheus reserves for histograms, summaries, counters and info metrics.
_RESERVED = ("_count", "_sum", "_bucket", "_total", "_created", "_info")
_PLURAL = {"summary": "summaries", "histogram": "histograms", "counter": "counters",
           "gauge": "gauges"}


def setting_spec(setting: Setting) -> MetricSpec:
    """The run-time family of one setting (its HELP depends only on name and unit, so
    every target of one version agrees)."""
    safe = re.sub(r"[^a-z0-9_]", "_", setting.name.lower())
    # a metric type as a word of the name is refused by promtool's lint (17's
    # wal_summary_keep_time): the plural says the same and is not the type
    safe = re.sub(r"(?:^|(?<=_))(summary|histogram|counter|gauge)(?=_|$)",
                  lambda m: _PLURAL[m.group(1)], safe)
    name = PREFIX + safe + (f"_{setting.base}" if setting.base else "")
    if name.endswith(_RESERVED):  # tcp_keepalives_count: not a summary's _count
        name += "_value"
    if setting.vartype == "bool":
        how = "1 for on, 0 for off"
    elif setting.base:
        how = (f"converted from {setting.unit} to {setting.base}; -1 kept as PostgreSQL's "
               f"'disabled' marker")
    else:
        how = "as PostgreSQL reports it"
    return MetricSpec(name, "gauge", f"Server setting {setting.name} (pg_settings; {how}).")


def settings_samples(facts: PgSettingsFacts) -> Iterator[Sample]:
    for setting in facts.settings:
        spec = setting_spec(setting)
        yield Sample(spec.name, setting.value, {}, spec)


CHOICE = Option("all", "Which numeric settings to export: all (as postgres_exporter does), "
                "or curated (dbgauge's allow-list of the ones a DBA graphs).")
CHOICES = ("all", "curated")


def select(settings: Iterable[Setting], choice: str) -> tuple[Setting, ...]:
    """Every setting, or the allow-listed ones for `curated`."""
    if choice == "curated":
        allowed = frozenset(SETTINGS)
        return tuple(s for s in settings if s.name in allowed)
    return tuple(settings)


class PostgresSettings(Collector[PgSettingsFacts]):
    name = "postgres_settings"
    refresh = 60  # slow-changing (and, for fleets, the costly part): see Collector.refresh
    help = ("Numeric pg_settings in base units, one family per setting: all of them, or "
            "an allow-list with the option settings: curated.")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS
    dynamic_prefixes = (PREFIX,)
    options = {"settings": CHOICE}

    def check_options(self, given: Mapping[str, object]) -> dict[str, int | str]:
        checked = super().check_options(given)
        if checked.get("settings", "all") not in CHOICES:
            raise ValueError(f"{self.name}.settings: use one of {', '.join(CHOICES)}")
        return checked

    def read(self, conn: Connection) -> PgSettingsFacts:
        return PgSettingsFacts(select(parse_settings(conn.query("settings")),
                                      str(self.setting("settings"))))

    def samples(self, facts: PgSettingsFacts) -> Iterable[Sample]:
        return settings_samples(facts)
