-- dbgauge checksum (checks/drift/), MariaDB 10.6+, whole-table pre-check: rows this session has
-- read by table scan. CHECKSUM TABLE scans the table once through the handler (one
-- ha_rnd_next per row, plus one that reports the end), so the difference of this counter
-- around it is the row count, without a second scan for COUNT(*). No privilege needed.
SHOW SESSION STATUS LIKE 'Handler_read_rnd_next'
