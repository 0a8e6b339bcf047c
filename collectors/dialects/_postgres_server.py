"""postgres_exporter's server-wide families: database sizes and pg_static, settings,
the background writer, checkpointer and archiver, and replication, from the facts of
postgres_server, postgres_settings, postgres_checkpoints and postgres_replication.

Debian's 0.11 names first (its built-in queries and collectors, with the `server` label);
upstream's collectors where their names differ (pg_replication_*, pg_postmaster_*,
pg_stat_checkpointer_*, pg_database_connection_limit, pg_roles_connection_limit, pg_wal_*,
pg_database_wraparound_*, pg_stat_progress_vacuum_*, the newer replication slot families);
the pre-0.10 spelling of
the background writer counters (without `_total`), which dashboards of that time still
query.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from dbgauge.collectors.postgres_checkpoints import PgCheckpointFacts
from dbgauge.collectors.postgres_replication import WAL_STATUSES, PgReplicationFacts
from dbgauge.collectors.postgres_server import PgServerFacts
from dbgauge.collectors.postgres_settings import PgSettingsFacts, Setting, parse_unit
from dbgauge.collectors.postgres_vacuum_progress import PHASES, PgVacuumProgressFacts
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec
from dbgauge.toolkit.metrics import MetricType, Sample

S = ("server",)
NAN = math.nan


def _nan(value: float | None) -> float:
    return NAN if value is None else value


def _seconds(value: float | None) -> float:
    """A timestamp as the peer reads it: whole Unix seconds, NULL NaN."""
    return NAN if value is None else float(math.floor(value))


def _spec(name: str, type_: MetricType, help_: str, labels: tuple[str, ...] = S) -> PeerSpec:
    return PeerSpec(name, type_, help_, labels)


# ------------------------------------------------------------------ postgres_server
SIZE = _spec("pg_database_size_bytes", "gauge", "Disk space used by the database",
             ("datname", "server"))
CONNECTION_LIMIT = _spec("pg_database_connection_limit", "gauge",
                         "Connection limit set for the database", ("datname",))
STATIC = _spec("pg_static", "untyped", "Version string as reported by postgres",
               ("server", "short_version", "version"))
START_TIME = _spec("pg_postmaster_start_time_seconds", "gauge",
                   "Time at which postmaster started", ())
ROLE_LIMIT = _spec("pg_roles_connection_limit", "gauge", "Connection limit set for the role",
                   ("rolname",))
XID_AGE = _spec("pg_database_wraparound_age_datfrozenxid_seconds", "gauge",
                "Age of the oldest transaction ID that has not been frozen.", ("datname",))
MXID_AGE = _spec("pg_database_wraparound_age_datminmxid_seconds", "gauge",
                 "Age of the oldest multi-transaction ID that has been replaced with a "
                 "transaction ID.", ("datname",))


def short_version(server_version: str) -> str:
    """server_version as the peer's semver: '15.20' -> '15.20.0', '16beta1' -> '16.0.0',
    '15.4 (Ubuntu 15.4-1)' -> '15.4.0'."""
    parts = [int(p) for p in re.findall(r"\d+", server_version.split(" ")[0])[:3]]
    if re.match(r"^\d+[a-z]", server_version):  # 16beta1: the beta number is no minor
        parts = parts[:1]
    return ".".join(str(p) for p in [*parts, 0, 0, 0][:3])


def server(facts: PgServerFacts) -> Iterator[Sample]:
    for db in facts.databases:
        if db.size_bytes is not None:
            yield FAMILIES.sample(SIZE.name, db.size_bytes, {"datname": db.name})
        if db.connection_limit is not None:
            yield FAMILIES.sample(CONNECTION_LIMIT.name, db.connection_limit,
                                  {"datname": db.name})
        if db.allow_connections:  # upstream's database_wraparound skips template0
            if db.xid_age is not None:
                yield FAMILIES.sample(XID_AGE.name, db.xid_age, {"datname": db.name})
            if db.mxid_age is not None:
                yield FAMILIES.sample(MXID_AGE.name, db.mxid_age, {"datname": db.name})
    for role, limit in facts.roles:
        yield FAMILIES.sample(ROLE_LIMIT.name, limit, {"rolname": role})
    if facts.version:
        yield FAMILIES.sample(STATIC.name, 1, {"version": facts.version,
                                               "short_version": short_version(
                                                   facts.server_version)})
    if facts.start_time is not None:
        yield FAMILIES.sample(START_TIME.name, facts.start_time)


# ------------------------------------------------------------------ postgres_settings
SETTINGS = _spec("pg_settings_*", "gauge", "Server setting (pg_settings; units converted to "
                 "bytes or seconds, -1 kept)")
_PEER_UNITS = frozenset({"ms", "s", "min", "h", "d", "B", "kB", "MB", "GB", "TB", "8kB",
                         "16kB", "32kB", "16MB", "32MB", "64MB"})


def setting_sample(setting: Setting) -> Sample | None:
    """One setting as 0.11 names and converts it (only -1 stays unconverted); None for a
    unit it does not know."""
    name = "pg_settings_" + setting.name.replace(".", "_")
    if setting.vartype == "bool":
        return FAMILIES.sample(name, setting.value)
    if setting.unit and setting.unit not in _PEER_UNITS:
        return None
    scale = parse_unit(setting.unit)
    if scale is None:
        return None
    factor, base = scale
    value = setting.raw if setting.raw == -1 else setting.raw * factor
    return FAMILIES.sample(f"{name}_{base}" if base else name, value)


def settings(facts: PgSettingsFacts) -> Iterator[Sample]:
    for setting in facts.settings:
        sample = setting_sample(setting)
        if sample is not None:
            yield sample


# ------------------------------------------------------------------ postgres_checkpoints
# pg_stat_bgwriter's columns as postgres_exporter names them; the first three only before
# PostgreSQL 17 (they moved to pg_stat_checkpointer), as do buffers_backend*.
_BGWRITER = ("checkpoints_timed", "checkpoints_req", "checkpoint_write_time",
             "checkpoint_sync_time", "buffers_checkpoint", "buffers_clean", "maxwritten_clean",
             "buffers_backend", "buffers_backend_fsync", "buffers_alloc")
_BGWRITER_17 = ("buffers_clean", "maxwritten_clean", "buffers_alloc")
# pg_stat_checkpointer (PostgreSQL 17+): peer name -> dbgauge's fact
_CHECKPOINTER = (("num_timed", "num_timed"), ("num_requested", "num_requested"),
                 ("restartpoints_timed", "restartpoints_timed"),
                 ("restartpoints_req", "restartpoints_req"),
                 ("restartpoints_done", "restartpoints_done"),
                 ("write_time", "checkpoint_write_time"), ("sync_time", "checkpoint_sync_time"),
                 ("buffers_written", "buffers_checkpoint"))
ARCHIVED = _spec("pg_stat_archiver_archived_count", "counter",
                 "Number of WAL files that have been successfully archived")
FAILED = _spec("pg_stat_archiver_failed_count", "counter",
               "Number of failed attempts for archiving WAL files")
ARCHIVE_AGE = _spec("pg_stat_archiver_last_archive_age", "gauge",
                    "Time in seconds since last WAL segment was successfully archived")
WAL_SEGMENTS = _spec("pg_wal_segments", "gauge", "Number of WAL segments", ())
WAL_SIZE = _spec("pg_wal_size_bytes", "gauge", "Total size of WAL segments", ())


def checkpoints(facts: PgCheckpointFacts) -> Iterator[Sample]:
    sample = FAMILIES.sample
    columns = _BGWRITER_17 if facts.checkpointer_view else _BGWRITER
    for column in columns:
        value = facts.counters.get(column)
        if value is not None:
            yield sample(f"pg_stat_bgwriter_{column}_total", value)
            yield sample(f"pg_stat_bgwriter_{column}", value)
    reset = facts.extra.get("bgwriter_stats_reset")
    yield sample("pg_stat_bgwriter_stats_reset_total", _seconds(reset))
    yield sample("pg_stat_bgwriter_stats_reset", _seconds(reset))
    if facts.checkpointer_view:
        for name, column in _CHECKPOINTER:
            value = facts.counters.get(column, facts.extra.get(column))
            if value is not None:
                yield sample(f"pg_stat_checkpointer_{name}_total", value)
        yield sample("pg_stat_checkpointer_stats_reset_total",
                     _seconds(facts.extra.get("checkpointer_stats_reset")))
    yield sample(ARCHIVED.name, facts.counters.get("archived_count", NAN))
    yield sample(FAILED.name, facts.counters.get("failed_count", NAN))
    yield sample(ARCHIVE_AGE.name, _nan(facts.last_archived_age))
    if facts.wal_segments is not None:
        yield sample(WAL_SEGMENTS.name, facts.wal_segments)
    if facts.wal_size_bytes is not None:
        yield sample(WAL_SIZE.name, facts.wal_size_bytes)


# ------------------------------------------------------------------ postgres_replication
_STANDBY = ("application_name", "client_addr", "state", "slot_name", "server")
CURRENT_LSN = _spec("pg_stat_replication_pg_current_wal_lsn_bytes", "gauge",
                    "WAL position in bytes", _STANDBY)
LSN_DIFF = _spec("pg_stat_replication_pg_wal_lsn_diff", "gauge",
                 "Lag in bytes between master and slave", _STANDBY)
REPLY_TIME = _spec("pg_stat_replication_reply_time", "untyped",
                   "Unknown metric from pg_stat_replication", _STANDBY)
_SLOT = ("slot_name", "database", "server")
SLOT_ACTIVE = _spec("pg_replication_slots_active", "gauge",
                    "Flag indicating if the slot is active", _SLOT)
SLOT_DIFF = _spec("pg_replication_slots_pg_wal_lsn_diff", "gauge", "Replication lag in bytes",
                  _SLOT)
SLOT_IS_ACTIVE = _spec("pg_replication_slots_slot_is_active", "gauge",
                       "whether the replication slot is active", ("slot_name", "slot_type"))
SLOT_SAFE = _spec("pg_replication_slots_safe_wal_size_bytes", "gauge",
                  "number of bytes that can be written to WAL such that this slot is not in "
                  "danger of getting in state lost", ("slot_name", "slot_type"))
SLOT_CURRENT = _spec("pg_replication_slots_slot_current_wal_lsn", "gauge",
                     "current wal lsn value", ("slot_name", "slot_type"))
SLOT_FLUSH = _spec("pg_replication_slots_slot_confirmed_flush_lsn", "gauge",
                   "last lsn confirmed flushed to the replication slot",
                   ("slot_name", "slot_type"))
SLOT_STATUS = _spec("pg_replication_slots_wal_status", "gauge",
                    "availability of WAL files claimed by this slot",
                    ("slot_name", "slot_type", "wal_status"))
LAG_SECONDS = _spec("pg_replication_lag_seconds", "gauge",
                    "Replication lag behind master in seconds", ())
LAG = _spec("pg_replication_lag", "gauge", "Replication lag behind master in seconds")
IS_REPLICA = _spec("pg_replication_is_replica", "gauge",
                   "Indicates if the server is a replica", ())
LAST_REPLAY = _spec("pg_replication_last_replay_seconds", "gauge",
                    "Age of last replay in seconds", ())


def _lag(facts: PgReplicationFacts) -> float:
    """dbgauge's replay lag (0 when everything received is replayed); without a WAL
    receiver position, the age of the last replayed commit, as the peer computes it."""
    local = facts.local
    if not local.in_recovery:
        return 0.0
    return local.replay_lag_seconds if local.replay_lag_seconds is not None \
        else local.last_replay_age_seconds


def replication(facts: PgReplicationFacts) -> Iterator[Sample]:
    sample = FAMILIES.sample
    lag = _lag(facts)
    yield sample(LAG_SECONDS.name, lag)
    yield sample(LAG.name, lag)
    yield sample(IS_REPLICA.name, 1.0 if facts.local.in_recovery else 0.0)
    yield sample(LAST_REPLAY.name, facts.local.last_replay_age_seconds)
    for s in facts.standbys:
        # 0.11 fills slot_name, a column pg_stat_replication lacks, with the row's first
        # column: the walsender's pid.
        labels = {"application_name": s.application_name, "client_addr": s.client_addr,
                  "state": s.state, "slot_name": s.pid}
        if s.current_lsn_bytes is not None or s.replay_diff_bytes is not None:
            yield sample(CURRENT_LSN.name, _nan(s.current_lsn_bytes), labels)
            yield sample(LSN_DIFF.name, _nan(s.replay_diff_bytes), labels)
        yield sample(REPLY_TIME.name, _seconds(s.reply_time), labels)
    for slot in facts.slots:
        labels = {"slot_name": slot.slot_name, "database": slot.database}
        yield sample(SLOT_ACTIVE.name, 1.0 if slot.active else 0.0, labels)
        yield sample(SLOT_DIFF.name, _nan(slot.retained_bytes), labels)
        typed = {"slot_name": slot.slot_name, "slot_type": slot.slot_type}
        if slot.current_lsn_bytes is not None:
            yield sample(SLOT_CURRENT.name, slot.current_lsn_bytes, typed)
        if slot.active and slot.confirmed_flush_lsn_bytes is not None:
            yield sample(SLOT_FLUSH.name, slot.confirmed_flush_lsn_bytes, typed)
        yield sample(SLOT_IS_ACTIVE.name, 1.0 if slot.active else 0.0, typed)
        if slot.safe_wal_size is not None:
            yield sample(SLOT_SAFE.name, slot.safe_wal_size, typed)
        if slot.wal_status in WAL_STATUSES:
            yield sample(SLOT_STATUS.name, 1.0, {**typed, "wal_status": slot.wal_status})


# ------------------------------------------------------------------ postgres_vacuum_progress
_VACUUM = ("datname", "relname")
VACUUM_PHASE = _spec("pg_stat_progress_vacuum_phase", "gauge",
                     "Current vacuum phase (1 = active, 0 = inactive). Label 'phase' is "
                     "human-readable.", (*_VACUUM, "phase"))
# peer family -> the facts' column, before PostgreSQL 17 and from 17 (upstream reads the
# progress parameters by position, which 17 reassigned to byte sizes)
_VACUUM_COLUMNS = (
    ("heap_blks", "heap_blks_total", "heap_blks_total"),
    ("heap_blks_scanned", "heap_blks_scanned", "heap_blks_scanned"),
    ("heap_blks_vacuumed", "heap_blks_vacuumed", "heap_blks_vacuumed"),
    ("index_vacuums", "index_vacuum_count", "index_vacuum_count"),
    ("max_dead_tuples", "max_dead_tuples", "max_dead_tuple_bytes"),
    ("num_dead_tuples", "dead_tuples", "dead_tuple_bytes"),
)


def vacuum_progress(facts: PgVacuumProgressFacts) -> Iterator[Sample]:
    """Per running vacuum, every phase (1 for the current one) and its counters, NULL as
    0, as upstream's stat_progress_vacuum collector."""
    for vacuum in facts.vacuums:
        labels = {"datname": vacuum.database or "unknown", "relname": vacuum.table or "unknown"}
        for phase in PHASES:
            yield FAMILIES.sample(VACUUM_PHASE.name, 1.0 if phase == vacuum.phase else 0.0,
                                  {**labels, "phase": phase})
        v17 = "dead_tuple_bytes" in vacuum.values or "max_dead_tuple_bytes" in vacuum.values
        for name, before, since in _VACUUM_COLUMNS:
            yield FAMILIES.sample(f"pg_stat_progress_vacuum_{name}",
                                  vacuum.values.get(since if v17 else before, 0.0), labels)


