-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+: TIMESTAMP values are
-- rendered in UTC on every side (the setting also travels with replicated statements).
SET SESSION time_zone = '+00:00'
