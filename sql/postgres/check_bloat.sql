-- dbgauge check bloat (checks/health/bloat.py), PostgreSQL 13+: check_postgres' (2.25,
-- BSD licence) estimate of each table's and index's wasted bytes in the connected
-- database: the pages it has (relpages, as of the last VACUUM/ANALYZE) minus the pages
-- its rows should fill (reltuples x the average row width from pg_stats). An estimate,
-- as there: exact only after ANALYZE, and rough for indexes. pg_stats shows a column's
-- width only to a role that may SELECT it: `readable` says whether the role may (a table
-- it may not read is estimated at 2048 bytes a column, i.e. never bloated -- the check
-- does not judge such a table). 64-bit servers (ma 8) assumed, as every supported build.
WITH constants AS (
  SELECT current_setting('block_size')::numeric AS bs, 23 AS hdr, 8 AS ma
), widths AS (
  SELECT ns.nspname, tbl.relname, c.hdr, c.ma, c.bs,
         sum((1 - coalesce(s.null_frac, 0)) * coalesce(s.avg_width, 2048)) AS datawidth,
         max(coalesce(s.null_frac, 0)) AS maxfracsum,
         c.hdr + (SELECT 1 + count(*) / 8 FROM pg_stats s2
                  WHERE s2.null_frac <> 0 AND s2.schemaname = ns.nspname
                    AND s2.tablename = tbl.relname) AS nullhdr
  FROM pg_attribute att
  JOIN pg_class tbl ON att.attrelid = tbl.oid
  JOIN pg_namespace ns ON ns.oid = tbl.relnamespace
  LEFT JOIN pg_stats s ON s.schemaname = ns.nspname AND s.tablename = tbl.relname
                      AND s.inherited = false AND s.attname = att.attname
  CROSS JOIN constants c
  WHERE att.attnum > 0 AND tbl.relkind = 'r'
  GROUP BY 1, 2, 3, 4, 5
), rs AS (
  SELECT ma, bs, nspname, relname,
         (datawidth + (hdr + ma - (CASE WHEN hdr % ma = 0 THEN ma ELSE hdr % ma END)))::numeric
           AS datahdr,
         (maxfracsum * (nullhdr + ma - (CASE WHEN nullhdr % ma = 0 THEN ma ELSE nullhdr % ma END)))
           AS nullhdr2
  FROM widths
), sml AS (
  SELECT nn.nspname AS schemaname, cc.relname AS tablename,
         has_table_privilege(cc.oid, 'SELECT') AS readable,
         coalesce(cc.relpages, 0) AS relpages, coalesce(rs.bs, 0) AS bs,
         coalesce(ceil((cc.reltuples * ((rs.datahdr + rs.ma - (CASE WHEN rs.datahdr % rs.ma = 0
                  THEN rs.ma ELSE rs.datahdr % rs.ma END)) + rs.nullhdr2 + 4))
                  / (rs.bs - 20::float)), 0) AS otta,
         c2.relname AS iname, coalesce(c2.relpages, 0) AS ipages,
         coalesce(ceil((c2.reltuples * (rs.datahdr - 12)) / (rs.bs - 20::float)), 0) AS iotta
  FROM pg_class cc
  JOIN pg_namespace nn ON cc.relnamespace = nn.oid AND nn.nspname <> 'information_schema'
  LEFT JOIN rs ON cc.relname = rs.relname AND nn.nspname = rs.nspname
  LEFT JOIN pg_index i ON i.indrelid = cc.oid
  LEFT JOIN pg_class c2 ON c2.oid = i.indexrelid
  WHERE cc.relkind = 'r'
)
SELECT schemaname, tablename, readable, iname,
       CASE WHEN relpages < otta THEN 0 ELSE bs * (relpages - otta) END::float8 AS wasted_bytes,
       CASE WHEN ipages < iotta THEN 0 ELSE bs * (ipages - iotta) END::float8 AS index_wasted_bytes,
       -- check_postgres' bloat ratio (tbloat, ibloat: pages against the pages the rows
       -- should fill, to one decimal; 0.0 when either is 0 or they are equal), x100
       100 * round(CASE WHEN otta = 0 OR relpages = 0 OR relpages = otta THEN 0.0
                        ELSE relpages / otta::numeric END, 1)::float8 AS bloat_percent,
       100 * round(CASE WHEN iotta = 0 OR ipages = 0 OR ipages = iotta THEN 0.0
                        ELSE ipages / iotta::numeric END, 1)::float8 AS index_bloat_percent
FROM sml
ORDER BY schemaname, tablename, iname
