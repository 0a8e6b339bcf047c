"""MySQL/MariaDB under least privilege: every collector and check is right or says it cannot see.

Real accounts on the sandbox (created on the primary, replicated to the replica, dropped
afterwards): USAGE only, PROCESS only, REPLICATION CLIENT only (an alias of BINLOG MONITOR
on MariaDB 10.5+), SLAVE MONITOR only, PROCESS through a default role only (which
information_schema.USER_PRIVILEGES does not list), and the documented minimum of
docs/mysql.md. Each runs every MariaDB collector on both servers and the MySQL-family
checks. A collector
either succeeds or fails naming the GRANT of a privilege the account lacks -- and which
ones fail is what docs/mysql.md says each needs; what succeeds equals what the
administrator sees (the processlist without PROCESS would show the account's own threads
only: 0 connected replicas, no replication threads). A check is either what the
documented minimum gets or UNKNOWN [insufficient-privilege] with the GRANT line.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from dbgauge.app import registry
from tests.helpers import wait_for
from tests.helpers.daemon import Outcome, check, heartbeat, scraper, target_entry
from tests.helpers.servers import (
    Sandbox,
    documented_grants,
    execute,
    one,
    replica_caught_up,
    run,
)

pytestmark = pytest.mark.integration

NODES = ("mariadb-primary", "mariadb-replica")
GRANTS = {  # what an account lacking each privilege must be told to run
    "process": "GRANT PROCESS ON *.*",
    "slave": "GRANT SLAVE MONITOR ON *.*",
    "binlog": "GRANT BINLOG MONITOR ON *.*",
    "ps": "GRANT SELECT ON performance_schema.*",
    "heartbeat": "GRANT SELECT ON dbgauge.*",
    "select": "GRANT SELECT ON *.*",  # every table in information_schema.TABLES
}
ACCOUNTS = {  # name: (global privileges, what they give in GRANTS' terms)
    "usage": ("USAGE", frozenset()),
    "process": ("PROCESS", frozenset({"process"})),
    "rclient": ("REPLICATION CLIENT", frozenset({"binlog"})),  # BINLOG MONITOR on 10.11
    "smon": ("SLAVE MONITOR", frozenset({"slave"})),
    "role": ("USAGE", frozenset({"process"})),  # PROCESS through its default role only
}
ROLE = "dbgauge_lpm_process_role"
MINIMUM = frozenset(GRANTS)
# What each collector needs on MariaDB (docs/mysql.md); not listed: nothing.
NEEDS = {
    "mysql_binlog": {"binlog"},
    "mysql_engine_innodb_status": {"process"},
    "mysql_innodb": {"process"},
    "mysql_innodb_cmp": {"process"},
    "mysql_innodb_cmpmem": {"process"},
    "mysql_lock_waits": {"process", "ps"},
    "mysql_processlist": {"process"},
    "mysql_replication": {"slave", "process"},
    "mysql_statements": {"ps"},
    "mysql_tables": {"ps", "process", "select"},  # PROCESS: to tell whether tables are hidden
    "mysql_auto_increment": {"process", "select"},  # the same hidden tables, their columns
    "mysql_perf_schema_file_events": {"ps"},
    "mysql_perf_schema_file_instances": {"ps"},
    "mysql_perf_schema_index_io_waits": {"ps"},
    "mysql_perf_schema_table_lock_waits": {"ps"},
    "mysql_perf_schema_waits": {"ps"},
    "mysql_user_statistics": {"process"},  # without it USER_/CLIENT_STATISTICS are empty
    "mysql_accounts": {"select"},  # SELECT on mysql.user
    "mysql_innodb_tablespaces": {"process"},
    "mysql_statement_totals": {"ps"},
    "mysql_perf_schema_memory": {"ps"},
    "mysql_sys_user_summary": {"ps", "select"},  # sys's views read performance_schema
}
# Collectors whose failure keeps what the role could see (status variables, table sizes;
# read_only and the channels without the replica count, asserted below).
PARTIAL = frozenset({"mysql_replication", "mysql_innodb", "mysql_tables",
                     "mysql_auto_increment"})


def _user(kind: str) -> str:
    return f"dbgauge_lpm_{kind}"


def _needs(collector: str, node: str) -> set[str]:
    if collector == "mysql_heartbeat":  # reads the table where it is configured to
        return {"heartbeat"} if node == "mariadb-replica" else set()
    return NEEDS.get(collector, set())


def _config(sandbox: Sandbox, directory: Path, kind: str) -> Path:
    targets = []
    for node in NODES:
        entry = target_entry(sandbox, node)
        entry["dsn"] = str(entry["dsn"]).replace("//dbgauge@", f"//{_user(kind)}@")
        entry["password_file"] = str(directory / "password")
        entry["heartbeat"] = {"mode": "read"} if node == "mariadb-replica" else None
        targets.append(entry)
    path = directory / f"{kind}.yaml"
    path.write_text(yaml.safe_dump({"targets": targets}))
    return path


@pytest.fixture(scope="module")
def accounts(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[dict[str, Path]]:
    """The accounts, created on the primary (replicated: the GTID positions stay one
    history), and for each a config naming both MariaDB servers as it."""
    directory = tmp_path_factory.mktemp("least-privilege-mysql")
    password = f"lpm-{sandbox.state.dbgauge_password}"
    (directory / "password").write_text(password)
    (directory / "password").chmod(0o600)
    statements: list[str] = []
    for kind, (privileges, _) in ACCOUNTS.items():
        statements += [f"CREATE OR REPLACE USER {_user(kind)}@'%' IDENTIFIED BY '{password}'",
                       f"GRANT {privileges} ON *.* TO {_user(kind)}@'%'"]
    # an InnoDB table only SELECT ON *.* shows: hidden from the sizes of every other account
    statements += ["CREATE TABLE IF NOT EXISTS app.lpm_hidden (id INT PRIMARY KEY) "
                   "ENGINE=InnoDB",
                   f"CREATE OR REPLACE ROLE {ROLE}", f"GRANT PROCESS ON *.* TO {ROLE}",
                   f"GRANT {ROLE} TO {_user('role')}@'%'",
                   f"SET DEFAULT ROLE {ROLE} FOR {_user('role')}@'%'",
                   f"DROP USER IF EXISTS {_user('minimum')}@'%'",
                   *documented_grants("mariadb", _user("minimum"), password)]
    execute(sandbox, "mariadb-primary", *statements)
    replica_caught_up(sandbox)
    try:
        yield {kind: _config(sandbox, directory, kind) for kind in (*ACCOUNTS, "minimum")}
    finally:
        execute(sandbox, "mariadb-primary", f"DROP ROLE IF EXISTS {ROLE}",
                "DROP TABLE IF EXISTS app.lpm_hidden",
                *(f"DROP USER IF EXISTS {_user(kind)}@'%'" for kind in (*ACCOUNTS, "minimum")))
        replica_caught_up(sandbox)


def _has(kind: str) -> frozenset[str]:
    return MINIMUM if kind == "minimum" else ACCOUNTS[kind][1]


def _truth(sandbox: Sandbox, node: str) -> dict[str, float]:
    """What the administrator sees: binlog dump threads and the replication threads by user
    (the ones that stay while the test runs)."""
    rows = run(sandbox, node, "SELECT USER AS user, COMMAND AS command "
                              "FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()")
    dumps = [r for r in rows if str(r["command"]).startswith("Binlog Dump")]
    steady = {str(r["user"]) for r in dumps} | {"system user"}
    by_user = {u: float(sum(1 for r in rows if r["user"] == u)) for u in steady}
    return {"replicas": float(len(dumps)), **{f"user:{u}": n for u, n in by_user.items() if n}}


def _scrape(sandbox: Sandbox, config: Path, kind: str, node: str
            ) -> tuple[dict[str, str], dict[tuple[str, frozenset[tuple[str, str]]], float]]:
    """Every MariaDB collector once on `node` as `kind`: the failed ones with their
    error, and the samples."""
    entry = next(t for t in yaml.safe_load(config.read_text())["targets"] if t["name"] == node)
    names = [c.name for c in registry().for_kind("mysql") if "mariadb" in c.flavors]
    with scraper(sandbox, node, dsn=entry["dsn"], password_file=entry["password_file"],
                 heartbeat=entry["heartbeat"], collectors=names) as scrape:
        result = scrape.runner.scrape(time.monotonic() + 8, None)
    assert result.up, result.error
    assert {r.collector for r in result.collectors} >= set(names) - {"mysql_group_replication"}
    failed = {r.collector: r.error or "" for r in result.collectors if not r.success}
    return failed, {(s.name, frozenset(s.labels)): s.value for s in result.samples}


def _sum(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str,
         **labels: str) -> float | None:
    found = [v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= ls]
    return sum(found) if found else None


def _heartbeat_table_replicated(sandbox: Sandbox) -> None:
    """The heartbeat table the replica's reader needs, as a daemon's writer on the primary
    makes it: this file must not depend on a test before it having run one."""
    def rows() -> int | None:
        try:
            return int(one(sandbox, "mariadb-replica",
                           "SELECT COUNT(*) FROM dbgauge.heartbeat")[0]) or None
        except Exception:  # not created (or not replicated) yet
            return None

    with heartbeat(sandbox):
        wait_for(rows, what="the heartbeat table with a row on the replica")


def test_each_collector_is_right_or_fails_naming_the_grant(
        sandbox: Sandbox, accounts: dict[str, Path]) -> None:
    """USAGE, PROCESS, REPLICATION CLIENT, SLAVE MONITOR, PROCESS through a role, the
    documented minimum, on both servers: exactly the collectors needing a missing privilege
    fail, each naming a grant it lacks; a failed one exports none of its series but what it
    could see (read_only without the replica count); connected replicas and the
    processlist's replication threads, where exported, are what the administrator sees."""
    families = {c.name: {m.name for m in c.metrics} for c in registry().for_kind("mysql")}
    _heartbeat_table_replicated(sandbox)
    for node in NODES:
        truth = _truth(sandbox, node)
        assert node != "mariadb-primary" or truth["replicas"] >= 1  # a count to get wrong
        for kind in (*ACCOUNTS, "minimum"):
            has = _has(kind)
            failed, samples = _scrape(sandbox, accounts[kind], kind, node)
            expected = {c for c in families if "mariadb" in _flavors(c)
                        and not _needs(c, node) <= has}
            assert set(failed) == expected, (kind, node, failed)
            assert kind != "minimum" or not failed, failed
            for collector, error in failed.items():
                lacking = [GRANTS[p] for p in _needs(collector, node) - has]
                assert any(g in error for g in lacking), (kind, node, collector, error)
                exported = {n for n, _ in samples if _family(n) in families[collector]}
                assert collector in PARTIAL or not exported, (kind, node, collector, exported)
            # tables the account cannot see: counted (with PROCESS), never a silent top-N
            hidden = _sum(samples, "dbgauge_mysql_tables_hidden")
            if "process" not in has:
                assert hidden is None, (kind, node, hidden)
            elif "select" not in has:
                assert hidden is not None and hidden >= 1, (kind, node, hidden)
                assert _sum(samples, "dbgauge_mysql_table_sizes_truncated") == 1
                assert "are not in information_schema.TABLES" in failed["mysql_tables"]
            else:
                assert hidden == 0, (kind, node, hidden)
            # and so are their AUTO_INCREMENT columns
            assert _sum(samples, "dbgauge_mysql_auto_increment_tables_hidden") == hidden
            replicas = _sum(samples, "dbgauge_mysql_connected_replicas")
            if "mysql_replication" in failed:
                assert replicas is None, (kind, node)  # never "0 replicas" it cannot see
                if "slave" in has:  # only the count is missing: read_only stands
                    assert "connected replicas unknown" in failed["mysql_replication"]
                    assert _sum(samples, "dbgauge_mysql_read_only") is not None, (kind, node)
            else:
                assert replicas == truth["replicas"], (kind, node, replicas, truth)
            if "mysql_processlist" not in failed:
                for key, count in truth.items():
                    if key.startswith("user:"):
                        got = _sum(samples, "dbgauge_mysql_processlist_threads_by_user",
                                   user=key[5:])
                        assert got == count, (kind, node, key, got, count)


