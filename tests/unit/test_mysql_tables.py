"""mysql_tables: table I/O and sizes with NULLs and top-N limits, and its statements."""

from __future__ import annotations

from dbgauge.collectors.mysql_tables import MySQLTables, parse_io, parse_sizes
from tests.helpers import as_dict, value
from tests.helpers.captured import FixtureConnection


def test_table_io_and_sizes_parse_with_nulls_and_limits() -> None:
    io_rows = [{"table_schema": "app", "table_name": f"t{i}", "count_fetch": 10,
                "timer_fetch": 2 * 10**12, "count_insert": 1, "timer_insert": None,
                "count_update": 0, "timer_update": 0, "count_delete": None,
                "timer_delete": None} for i in range(4)]
    size_rows = [{"table_schema": "app", "table_name": "big", "data_length": 16384,
                  "index_length": 0, "data_free": None, "table_rows": 3}]
    # the SQL leaves out only what mysqld_exporter leaves out; dbgauge's families skip
    # information_schema, sys and views themselves
    size_rows += [{"table_schema": "sys", "table_name": "sys_config", "table_type": "BASE TABLE",
                   "data_length": 16384},
                  {"table_schema": "app", "table_name": "v", "table_type": "VIEW",
                   "data_length": None}]
    io_rows.insert(0, {**io_rows[0], "table_schema": "sys", "table_name": "sys_config"})
    conn = FixtureConnection("mariadb", (10, 11, 19), {
        "table_io_waits": io_rows, "table_sizes": size_rows,
        "tables_hidden": [{"innodb_tables": 7, "visible_tables": 7}]})
    collector = MySQLTables().configured({"limit": 3, "size_limit": 5})
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    m = as_dict("mysql_tables", samples)
    assert {s.labels["table"] for s in samples if s.labels} == {"t0", "t1", "big"}
    assert value(m, "dbgauge_mysql_table_io_truncated") == 1  # 5 rows for a limit of 3
    assert value(m, "dbgauge_mysql_table_sizes_truncated") == 0
    assert value(m, "dbgauge_mysql_tables_hidden") == 0
    fetch = {"schema": "app", "table": "t0", "operation": "fetch"}
    assert value(m, "dbgauge_mysql_table_io_waits_total", **fetch) == 10
    assert value(m, "dbgauge_mysql_table_io_wait_seconds_total", **fetch) == 2.0
    assert value(m, "dbgauge_mysql_table_io_wait_seconds_total", schema="app",
                 table="t0", operation="insert") is None  # NULL
    assert value(m, "dbgauge_mysql_table_io_waits_total", schema="app",
                 table="t0", operation="delete") is None
    assert value(m, "dbgauge_mysql_table_data_bytes", schema="app", table="big") == 16384
    assert value(m, "dbgauge_mysql_table_rows", schema="app", table="big") == 3
    assert value(m, "dbgauge_mysql_table_free_bytes", schema="app", table="big") is None
    assert len(parse_io(io_rows, 1)) == 1 and len(parse_sizes(size_rows * 3, 2)) == 2


def test_table_statements_leave_system_schemas_out_and_bind_the_limit() -> None:
    for name in ("table_io_waits", "table_sizes"):
        sql = FixtureConnection("mysql", (8, 0, 36), {}).sql(name)
        assert "NOT IN ('mysql', 'performance_schema'" in sql
        assert sql.rstrip().endswith("LIMIT %s")


def test_tables_hidden_from_the_account_are_said_not_passed_over() -> None:
    """information_schema.TABLES lists only the tables the account holds a privilege on:
    when INNODB_SYS_TABLES (PROCESS) counts more, the sizes are of the visible ones only,
    so the truncation gauge says tables were left out, the hidden count is exported, and
    the collector fails naming the grant (the visible sizes kept)."""
    import pytest

    from dbgauge.toolkit.errors import Incomplete

    size_rows = [{"table_schema": "app", "table_name": "big", "data_length": 16384}]
    for flavor, version in (("mariadb", (10, 11, 19)), ("mysql", (8, 0, 36))):
        conn = FixtureConnection(flavor, version, {
            "table_io_waits": [], "table_sizes": size_rows,
            "tables_hidden": [{"innodb_tables": 7, "visible_tables": 1}]})
        samples = []
        with pytest.raises(Incomplete, match=r"6 InnoDB table\(s\) .* GRANT SELECT ON \*\.\*"):
            for sample in MySQLTables().configured({}).collect(conn):  # type: ignore[arg-type]
                samples.append(sample)
        m = as_dict("mysql_tables", samples)
        assert value(m, "dbgauge_mysql_tables_hidden") == 6
        assert value(m, "dbgauge_mysql_table_sizes_truncated") == 1
        assert value(m, "dbgauge_mysql_table_data_bytes", schema="app", table="big") == 16384
