"""What the `dbgauge checksum` tests share: running a comparison on the sandbox's MariaDB
pair or PostgreSQL publisher and subscriber, reading its report, and making tables that
both sides of a logical subscription hold.

The comparisons run through dbgauge's own code (`run_checksum`) as its users would; the
PostgreSQL connections here are the administrator's, to make the tables a test needs.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pymysql  # type: ignore[import-untyped,unused-ignore]
import pymysql.cursors  # type: ignore[import-untyped,unused-ignore]

from dbgauge.app import load_config
from dbgauge.checks.drift import ChecksumOptions, run_checksum
from dbgauge.cli.base import RESULT_EXIT
from dbgauge.toolkit.result import CheckResult
from dbgauge.toolkit.sandbox import DRIFT_DATABASE, SUBSCRIPTION
from dbgauge.toolkit.targets import Target
from tests.helpers.servers import Sandbox, admin, caught_up, execute, one

# Where the checksum tests' runs keep their resume state (the CLI's default home is the
# user's; the tests share one of their own).
STATE_HOME = Path(tempfile.gettempdir()) / f"dbgauge-test-state-{os.getuid()}"

SBR_USER = "dbgauge_sbr"  # may set the session binlog_format (the monitoring user may not)


def exit_code(result: CheckResult) -> int:
    """What `dbgauge checksum` exits with for this result."""
    return RESULT_EXIT["checksum"][result.status]


def table_docs(result: CheckResult) -> list[dict[str, Any]]:
    """The per-table part of the run's report (what --format json prints)."""
    return list(result.evidence["tables"])


def found(result: CheckResult) -> dict[str, set[tuple[str, tuple[Any, ...]]]]:
    """(kind, key values) of every difference named, by table."""
    return {t["table"]: {(d["kind"], tuple(d["key"].values())) for d in t["differences"]}
            for t in table_docs(result)}


def targets(sandbox: Sandbox) -> dict[str, Target]:
    """The sandbox's targets by name, as its dbgauge config declares them."""
    return {t.name: t for t in load_config(sandbox.config).all_targets()}


# ----------------------------------------------------------------- MariaDB


