-- dbgauge checksum (checks/drift/replicate.py), MySQL 8.0/8.4 and MariaDB 10.6+: the
-- columns of the replicate table (dbgauge.checksums or --replicate DB.TBL), to tell
-- dbgauge's layout (source_*) from pt-table-checksum's (master_*) and refuse any other.
SELECT column_name AS name FROM information_schema.columns
WHERE table_schema = %s AND table_name = %s
