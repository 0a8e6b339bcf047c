"""mysql_binlog: binary log sizes, NULL sizes, the newest file's number, and log_bin off."""

from __future__ import annotations

from dbgauge.collectors.mysql_binlog import MySQLBinlog
from tests.helpers.captured import FixtureConnection


def test_binlog_sizes_and_log_bin_off() -> None:
    conn = FixtureConnection("mysql", (8, 4, 0), {
        "binlog_enabled": [{"log_bin": 1}],
        "binary_logs": [{"Log_name": "binlog.000001", "File_size": 180, "Encrypted": "No"},
                        {"Log_name": "binlog.000002", "File_size": 4400, "Encrypted": "No"},
                        {"Log_name": "binlog.000003", "File_size": None, "Encrypted": "No"}]})
    got = {s.name: s.value for s in MySQLBinlog().collect(conn)}  # type: ignore[arg-type]
    assert got == {"dbgauge_mysql_binlog_enabled": 1.0, "dbgauge_mysql_binlog_files": 3.0,
                   "dbgauge_mysql_binlog_bytes": 4580.0, "dbgauge_mysql_binlog_file_number": 3.0}
    off = FixtureConnection("mariadb", (10, 11, 19), {"binlog_enabled": [{"log_bin": 0}]})
    got = {s.name: s.value for s in MySQLBinlog().collect(off)}  # type: ignore[arg-type]
    assert got == {"dbgauge_mysql_binlog_enabled": 0.0}
    assert off.asked == ["binlog_enabled"]
