-- dbgauge checksum (checks/drift/recheck.py confirm), MariaDB 10.6+: key and row hash of
-- a list of keys, read on the source to confirm rows that differed. A locking read: it
-- waits for a transaction already writing one of these rows and reads the latest
-- committed values. A plain read would not see a transaction that binary log group commit
-- has already written (and a replica may already have applied) but not yet committed in
-- InnoDB, and the row would look, in two reads in a row, to differ while holding still.
-- The shared locks last for this statement only (autocommit); a row locked for more than
-- 2 s is being written and is read again later. Needs SELECT; writes nothing.
-- {placeholders} are filled by checks/drift/sql.py with catalog names (quote_ident) only;
-- every value is a bound %s parameter.
SET STATEMENT innodb_lock_wait_timeout = 2 FOR
SELECT {keys}, {row_hash} AS dbgauge_row_hash FROM {table} {index_hint} WHERE {where}
ORDER BY {keys} LOCK IN SHARE MODE
