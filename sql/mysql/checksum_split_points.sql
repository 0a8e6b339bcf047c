-- dbgauge checksum (checks/drift/), MySQL 8.0/8.4 and MariaDB 10.6+ (window functions): every n-th key of a
-- differing range, where bisection cuts it. Needs SELECT.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SELECT {keys} FROM (
  SELECT {keys}, ROW_NUMBER() OVER (ORDER BY {keys}) AS dbgauge_rn
  FROM {table} {index_hint} WHERE {where}
) AS dbgauge_s WHERE MOD(dbgauge_rn, %s) = 0 ORDER BY {keys}
