"""The collectors of mysqld_exporter's optional data, on rows captured from MariaDB 10.11
(tests/fixtures/mariadb-10.11/, through dbgauge's own statements) and MySQL 8 monitor text:
values in base units, NULLs, the top-N limits and their _truncated gauges, which are on by
default."""

from __future__ import annotations

from typing import Any

import pytest

from dbgauge.app import registry
from dbgauge.collectors.mysql_engine_innodb_status import parse_engine_status
from dbgauge.collectors.mysql_processlist import MySQLProcesslist
from dbgauge.collectors.mysql_replication import read_flags
from dbgauge.toolkit.errors import Incomplete, QueryError
from tests.helpers import as_dict, value
from tests.helpers.captured import FixtureConnection, body, tsv_rows

MARIADB = ("mariadb", (10, 11, 19))


def _collect(name: str, answers: dict[str, list[Any]], options: dict[str, object] | None = None,
             server: tuple[str, tuple[int, int, int]] = MARIADB) -> Any:
    collector = registry()[name].configured(options or {})
    conn = FixtureConnection(server[0], server[1], answers)
    samples = list(collector.collect(conn))  # type: ignore[arg-type]
    for sample in samples:
        collector.validate_sample(sample)
    return as_dict(name, samples)


def test_opt_in_as_mysqld_exporter_and_every_statement_binds_its_limit() -> None:
    reg = registry()
    on = {n for n in ("mysql_innodb_cmp", "mysql_innodb_cmpmem") if reg[n].default_enabled}
    off = {n for n in ("mysql_perf_schema_waits", "mysql_perf_schema_file_events",
                       "mysql_perf_schema_file_instances", "mysql_perf_schema_index_io_waits",
                       "mysql_perf_schema_table_lock_waits", "mysql_auto_increment",
                       "mysql_engine_innodb_status") if not reg[n].default_enabled}
    assert len(on) == 2 and len(off) == 7
    # the peer's defaults, also with the mysqld_exporter dialect
    assert {"mysql_innodb_cmp", "mysql_innodb_cmpmem"} <= set(
        reg.dialects["mysqld_exporter"].collectors)
    for name in ("perf_schema_waits", "perf_schema_file_events", "perf_schema_file_instances",
                 "perf_schema_index_io_waits", "perf_schema_table_lock_waits",
                 "auto_increment_columns", "innodb_cmp", "innodb_cmpmem", "statement_digests"):
        for server in (MARIADB, ("mysql", (8, 0, 36))):
            sql = FixtureConnection(server[0], server[1], {}).sql(name)
            assert sql.rstrip().endswith("LIMIT %s"), name


def test_waits_in_seconds_and_truncated_past_the_limit() -> None:
    rows = tsv_rows("mariadb-10.11/perf_schema_waits.tsv")
    m = _collect("mysql_perf_schema_waits", {"perf_schema_waits": rows})
    first = rows[0]
    event = {"event": first["event_name"]}
    assert value(m, "dbgauge_mysql_wait_events_total", **event) == float(first["count_star"])
    assert value(m, "dbgauge_mysql_wait_event_seconds_total", **event) == pytest.approx(
        float(first["sum_timer_wait"]) * 1e-12)
    assert value(m, "dbgauge_mysql_wait_events_truncated") == 0
    # the SQL asks for limit + 1 rows: one more than the limit is the sign
    short = _collect("mysql_perf_schema_waits", {"perf_schema_waits": rows}, {"limit": 5})
    assert value(short, "dbgauge_mysql_wait_events_truncated") == 1
    assert len([k for k in short if k[0] == "dbgauge_mysql_wait_events_total"]) == 5


def test_file_io_modes_and_bytes() -> None:
    rows = tsv_rows("mariadb-10.11/perf_schema_file_events.tsv")
    m = _collect("mysql_perf_schema_file_events", {"perf_schema_file_events": rows})
    row = rows[0]
    labels = {"event": row["event_name"]}
    assert value(m, "dbgauge_mysql_file_io_operations_total", **labels, mode="misc") == \
        float(row["count_misc"])
    assert value(m, "dbgauge_mysql_file_io_bytes_total", **labels, mode="write") == \
        float(row["sum_number_of_bytes_write"])
    assert value(m, "dbgauge_mysql_file_io_bytes_total", **labels, mode="misc") is None
    files = tsv_rows("mariadb-10.11/perf_schema_file_instances.tsv")
    m = _collect("mysql_perf_schema_file_instances", {"perf_schema_file_instances": files})
    top = files[0]
    assert value(m, "dbgauge_mysql_file_instance_bytes_total", file=top["file_name"],
                 event=top["event_name"], mode="read") == float(top["sum_number_of_bytes_read"])


