"""The helpers the validate tests share (tests/helpers/validate.py) read what they claim."""

from __future__ import annotations

from tests.helpers.validate import FIXTURES, mysql_table_rows, read_expected


def test_mysql_table_rows_reads_both_client_layouts() -> None:
    table = mysql_table_rows(FIXTURES / "innodb/live/group_members_8.0.27.txt")
    assert [r["MEMBER_ROLE"] for r in table] == ["PRIMARY", "SECONDARY", "SECONDARY"]
    assert table[0]["MEMBER_VERSION"] == "8.0.27"
    vertical = mysql_table_rows(FIXTURES / "innodb/live/member_stats_8.0.18.txt")
    assert len(vertical) == 3
    assert vertical[2]["COUNT_TRANSACTIONS_REMOTE_APPLIED"] == "5"
    assert vertical[0]["LAST_CONFLICT_FREE_TRANSACTION"] == ""


def test_expected_files_parse() -> None:
    options, lines = read_expected(FIXTURES / "pgbouncer/bad/version-1.18")
    assert options == {"version": "1.18"}
    assert all(line.split()[0] in ("error", "warning") for line in lines)
