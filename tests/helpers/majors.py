"""Which PostgreSQL majors have which dbgauge families (and which postgres_exporter
spellings): one table for the matrix battery and for the suite's tests that `make
test-matrix PG=N` runs on another major."""

from __future__ import annotations

P = "dbgauge_postgres_"
# Families that exist only on some majors: (first, last) major that has them.
FAMILY_MAJORS: dict[str, tuple[int, int]] = {
    **{P + f: (14, 18) for f in (  # pg_stat_wal, pg_stat_database's session statistics
        "wal_buffers_full_total", "wal_bytes_total", "wal_fpi_total", "wal_records_total",
        "database_active_seconds_total", "database_idle_in_transaction_seconds_total",
        "database_session_seconds_total", "database_sessions_abandoned_total",
        "database_sessions_fatal_total", "database_sessions_killed_total",
        "database_sessions_total")},
    # NULL without data checksums, which initdb turns on by default from 18 on
    P + "database_checksum_failures_total": (18, 18),
    P + "table_tuples_newpage_updated_total": (16, 18),  # pg_stat_user_tables.n_tup_newpage_upd
    P + "table_last_seq_scan_age_seconds": (16, 18),  # pg_stat_user_tables.last_seq_scan
    P + "table_last_index_scan_age_seconds": (16, 18),  # .last_idx_scan
    **{P + f"table_{f}_seconds_total": (18, 18)  # .total_vacuum_time, ...
       for f in ("vacuum", "autovacuum", "analyze", "autoanalyze")},
    **{P + f"io_{f}": (16, 18) for f in (  # pg_stat_io (the postgres_io collector)
        "reads_total", "writes_total", "writebacks_total", "extends_total", "hits_total",
        "evictions_total", "reuses_total", "fsyncs_total", "read_bytes_total",
        "write_bytes_total", "extend_bytes_total", "read_seconds_total", "write_seconds_total",
        "writeback_seconds_total", "extend_seconds_total", "fsync_seconds_total")},
    P + "reserved_connections": (16, 18),  # the reserved_connections setting
    **{P + f"restartpoints_{f}_total": (17, 18)  # pg_stat_checkpointer.restartpoints_*
       for f in ("timed", "requested", "done")},
    P + "buffers_backend_total": (13, 16),  # left pg_stat_bgwriter in 17 (for pg_stat_io)
    P + "buffers_backend_fsync_total": (13, 16),
}

# postgres_exporter's families (the `--compat postgres_exporter` spellings) that no version of
# the peer exports on every major: upstream reads pg_stat_database.active_time from 14 on, and
# pg_stat_bgwriter's checkpoint columns, gone in 17 (pg_stat_checkpointer has them), before.
PEER_FAMILY_MAJORS: dict[str, tuple[int, int]] = {
    "pg_stat_database_active_time_seconds_total": (14, 18),
    **{f"pg_stat_bgwriter_{column}{suffix}": (13, 16)
       for column in ("checkpoints_timed", "checkpoints_req", "checkpoint_write_time",
                      "checkpoint_sync_time", "buffers_checkpoint", "buffers_backend",
                      "buffers_backend_fsync")
       for suffix in ("", "_total")},
}


def on_major(family: str, major: int) -> bool:
    """Whether PostgreSQL `major` has `family`, dbgauge's or a peer's spelling (a family in
    neither table: every major)."""
    first, last = FAMILY_MAJORS.get(family) or PEER_FAMILY_MAJORS.get(family, (13, 18))
    return first <= major <= last
