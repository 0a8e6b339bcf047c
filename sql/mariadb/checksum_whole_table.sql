-- dbgauge checksum (checks/drift/), MariaDB 10.6+, both methods: the whole-table
-- pre-check. CHECKSUM TABLE hashes every row inside the server (no SQL expression per row:
-- a fifth to a third cheaper than the chunk statement); run on the source and each replica at
-- once, equal values prove equal tables and the chunk walk is skipped. Bounded by
-- max_statement_time (MariaDB interrupts CHECKSUM TABLE with it; MySQL's
-- max_execution_time covers SELECT only, which is why MySQL has no such template).
-- Needs SELECT on the table. {placeholders} are filled by checks/drift/sql.py with catalog
-- names (quote_ident) only; the time limit is a bound %s parameter.
SET STATEMENT max_statement_time = %s FOR CHECKSUM TABLE {table}