def _bgwriter_families() -> Iterator[PeerFamily]:
    ours = {"checkpoints_timed": "checkpoints_timed_total",
            "checkpoints_req": "checkpoints_requested_total",
            "checkpoint_write_time": "checkpoint_write_seconds_total",
            "checkpoint_sync_time": "checkpoint_sync_seconds_total",
            "buffers_checkpoint": "checkpoint_buffers_written_total",
            "buffers_clean": "bgwriter_buffers_clean_total",
            "maxwritten_clean": "bgwriter_maxwritten_clean_total",
            "buffers_backend": "buffers_backend_total",
            "buffers_backend_fsync": "buffers_backend_fsync_total",
            "buffers_alloc": "buffers_alloc_total",
            "restartpoints_timed": "restartpoints_timed_total",
            "restartpoints_req": "restartpoints_requested_total",
            "restartpoints_done": "restartpoints_done_total",
            "num_timed": "checkpoints_timed_total",
            "num_requested": "checkpoints_requested_total"}
    for column in _BGWRITER:
        mine = "dbgauge_postgres_" + ours[column]
        note = "milliseconds in the peer's series" if column.endswith("_time") else ""
        yield PeerFamily(_spec(f"pg_stat_bgwriter_{column}_total", "counter",
                               f"pg_stat_bgwriter.{column}"), mine, note)
        yield PeerFamily(_spec(f"pg_stat_bgwriter_{column}", "counter",
                               f"pg_stat_bgwriter.{column} (before postgres_exporter 0.10)"),
                         mine, note)
    for name in ("pg_stat_bgwriter_stats_reset_total", "pg_stat_bgwriter_stats_reset"):
        yield PeerFamily(_spec(name, "counter", "Time at which these statistics were last "
                                                "reset"))
    for name, column in _CHECKPOINTER:
        mine = "dbgauge_postgres_" + ours[column] if column in ours else ""
        note = "dbgauge's counts a standby's restartpoints too, as before 17" \
            if name.startswith("num_") else ""
        yield PeerFamily(_spec(f"pg_stat_checkpointer_{name}_total", "counter",
                               f"pg_stat_checkpointer.{name} (PostgreSQL 17+)", ()), mine, note)
    yield PeerFamily(_spec("pg_stat_checkpointer_stats_reset_total", "counter",
                           "Time at which these statistics were last reset", ()))


