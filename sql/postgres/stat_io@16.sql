-- Collector postgres_io, PostgreSQL 16-17: pg_stat_io, one row per backend type, I/O object
-- (relation, temp relation) and context (normal, vacuum, bulkread, bulkwrite). A column is
-- NULL where the operation cannot happen for that combination (the collector leaves it
-- out). Times are milliseconds and stay 0 unless track_io_timing is on (io_timing says
-- whether they count). Reads, writes and extends are of op_bytes each (the block size):
-- their bytes are computed here, as PostgreSQL 18 reports them.
SELECT backend_type, object, context,
       reads, read_time, writes, write_time, writebacks, writeback_time,
       extends, extend_time, hits, evictions, reuses, fsyncs, fsync_time,
       reads * op_bytes AS read_bytes, writes * op_bytes AS write_bytes,
       extends * op_bytes AS extend_bytes,
       current_setting('track_io_timing')::bool AS io_timing
FROM pg_stat_io
ORDER BY backend_type, object, context
