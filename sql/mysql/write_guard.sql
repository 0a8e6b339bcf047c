-- Write guard (toolkit/write_guard.py), MySQL 8.0/8.4: does the server refuse writes?
-- Run by every dbgauge writer before it writes. read_only stops accounts without
-- CONNECTION_ADMIN/SUPER; super_read_only stops every account.
SELECT @@GLOBAL.read_only AS read_only, @@GLOBAL.super_read_only AS super_read_only