def _flavors(collector: str) -> frozenset[str]:
    return next(c.flavors for c in registry().for_kind("mysql") if c.name == collector)


def _family(sample: str) -> str:
    for suffix in ("_total", "_bucket", "_count", "_sum", "_created"):
        if sample.endswith(suffix):
            return sample[: -len(suffix)]
    return sample


CHECKS = {  # the check's arguments, what it needs on MariaDB (docs/mysql.md, docs/checks.md)
    ("connections",): set(),
    ("uptime", "-w", "1:", "-c", "1:"): set(),
    ("history-list",): {"process"},
    ("txn-time",): {"process"},
    ("locks",): {"process", "ps"},
    ("replication",): {"slave"},
    ("lag",): {"slave", "heartbeat"},  # the replica reads the heartbeat
    ("split-brain", "--heartbeat-wait", "0.5"): {"slave", "heartbeat"},
}


def _check(config: Path, args: tuple[str, ...]) -> Outcome:
    return check(*args[:1], "--config", str(config), "--target", NODES[0], "--target",
                 NODES[1], *args[1:])


def test_each_check_is_what_the_minimum_gets_or_unknown_naming_the_grant(
        sandbox: Sandbox, accounts: dict[str, Path]) -> None:
    """With a heartbeat writer on the primary: the documented minimum gets every check OK
    (lag from the heartbeat); a smaller account gets the same where it holds what the
    check needs, else UNKNOWN [insufficient-privilege] with a grant it lacks -- never OK
    (split-brain without the heartbeat table: not "no concurrent writers")."""
    with heartbeat(sandbox):
        replica_caught_up(sandbox)
        for args in CHECKS:
            got = _check(accounts["minimum"], args)
            assert got.code == 0 and "[insufficient-privilege]" not in got.out, got.out
            assert args[0] != "lag" or "(heartbeat of server_id " in got.first, got.out
        runs = [(kind, args) for kind in ACCOUNTS for args in CHECKS]
        with ThreadPoolExecutor(max_workers=3) as pool:  # one CLI process each: ~1 s
            outcomes = list(pool.map(lambda r: _check(accounts[r[0]], r[1]), runs))
        for (kind, args), got in zip(runs, outcomes, strict=True):
            has, needs = _has(kind), CHECKS[args]
            if needs <= has:
                assert got.code == 0, (kind, args, got.out)
                continue
            assert got.code == 3 and "[insufficient-privilege]" in got.out, (kind, args, got.out)
            assert any(GRANTS[p] in got.out for p in needs - has), (kind, args, got.out)
