-- dbgauge checksum (checks/drift/), PostgreSQL 13+: the same text for the same value on
-- every side: timestamptz in UTC, shortest exact floats, hex bytea, ISO dates.
SELECT set_config('TimeZone', 'UTC', false), set_config('extra_float_digits', '1', false),
       set_config('bytea_output', 'hex', false), set_config('DateStyle', 'ISO, YMD', false),
       set_config('IntervalStyle', 'postgres', false)
