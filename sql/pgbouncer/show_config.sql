-- Collector pgbouncer_config: every setting as (key, value, default, changeable).
SHOW CONFIG
