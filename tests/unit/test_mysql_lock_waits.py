"""mysql_lock_waits: the wait graph summary, on MySQL 8's data_lock_waits shape (captured from
the 8.4 manual) and on wait chains; the per-state transaction summary."""

from __future__ import annotations

from collectors.mysql_lock_waits import summarize_lock_waits, summarize_transactions
from tests.unit.test_mysql_fixtures import FixtureConnection, project, vertical_rows


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
