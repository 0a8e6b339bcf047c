-- dbgauge checksum (checks/drift/), PostgreSQL 13+: every n-th key of a differing range, where
-- bisection cuts it. Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys} FROM (
  SELECT {keys}, row_number() OVER (ORDER BY {keys}) AS dbgauge_rn
  FROM {table} WHERE {where}
) AS dbgauge_s WHERE mod(dbgauge_rn, %s) = 0 ORDER BY {keys}