def _vacuum_families() -> Iterator[PeerFamily]:
    yield PeerFamily(VACUUM_PHASE, "dbgauge_postgres_vacuum_phase")
    ours = {"heap_blks": "heap_blocks", "heap_blks_scanned": "heap_blocks_scanned",
            "heap_blks_vacuumed": "heap_blocks_vacuumed", "index_vacuums": "index_passes",
            "max_dead_tuples": "max_dead_tuples", "num_dead_tuples": "dead_tuples"}
    for name, _, _ in _VACUUM_COLUMNS:
        yield PeerFamily(_spec(f"pg_stat_progress_vacuum_{name}", "gauge",
                               f"pg_stat_progress_vacuum: {name}", _VACUUM),
                         "dbgauge_postgres_vacuum_" + ours[name],
                         "bytes on PostgreSQL 17+, as upstream reads it"
                         if "dead" in name else "")


FAMILIES = PeerFamilies(
    *_vacuum_families(),
    PeerFamily(SIZE, "dbgauge_postgres_database_size_bytes"),
    PeerFamily(CONNECTION_LIMIT),
    PeerFamily(STATIC, "dbgauge_target_info"),
    PeerFamily(START_TIME, "dbgauge_postgres_start_time_seconds"),
    PeerFamily(ROLE_LIMIT, "dbgauge_postgres_role_connection_limit"),
    PeerFamily(XID_AGE, "dbgauge_postgres_database_xid_age",
               "a count of transactions, despite the peer's _seconds"),
    PeerFamily(MXID_AGE, "dbgauge_postgres_database_mxid_age",
               "a count of multixacts, despite the peer's _seconds"),
    PeerFamily(SETTINGS, "dbgauge_postgres_settings_*",
               "dbgauge leaves out the three timeouts its own session sets"),
    *_bgwriter_families(),
    PeerFamily(ARCHIVED, "dbgauge_postgres_archiver_archived_total"),
    PeerFamily(FAILED, "dbgauge_postgres_archiver_failed_total"),
    PeerFamily(ARCHIVE_AGE, "dbgauge_postgres_archiver_last_archived_age_seconds"),
    PeerFamily(WAL_SEGMENTS, "dbgauge_postgres_wal_segments"),
    PeerFamily(WAL_SIZE, "dbgauge_postgres_wal_size_bytes"),
    PeerFamily(CURRENT_LSN), PeerFamily(LSN_DIFF, "dbgauge_postgres_replication_standby_"
                                                  "replay_lag_bytes"),
    PeerFamily(REPLY_TIME),
    PeerFamily(SLOT_ACTIVE, "dbgauge_postgres_replication_slot_active"),
    PeerFamily(SLOT_DIFF, "dbgauge_postgres_replication_slot_retained_wal_bytes"),
    PeerFamily(SLOT_IS_ACTIVE, "dbgauge_postgres_replication_slot_active"),
    PeerFamily(SLOT_SAFE, "dbgauge_postgres_replication_slot_safe_wal_size_bytes"),
    PeerFamily(SLOT_CURRENT), PeerFamily(SLOT_FLUSH),
    PeerFamily(SLOT_STATUS, "dbgauge_postgres_replication_slot_wal_status",
               "only the current status, as the peer"),
    PeerFamily(LAG_SECONDS, "dbgauge_postgres_replication_lag_seconds"),
    PeerFamily(LAG, "dbgauge_postgres_replication_lag_seconds",
               "0 on a caught-up standby; the peer's query grows while the primary is idle"),
    PeerFamily(IS_REPLICA, "dbgauge_postgres_replication_in_recovery"),
    PeerFamily(LAST_REPLAY, "dbgauge_postgres_replication_last_replay_timestamp_seconds"),
)

TRANSLATE = {"postgres_server": server, "postgres_settings": settings,
             "postgres_checkpoints": checkpoints, "postgres_replication": replication,
             "postgres_vacuum_progress": vacuum_progress}
