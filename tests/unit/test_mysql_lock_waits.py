"""mysql_lock_waits: the wait graph summary, on MySQL 8's data_lock_waits shape (captured from
the 8.4 manual) and on wait chains; the per-state transaction summary."""

from __future__ import annotations

from typing import Any

from dbgauge.collectors.mysql_lock_waits import (
    MetadataLocks,
    MySQLLockWaits,
    summarize_lock_waits,
    summarize_transactions,
)
from tests.helpers.captured import FixtureConnection, project, vertical_rows


def _edge(waiting: str, blocking: str) -> dict[str, str]:
    return {"REQUESTING_ENGINE_TRANSACTION_ID": waiting, "BLOCKING_ENGINE_TRANSACTION_ID": blocking}


def test_mysql_8_statement_reads_real_data_lock_waits_columns() -> None:
    captured = vertical_rows("mysql-8.4/data_lock_waits.txt")
    conn = FixtureConnection("mysql", (8, 4, 0), {})
    sql = conn.sql("lock_waits")
    assert "performance_schema.data_lock_waits" in sql
    graph = summarize_lock_waits(project(sql, captured))  # 1555 waits for 1554
    assert graph.waiting == {"1555"}
    assert graph.blockers == {"1554"}
    assert graph.root_blockers == {"1554"}
    assert graph.max_waiters_per_blocker == 1


def test_mariadb_statement_aliases_to_the_same_columns() -> None:
    sql = FixtureConnection("mariadb", (10, 11, 0), {}).sql("lock_waits")
    assert "INNODB_LOCK_WAITS" in sql
    assert "AS REQUESTING_ENGINE_TRANSACTION_ID" in sql
    assert "AS BLOCKING_ENGINE_TRANSACTION_ID" in sql


def test_chain_and_fan_out() -> None:
    # 10 blocks 11, 12 and 13 (two lock pairs for 11); 11 blocks 20; 30 blocks 31
    rows = [_edge("11", "10"), _edge("11", "10"), _edge("12", "10"), _edge("13", "10"),
            _edge("20", "11"), _edge("31", "30")]
    graph = summarize_lock_waits(rows)
    assert graph.waiting == {"11", "12", "13", "20", "31"}
    assert graph.blockers == {"10", "11", "30"}
    assert graph.root_blockers == {"10", "30"}  # 11 blocks but waits itself
    assert graph.max_waiters_per_blocker == 3
    empty = summarize_lock_waits([])
    assert (empty.blockers, empty.max_waiters_per_blocker) == (frozenset(), 0)
    # integer ids (PyMySQL returns bigint columns as int) join the same way
    assert summarize_lock_waits([{"REQUESTING_ENGINE_TRANSACTION_ID": 5,
                                  "BLOCKING_ENGINE_TRANSACTION_ID": 4}]).blockers == {"4"}


def test_transactions_by_state() -> None:
    rows = [{"trx_state": "RUNNING", "transactions": 3, "oldest_seconds": 40,
             "oldest_wait_seconds": None},
            {"trx_state": "LOCK WAIT", "transactions": 2, "oldest_seconds": 12,
             "oldest_wait_seconds": 9}]
    summary = summarize_transactions(rows)
    assert summary.by_state == {"running": 3, "lock_wait": 2, "rolling_back": 0,
                                "committing": 0}
    assert summary.oldest_seconds == 40
    assert (summary.waiting, summary.oldest_wait_seconds) == (2, 9)
    idle = summarize_transactions([])
    assert (idle.waiting, idle.oldest_seconds, idle.oldest_wait_seconds) == (0, 0.0, 0.0)
    assert set(idle.by_state) == {"running", "lock_wait", "rolling_back", "committing"}


class BlockersConnection(FixtureConnection):
    """Also answers lock_blockers, which the collector fills in itself (its IN list)."""

    def execute_sql(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        assert "INNODB_TRX" in sql and params is not None
        self.asked.append(f"lock_blockers{tuple(params)}")
        return [{"trx_id": 10, "idle": 1, "age_seconds": 12},
                {"trx_id": 30, "idle": 0, "age_seconds": 4}]


_RUNNING = {"trx_state": "RUNNING", "transactions": 2, "oldest_seconds": 30,
            "oldest_wait_seconds": None}
_WAITING = {"trx_state": "LOCK WAIT", "transactions": 3, "oldest_seconds": 9,
            "oldest_wait_seconds": 4}
_MDL_PS = {"performance_schema": 1, "mdl_instrument": "YES", "global_consumer": "YES",
           "waiting": 2, "oldest_wait_seconds": 7}


def test_read_skips_the_wait_graph_when_nobody_waits() -> None:
    conn = FixtureConnection("mysql", (8, 4, 0), {"innodb_trx_summary": [_RUNNING],
                                                  "metadata_lock_waits": [_MDL_PS]})
    collector = MySQLLockWaits()
    facts = collector.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["innodb_trx_summary", "metadata_lock_waits"]
    assert facts.graph.blockers == frozenset() and facts.transactions.waiting == 0
    assert (facts.idle_blockers, facts.oldest_blocker_seconds) == (0, 0.0)
    assert facts.metadata == MetadataLocks(True, 2.0, 7.0)
    values = {s.name: s.value for s in collector.samples(facts) if not s.labels}
    assert values["dbgauge_mysql_metadata_lock_oldest_wait_seconds"] == 7
    assert values["dbgauge_mysql_lock_blocking_transactions"] == 0


def test_read_follows_the_wait_graph_to_the_blockers() -> None:
    edges = [_edge("11", "10"), _edge("12", "10"), _edge("20", "11"), _edge("31", "30")]
    not_instrumented = {**_MDL_PS, "mdl_instrument": "NO"}
    conn = BlockersConnection("mysql", (8, 4, 0), {
        "innodb_trx_summary": [_RUNNING, _WAITING], "lock_waits": edges,
        "metadata_lock_waits": [not_instrumented],
        "metadata_lock_waits_processlist": [{"waiting": 1, "oldest_wait_seconds": 3.5}]})
    collector = MySQLLockWaits()
    facts = collector.read(conn)  # type: ignore[arg-type]
    assert conn.asked == ["innodb_trx_summary", "lock_waits", "lock_blockers(10, 11, 30)",
                          "metadata_lock_waits", "metadata_lock_waits_processlist"]
    assert facts.graph.root_blockers == {"10", "30"}
    assert (facts.idle_blockers, facts.oldest_blocker_seconds) == (1, 12.0)
    assert facts.metadata == MetadataLocks(False, 1.0, 3.5)
    values = {s.name: s.value for s in collector.samples(facts) if not s.labels}
    assert values["dbgauge_mysql_lock_waiting_transactions"] == 3
    assert values["dbgauge_mysql_lock_oldest_wait_seconds"] == 4
    assert values["dbgauge_mysql_lock_root_blocking_transactions"] == 2
    assert values["dbgauge_mysql_lock_idle_blocking_transactions"] == 1
    assert values["dbgauge_mysql_metadata_lock_instrumented"] == 0
