-- Collector postgres_io, PostgreSQL 18+: pg_stat_io, one row per backend type, I/O object
-- (relation, temp relation, and wal since 18) and context (normal, vacuum, bulkread,
-- bulkwrite, init). A column is NULL where the operation cannot happen for that combination
-- (the collector leaves it out). 18 replaced op_bytes by read_bytes, write_bytes and
-- extend_bytes. Times are milliseconds and stay 0 unless timing is on: track_io_timing for
-- relations, track_wal_io_timing for WAL (io_timing says which applies to the row).
SELECT backend_type, object, context,
       reads, read_time, writes, write_time, writebacks, writeback_time,
       extends, extend_time, hits, evictions, reuses, fsyncs, fsync_time,
       read_bytes, write_bytes, extend_bytes,
       current_setting(CASE WHEN object = 'wal' THEN 'track_wal_io_timing'
                            ELSE 'track_io_timing' END)::bool AS io_timing
FROM pg_stat_io
ORDER BY backend_type, object, context