def test_index_io_inserts_only_on_the_no_index_row() -> None:
    rows = tsv_rows("mariadb-10.11/perf_schema_index_io_waits.tsv")
    m = _collect("mysql_perf_schema_index_io_waits", {"perf_schema_index_io_waits": rows})
    scan = {"schema": "compat_more", "table": "t", "index": ""}
    assert value(m, "dbgauge_mysql_index_io_waits_total", **scan, operation="insert") == 500
    assert value(m, "dbgauge_mysql_index_io_waits_total", schema="compat_more",
                 table="seq_1_to_500", index="PRIMARY", operation="fetch") == 500
    assert value(m, "dbgauge_mysql_index_io_waits_total", schema="compat_more",
                 table="seq_1_to_500", index="PRIMARY", operation="insert") is None


def test_table_locks_by_lock_type() -> None:
    rows = tsv_rows("mariadb-10.11/perf_schema_table_lock_waits.tsv")
    m = _collect("mysql_perf_schema_table_lock_waits", {"perf_schema_table_lock_waits": rows})
    myisam = {"schema": "compat_more", "table": "m"}
    # LOCK TABLES m WRITE / READ and the workload's statements on the MyISAM table
    assert value(m, "dbgauge_mysql_table_lock_waits_total", **myisam, lock="write_normal") == 1
    assert value(m, "dbgauge_mysql_table_lock_waits_total", **myisam,
                 lock="read_no_insert") == 2
    row = next(r for r in rows if r["object_name"] == "m")
    assert value(m, "dbgauge_mysql_table_lock_wait_seconds_total", **myisam,
                 lock="write_normal") == pytest.approx(float(row["timer_write_normal"]) * 1e-12)


def test_compression_tables_and_their_units() -> None:
    cmp_rows = tsv_rows("mariadb-10.11/innodb_cmp.tsv")
    m = _collect("mysql_innodb_cmp", {"innodb_cmp": cmp_rows})
    assert value(m, "dbgauge_mysql_innodb_cmp_compress_ops_total", page_size="4096") == 26
    assert value(m, "dbgauge_mysql_innodb_cmp_compress_ok_ops_total", page_size="4096") == 26
    mem = [{"page_size": "4096", "buffer_pool_instance": "0", "pages_used": "3",
            "pages_free": "1", "relocation_ops": "7", "relocation_time": "2500"}]
    m = _collect("mysql_innodb_cmpmem", {"innodb_cmpmem": mem})
    labels = {"page_size": "4096", "buffer_pool": "0"}
    assert value(m, "dbgauge_mysql_innodb_cmpmem_used_pages", **labels) == 3
    assert value(m, "dbgauge_mysql_innodb_cmpmem_relocation_seconds_total", **labels) == \
        pytest.approx(0.0025)  # microseconds on the server


def test_auto_increment_headroom_and_a_type_without_maximum() -> None:
    rows = tsv_rows("mariadb-10.11/auto_increment_columns.tsv")
    rows.append({"table_schema": "app", "table_name": "d", "column_name": "id",
                 "auto_increment": "5", "max_value": None})  # a DECIMAL column: no maximum
    m = _collect("mysql_auto_increment", {"auto_increment_columns": rows,
                                          "tables_hidden": [{"innodb_tables": 9,
                                                             "visible_tables": 9}]})
    assert value(m, "dbgauge_mysql_auto_increment_tables_hidden") == 0
    assert value(m, "dbgauge_mysql_auto_increment_truncated") == 0
    tiny = {"schema": "compat_more", "table": "tiny", "column": "id"}
    assert value(m, "dbgauge_mysql_auto_increment_next_value", **tiny) == 4
    assert value(m, "dbgauge_mysql_auto_increment_max_value", **tiny) == 127
    assert value(m, "dbgauge_mysql_auto_increment_used_ratio", **tiny) == pytest.approx(4 / 127)
    decimal = {"schema": "app", "table": "d", "column": "id"}
    assert value(m, "dbgauge_mysql_auto_increment_used_ratio", **decimal) is None
    assert value(m, "dbgauge_mysql_auto_increment_max_value", **decimal) is None


def test_auto_increment_columns_of_hidden_tables_are_said_not_passed_over() -> None:
    """A table the account cannot see could hold a column at its maximum: counted, the
    list called truncated, and the collector failed naming the grant, its rows kept."""
    collector = registry()["mysql_auto_increment"]
    rows = tsv_rows("mariadb-10.11/auto_increment_columns.tsv")
    conn = FixtureConnection(*MARIADB, {"auto_increment_columns": rows, "tables_hidden": [
        {"innodb_tables": 12, "visible_tables": 9}]})
    facts = collector.read(conn)  # type: ignore[arg-type]
    got = []
    with pytest.raises(Incomplete, match=r"3 InnoDB table.* AUTO_INCREMENT columns are not "
                                         r"checked: GRANT SELECT ON"):
        got.extend(collector.samples(facts))
    m = as_dict("mysql_auto_increment", got)
    assert value(m, "dbgauge_mysql_auto_increment_tables_hidden") == 3
    assert value(m, "dbgauge_mysql_auto_increment_truncated") == 1
    assert value(m, "dbgauge_mysql_auto_increment_next_value", schema="compat_more",
                 table="tiny", column="id") == 4


