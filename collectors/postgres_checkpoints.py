"""postgres_checkpoints: checkpointer, background writer, WAL generation and archiver.

What a DBA graphs to see write pressure: timed versus requested checkpoints (many
requested ones mean max_wal_size is too small), how long checkpoints spend writing and
syncing, who writes dirty buffers (checkpointer, background writer, backends), WAL volume
and full-page images, and whether WAL archiving keeps up (failures, age of the last
success). One statement per server version: PostgreSQL 14 added pg_stat_wal, PostgreSQL 17
moved the checkpoint columns to pg_stat_checkpointer and dropped buffers_backend and
buffers_backend_fsync (their series are absent there). The archiver ages are absent until
something was archived or failed; `dbgauge_postgres_archiver_enabled` says whether
archiving is on at all. PostgreSQL 17 counts a standby's restartpoints apart: they have
their own families there, and the checkpoint counts include them as before 17 (a
standby's do not stop at 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import number, numbers, text
from dbgauge.toolkit.metrics import (
    Collector,
    Column,
    MetricSpec,
    MetricTable,
    Sample,
    column_samples,
    present,
)

_P = "dbgauge_postgres_"
_CK = "pg_stat_bgwriter, pg_stat_checkpointer from PostgreSQL 17"


def _c(name: str, column: str, what: str, scale: float = 1.0) -> Column:
    """A counter from a column of the statement, scaled to base units."""
    return Column(MetricSpec(_P + name, "counter", what, ()), column, scale)


LAST_ARCHIVED_AGE = MetricSpec(
    _P + "archiver_last_archived_age_seconds", "gauge",
    "Seconds since the last WAL file was archived (now - pg_stat_archiver.last_archived_time); "
    "absent if none ever was.")
LAST_FAILED_AGE = MetricSpec(
    _P + "archiver_last_failed_age_seconds", "gauge",
    "Seconds since archiving last failed (now - pg_stat_archiver.last_failed_time); absent if "
    "it never failed.")
WAL_SEGMENTS = MetricSpec(
    _P + "wal_segments", "gauge",
    "WAL segment files in pg_wal (pg_ls_waldir): what archiving, wal_keep_size, "
    "max_wal_size and replication slots keep there.")
WAL_SIZE = MetricSpec(_P + "wal_size_bytes", "gauge",
                      "Total size of the WAL segment files in pg_wal (pg_ls_waldir).")
ARCHIVER_ENABLED = MetricSpec(
    _P + "archiver_enabled", "gauge",
    "1 if WAL archiving is on (archive_mode on, or always), else 0: without it the "
    "archiver series stay at 0.")
METRICS = MetricTable(
    _c("checkpoints_timed_total", "checkpoints_timed",
       "Checkpoints started because checkpoint_timeout elapsed (skipped idle ones "
       "included), a standby's restartpoints included (pg_stat_bgwriter.checkpoints_timed; "
       "from PostgreSQL 17 pg_stat_checkpointer.num_timed + restartpoints_timed)."),
    _c("checkpoints_requested_total", "checkpoints_req",
       "Checkpoints requested (WAL reached max_wal_size, CHECKPOINT, shutdown...); many of "
       "them mean max_wal_size is too small; a standby's restartpoints included "
       "(pg_stat_bgwriter.checkpoints_req; from PostgreSQL 17 pg_stat_checkpointer."
       "num_requested + restartpoints_req)."),
    _c("restartpoints_timed_total", "restartpoints_timed",
       "Restartpoints (a standby's checkpoints) scheduled because checkpoint_timeout elapsed "
       "(pg_stat_checkpointer.restartpoints_timed; PostgreSQL 17+)."),
    _c("restartpoints_requested_total", "restartpoints_req",
       "Restartpoints requested (max_wal_size reached, CHECKPOINT on the standby...) "
       "(pg_stat_checkpointer.restartpoints_req; PostgreSQL 17+)."),
    _c("restartpoints_done_total", "restartpoints_done",
       "Restartpoints performed: a scheduled or requested one is skipped when no new "
       "checkpoint record was replayed since the last (pg_stat_checkpointer."
       "restartpoints_done; PostgreSQL 17+)."),
    _c("checkpoint_write_seconds_total", "checkpoint_write_time",
       f"Time checkpoints spent writing dirty buffers to the OS ({_CK}.write_time).", 0.001),
    _c("checkpoint_sync_seconds_total", "checkpoint_sync_time",
       f"Time checkpoints spent waiting for fsync of written files ({_CK}.sync_time).",
       0.001),
    _c("checkpoint_buffers_written_total", "buffers_checkpoint",
       f"Buffers written by checkpoints ({_CK}.buffers_written)."),
    _c("bgwriter_buffers_clean_total", "buffers_clean",
       "Buffers written by the background writer (pg_stat_bgwriter.buffers_clean)."),
    _c("bgwriter_maxwritten_clean_total", "maxwritten_clean",
       "Times the background writer stopped a round because it hit bgwriter_lru_maxpages "
       "(pg_stat_bgwriter.maxwritten_clean)."),
    _c("buffers_backend_total", "buffers_backend",
       "Buffers written directly by backends because no clean buffer was free "
       "(pg_stat_bgwriter.buffers_backend; PostgreSQL 16 and older, see pg_stat_io after)."),
    _c("buffers_backend_fsync_total", "buffers_backend_fsync",
       "Times a backend had to fsync itself (pg_stat_bgwriter.buffers_backend_fsync; "
       "PostgreSQL 16 and older)."),
    _c("buffers_alloc_total", "buffers_alloc",
       "Buffers allocated (pg_stat_bgwriter.buffers_alloc)."),
    _c("wal_records_total", "wal_records",
       "WAL records generated (pg_stat_wal.wal_records; PostgreSQL 14+)."),
    _c("wal_fpi_total", "wal_fpi",
       "WAL full-page images generated; they swell WAL after each checkpoint "
       "(pg_stat_wal.wal_fpi; PostgreSQL 14+)."),
    _c("wal_bytes_total", "wal_bytes",
       "WAL generated, in bytes (pg_stat_wal.wal_bytes; PostgreSQL 14+)."),
    _c("wal_buffers_full_total", "wal_buffers_full",
       "Times WAL was written out because wal_buffers was full; growing means wal_buffers is "
       "too small (pg_stat_wal.wal_buffers_full; PostgreSQL 14+)."),
    _c("archiver_archived_total", "archived_count",
       "WAL files archived successfully (pg_stat_archiver.archived_count)."),
    _c("archiver_failed_total", "failed_count",
       "Failed attempts to archive a WAL file; each is retried, and WAL piles up in pg_wal "
       "meanwhile (pg_stat_archiver.failed_count)."),
    LAST_ARCHIVED_AGE, LAST_FAILED_AGE, ARCHIVER_ENABLED, WAL_SEGMENTS, WAL_SIZE,
)


@dataclass(frozen=True)
class PgCheckpointFacts:
    """The one `checkpoints` row: counters by column (as PostgreSQL reports them, times in
    milliseconds; columns this version lacks or reports NULL are left out), archiver ages
    and archive_mode."""

    counters: Mapping[str, float]
    last_archived_age: float | None
    last_failed_age: float | None
    archive_mode: str  # off, on, always
    # What dbgauge's families do not show, for the dialects: num_timed and num_requested
    # (PostgreSQL 17+, without restartpoints), bgwriter_stats_reset and
    # checkpointer_stats_reset (Unix seconds, None if never).
    extra: Mapping[str, float | None] = field(default_factory=dict)
    checkpointer_view: bool = False  # PostgreSQL 17+: checkpoints from pg_stat_checkpointer
    wal_segments: float | None = None  # segment files in pg_wal (None: not read)
    wal_size_bytes: float | None = None


def age(value: object) -> float | None:
    """A server-computed age in seconds, clamped at 0 (now() is the statement's start, a
    hair before an event that happened meanwhile); None for NULL (never happened)."""
    seconds = number(value)
    return None if seconds is None else max(0.0, seconds)


EXTRA_COLUMNS = ("num_timed", "num_requested", "bgwriter_stats_reset",
                 "checkpointer_stats_reset")


def parse_checkpoints(row: Row) -> PgCheckpointFacts:
    """The `checkpoints` row -> PgCheckpointFacts."""
    return PgCheckpointFacts(
        numbers(row, METRICS.column_names),
        age(row.get("last_archived_age")), age(row.get("last_failed_age")),
        text(row.get("archive_mode")),
        {c: number(row.get(c)) for c in EXTRA_COLUMNS if c in row},
        "num_timed" in row)


def checkpoint_samples(facts: PgCheckpointFacts) -> Iterator[Sample]:
    """Counters in base units, then the archiver's ages and whether it is on."""
    yield from column_samples(METRICS.columns, facts.counters)
    yield from present(((LAST_ARCHIVED_AGE, facts.last_archived_age),
                        (LAST_FAILED_AGE, facts.last_failed_age)))
    yield Sample(ARCHIVER_ENABLED.name, 1.0 if facts.archive_mode in ("on", "always") else 0.0)
    yield from present(((WAL_SEGMENTS, facts.wal_segments), (WAL_SIZE, facts.wal_size_bytes)))


class PostgresCheckpoints(Collector[PgCheckpointFacts]):
    name = "postgres_checkpoints"
    help = ("Checkpoints (timed, requested, write and sync time, buffers), background writer "
            "and backend buffer writes, WAL volume (14+), WAL files in pg_wal, WAL archiving "
            "(archived, failed, age of the last of each).")
    kind = "postgres"
    flavors = frozenset({"postgres"})
    min_versions = {"postgres": (13,)}
    metrics = METRICS

    def read(self, conn: Connection) -> PgCheckpointFacts:
        wal = conn.query("wal_files")[0]
        return replace(parse_checkpoints(conn.query("checkpoints")[0]),
                       wal_segments=number(wal.get("wal_segments")),
                       wal_size_bytes=number(wal.get("wal_size_bytes")))

    def samples(self, facts: PgCheckpointFacts) -> Iterable[Sample]:
        return checkpoint_samples(facts)
