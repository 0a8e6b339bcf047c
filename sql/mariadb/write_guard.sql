-- Write guard (toolkit/write_guard.py), MariaDB 10.6+: does the server refuse writes?
-- Run by every dbgauge writer before it writes. MariaDB has no super_read_only: an account
-- with READ ONLY ADMIN (part of SUPER before 11.0.1) writes through read_only.
SELECT @@GLOBAL.read_only AS read_only