PROCESS_HELD = {"process_probe": [{"page_sizes": 5}]}  # INNODB_CMP answered: PROCESS held


def test_processlist_by_user_and_host_with_a_limit() -> None:
    rows = tsv_rows("mariadb-10.11/processlist_summary.tsv")
    m = _collect("mysql_processlist", {**PROCESS_HELD, "processlist_summary": rows})
    assert value(m, "dbgauge_mysql_processlist_threads_by_user", user="sandbox_admin") == 2
    assert value(m, "dbgauge_mysql_processlist_threads_by_host", host="127.0.0.1") == 3
    assert value(m, "dbgauge_mysql_processlist_clients_truncated") == 0
    many = [{**rows[0], "user": f"u{i}", "threads": "1"} for i in range(4)]
    m = _collect("mysql_processlist", {**PROCESS_HELD, "processlist_summary": many},
                 {"limit": 3})
    assert value(m, "dbgauge_mysql_processlist_clients_truncated") == 1
    assert len([k for k in m if k[0] == "dbgauge_mysql_processlist_threads_by_user"]) == 3
    # MySQL 8.0.22+ reads the same columns from performance_schema.processlist
    sql = FixtureConnection("mysql", (8, 0, 36), {}).sql("processlist_summary")
    assert "performance_schema.processlist" in sql and "USER" in sql and "HOST" in sql
    assert MySQLProcesslist().options["limit"].default == 1000


class _NoProcess(FixtureConnection):
    """A session the server refuses the PROCESS probe (error 1227), as MariaDB does."""

    def query(self, name: str, params: Any = None) -> list[Any]:
        if name == "process_probe":
            self.asked.append(name)
            raise QueryError("Access denied; you need the PROCESS privilege", errno=1227)
        return super().query(name, params)


@pytest.mark.parametrize("flavor", [MARIADB, ("mysql", (8, 0, 36))])
def test_without_process_the_processlist_is_not_read_as_the_servers(
        flavor: tuple[str, tuple[int, int, int]]) -> None:
    """The processlist answers a session without PROCESS with its own threads: the
    collector fails naming the grant and never reads it; the replica count is None (and
    the replication collector incomplete) on MariaDB, whose count reads the processlist."""
    conn = _NoProcess(flavor[0], flavor[1], {"processlist_summary": []})
    with pytest.raises(QueryError, match=r"processlist_summary needs the PROCESS privilege "
                                         r"\(GRANT PROCESS ON \*\.\* TO \.\.\.\): without it "
                                         r"the server shows only the account's own threads"):
        MySQLProcesslist().read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["process_probe"]
    if flavor[0] != "mariadb":
        return
    conn = _NoProcess(*flavor, {"replication_flags": [{"read_only": 0, "replicas": 0}]})
    flags = read_flags(conn)  # type: ignore[arg-type]
    assert flags.connected_replicas is None and flags.read_only == 0
    assert "GRANT PROCESS ON *.*" in flags.replicas_hidden


def test_statement_columns_and_the_truncation_sign() -> None:
    rows = tsv_rows("mariadb-10.11/statement_digests.tsv")
    m = _collect("mysql_statements", {"performance_schema_enabled": [{"enabled": 1}],
                                      "statement_digests": rows})
    group_by = next(r for r in rows if (r["digest_text"] or "").startswith("SELECT `v`"))
    labels = {"schema": "compat_more", "digest": group_by["digest"]}
    assert value(m, "dbgauge_mysql_statements_tmp_tables_total", **labels) == \
        float(group_by["tmp_tables"]) == 1
    assert value(m, "dbgauge_mysql_statements_sort_rows_total", **labels) == \
        float(group_by["sort_rows"])
    assert value(m, "dbgauge_mysql_statements_truncated") == 0
    assert not any("digest_text" in dict(k[1]) for k in m)  # never a label of dbgauge's own
    few = _collect("mysql_statements", {"performance_schema_enabled": [{"enabled": 1}],
                                        "statement_digests": rows}, {"limit": 4})
    assert value(few, "dbgauge_mysql_statements_truncated") == 1


@pytest.mark.parametrize(("fixture", "views", "inside"), [
    ("mysql-8.0/show_engine_innodb_status.txt", 0, 0),
    ("mysql-8.4/show_engine_innodb_status.txt", 0, 0),
    ("mariadb-10.11/show_engine_innodb_status.txt", 1, None),  # no ROW OPERATIONS queries line
])
def test_engine_status_numbers(fixture: str, views: float, inside: float | None) -> None:
    facts = parse_engine_status(body(fixture))
    assert (facts.read_views, facts.queries_inside) == (views, inside)
    assert facts.queries_queued == inside