@contextmanager
def mariadb_table(sandbox: Sandbox, name: str, *make: str) -> Iterator[None]:
    """Table `name` made on the MariaDB primary by the statements `make` and replicated;
    dropped afterwards, and the drop replicated."""
    execute(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS {name}", *make)
    try:
        caught_up(sandbox)
        yield
    finally:
        execute(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS {name}")
        caught_up(sandbox)


def sbr_target(sandbox: Sandbox) -> Target:
    """The primary as SBR_USER (the `sbr_user` fixture creates it): the replicated method."""
    port = sandbox.state.port("mariadb-primary")
    return Target(name="primary-sbr", kind="mysql",
                  dsn=f"mysql://{SBR_USER}:sbr-{sandbox.state.dbgauge_password}"
                      f"@127.0.0.1:{port}/")


def mariadb_check(sandbox: Sandbox, method: str, tables: tuple[str, ...], **options: Any
                  ) -> CheckResult:
    """The MariaDB replica compared with its primary by `method`."""
    t = targets(sandbox)
    source = sbr_target(sandbox) if method == "replicated" else t["mariadb-primary"]
    return run_checksum(source, [t["mariadb-replica"]],
                        ChecksumOptions(tables=tables, method=method, retry_delay=0.05,
                                        keep_state=False, **options))


@contextmanager
def binlog_watch(sandbox: Sandbox) -> Iterator[list[str]]:
    """Yields a list that, after the block, holds every table or statement written to
    either server's binlog meanwhile (log_slave_updates: the replica logs what it applies)."""
    starts = {name: one(sandbox, name, "SHOW MASTER STATUS")[:2]
              for name in ("mariadb-primary", "mariadb-replica")}
    written: list[str] = []
    yield written
    for name, (file, pos) in starts.items():
        with closing(admin(sandbox, name)) as conn:
            cur = conn.cursor(pymysql.cursors.DictCursor)
            cur.execute(f"SHOW BINLOG EVENTS IN '{file}' FROM {int(pos)}")
            for event in cur.fetchall():
                info = str(event["Info"])
                if event["Event_type"] == "Table_map":
                    written.append(re.sub(r"^table_id: \d+ \((.*)\)$", r"\1", info))
                elif event["Event_type"] == "Query" and info not in ("BEGIN", "COMMIT"):
                    written.append(info)


def outside_dbgauge(written: list[str]) -> list[str]:
    """What was written anywhere but dbgauge's own schema."""
    allowed = ("REPLACE INTO dbgauge.", "UPDATE dbgauge.", "DELETE FROM dbgauge.",
               "CREATE DATABASE IF NOT EXISTS dbgauge", "CREATE TABLE IF NOT EXISTS dbgauge.")
    bad = []
    for item in written:
        statement = re.sub(r"^use `[^`]*`; ", "", item.strip())
        if not (re.fullmatch(r"dbgauge\.\w+", statement) or statement.startswith(allowed)):
            bad.append(item)
    return bad


# ----------------------------------------------------------------- PostgreSQL


def pg(sandbox: Sandbox, name: str, database: str = DRIFT_DATABASE) -> psycopg.Connection[Any]:
    return psycopg.connect(sandbox.admin_dsn(name, database), autocommit=True,
                           connect_timeout=5)


def pg_source_dsn(sandbox: Sandbox) -> str:
    return f"postgresql://dbgauge@127.0.0.1:{sandbox.state.port('pg-primary')}/{DRIFT_DATABASE}"


def pg_source(sandbox: Sandbox) -> Target:
    return Target(name="pg-primary", kind="postgres", dsn=pg_source_dsn(sandbox),
                  password_file=sandbox.state.dbgauge_password_file)


def pg_subscriber(sandbox: Sandbox) -> Target:
    return load_config(sandbox.config).target("pg-subscriber")


def pg_check(sandbox: Sandbox, tables: tuple[str, ...], **options: Any) -> CheckResult:
    """The logical subscriber compared with the PostgreSQL primary."""
    return run_checksum(pg_source(sandbox), [pg_subscriber(sandbox)],
                        ChecksumOptions(tables=tables, retry_delay=0.05, keep_state=False,
                                        **options))


def wait_synced(sub: psycopg.Connection[Any], tables: list[str]) -> None:
    deadline = time.monotonic() + 30
    while True:
        rows = sub.execute(
            "SELECT c.relname, r.srsubstate FROM pg_subscription_rel r "
            "JOIN pg_class c ON c.oid = r.srrelid WHERE c.relname = ANY(%s)", (tables,)
        ).fetchall()
        if len(rows) == len(tables) and all(state == "r" for _, state in rows):
            return
        assert time.monotonic() < deadline, f"tables not synced: {rows}"
        time.sleep(0.05)


@contextmanager
def replicated_tables(sandbox: Sandbox, ddl: dict[str, str]) -> Iterator[
        tuple[psycopg.Connection[Any], psycopg.Connection[Any]]]:
    """Tables created on both sides, subscribed and in sync; removed cleanly afterwards."""
    with pg(sandbox, "pg-primary") as primary, pg(sandbox, "pg-subscriber") as sub:
        for conn in (sub, primary):  # the subscriber first: changes must find their table
            for name, statement in ddl.items():
                conn.execute(f"DROP TABLE IF EXISTS {name}")
                conn.execute(statement)
                conn.execute(f"GRANT SELECT ON {name} TO dbgauge")
        sub.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} REFRESH PUBLICATION")
        try:
            wait_synced(sub, list(ddl))
            yield primary, sub
        finally:
            for name in ddl:
                primary.execute(f"DROP TABLE IF EXISTS {name}")
            sub.execute(f"ALTER SUBSCRIPTION {SUBSCRIPTION} REFRESH PUBLICATION")
            for name in ddl:
                sub.execute(f"DROP TABLE IF EXISTS {name}")


def pg_caught_up(primary: psycopg.Connection[Any], sub: psycopg.Connection[Any]) -> None:
    """Wait until the subscriber has applied everything the primary has flushed."""
    lsn = primary.execute("SELECT pg_current_wal_flush_lsn()").fetchone()
    deadline = time.monotonic() + 30
    while not sub.execute(
            "SELECT min(latest_end_lsn) >= %s FROM pg_stat_subscription WHERE relid IS NULL",
            lsn).fetchone()[0]:
        assert time.monotonic() < deadline, "subscriber did not catch up"
        time.sleep(0.02)
