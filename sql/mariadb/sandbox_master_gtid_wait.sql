-- Sandbox: wait (up to timeout s) until the replica has applied the primary's GTID position; 0 when it has.
SELECT MASTER_GTID_WAIT(%(pos)s, %(timeout)s) AS waited;
