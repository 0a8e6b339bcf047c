"""The docs' command examples, rendered for the sandbox and run: each `dbgauge ...` line of
a fenced block in README.md and docs/*.md, its hosts, users, targets and files made the
sandbox's (tests/helpers/docs.py), must exit as documented (0 unless `EXPECT` says
otherwise: the sandbox is healthy) and print what the docs show. An example this module
cannot render fails the test, so a new example comes with its rendering (or a reason in
`NOT_RUN`). The examples run concurrently, long-running ones bounded (started first, waited
for, stopped with SIGINT)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from dbgauge.toolkit.sandbox.model import ADMIN_USER, MONITOR_USER
from tests.helpers import DBGAUGE, free_port, wait_for
from tests.helpers.docs import Run, all_examples, generic
from tests.helpers.servers import Sandbox, caught_up, execute, one, pg_admin
from tests.helpers.servers import run as admin_run

pytestmark = pytest.mark.integration


def _pg(sandbox: Sandbox, name: str) -> dict[str, str]:
    return {"PGHOST": "127.0.0.1", "PGPORT": str(sandbox.state.port(name)),
            "PGPASSWORD": sandbox.state.dbgauge_password}


def _pgtap(sandbox: Sandbox, tmp: Path) -> Run:
    (tmp / "t").mkdir()
    (tmp / "t" / "one.sql").write_text("SELECT plan(1);\nSELECT ok(true, 'one');\n"
                                       "SELECT * FROM finish();\n")
    return Run(["pgtap", "run", "-h", "127.0.0.1", "-p", str(sandbox.state.port("pg-primary")),
                "-U", ADMIN_USER, "-d", "app", "t/"],
               {"PGPASSWORD": sandbox.state.postgres.admin_password}, says="Result: PASS")


def _defaults_file(sandbox: Sandbox, tmp: Path) -> Run:
    cnf = tmp / "orders.cnf"
    cnf.write_text(f"[client]\nuser={MONITOR_USER}\npassword={sandbox.state.dbgauge_password}\n"
                   f"host=127.0.0.1\nport={sandbox.state.port('mariadb-replica')}\n")
    return Run(["check", "lag", "--defaults-file", str(cnf)], says="LAG OK")


def _checksum(sandbox: Sandbox, _tmp: Path) -> Run:
    """A clean two-chunk table, compared with pt DSNs (the replica's inherits nothing: pt's
    would inherit u= and p=, dbgauge's takes them from the source's)."""
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.docs_orders",
            "CREATE TABLE app.docs_orders (id INT PRIMARY KEY, v INT)",
            "INSERT INTO app.docs_orders SELECT seq, seq FROM app.seq_1_to_1500")
    caught_up(sandbox)
    state = sandbox.state
    source = (f"h=127.0.0.1,P={state.port('mariadb-primary')},u={state.mariadb.admin_user},"
              f"p={state.mariadb.admin_password}")
    return Run(["checksum", "--source", source, "--replica",
                f"h=127.0.0.1,P={state.port('mariadb-replica')},u={state.mariadb.admin_user},"
                f"p={state.mariadb.admin_password}", "--tables", "app.docs_orders",
                "--chunk-size", "1000", "--method", "direct"], says="app.docs_orders",
               after=lambda: execute(sandbox, "mariadb-primary",
                                     "DROP TABLE IF EXISTS app.docs_orders"))


def _scrape(port: int, piece: str) -> Callable[[str], bool]:
    """Ready once the daemon's /metrics holds `piece`."""
    def ready(_out: str) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                return piece in r.read().decode()
        except OSError:
            return False
    return ready


def _serve_config(sandbox: Sandbox, tmp: Path) -> Run:
    """The sandbox's config on a port of its own (the session's daemon has the config's)."""
    port = free_port()
    config = tmp / "dbgauge.yaml"
    config.write_text(re.sub(r"listen: \S+", f"listen: 127.0.0.1:{port}",
                             sandbox.config.read_text()))
    return Run(["serve", "--config", str(config), "--compat", "mysqld_exporter,postgres_exporter"],
               says="listening on", ready=_scrape(port, "mysql_up{"))


def _serve_postgres_exporter(sandbox: Sandbox, tmp: Path) -> Run:
    run = generic("DATA_SOURCE_NAME=postgresql://exporter@db1:5432/postgres?sslmode=require "
                  "dbgauge serve --web.listen-address=:9187 --extend.query-path=/etc/queries.yaml",
                  sandbox, tmp)
    port = free_port()
    queries = tmp / "queries.yaml"  # postgres_exporter's format
    queries.write_text('pg_docs:\n  query: "SELECT 1 AS one"\n  metrics:\n'
                       '    - one:\n        usage: "GAUGE"\n        description: "One."\n')
    args = [f"--web.listen-address=127.0.0.1:{port}" if a.startswith("--web.") else
            f"--extend.query-path={queries}" if a.startswith("--extend.") else a
            for a in run.args]
    return replace(run, args=args, says="listening on", ready=_scrape(port, "pg_docs_one{"))


def _serve_mysqld_exporter(sandbox: Sandbox, _tmp: Path) -> Run:
    port = free_port()
    return Run(["serve", f"--mysqld.address=127.0.0.1:{sandbox.state.port('mariadb-primary')}",
                f"--mysqld.username={MONITOR_USER}", "--collect.binlog_size",
                "--no-collect.info_schema.innodb_cmp", f"--web.listen-address=127.0.0.1:{port}"],
               {"MYSQLD_EXPORTER_PASSWORD": sandbox.state.dbgauge_password},
               says="listening on", ready=_scrape(port, "mysql_binlog_files"))


def _pgtap_set(sandbox: Sandbox, tmp: Path) -> Run:
    run = generic("dbgauge pgtap run test/schema.sql test/api.pg --set tenant=acme", sandbox, tmp)
    (tmp / "test" / "api.pg").write_text("SELECT plan(1);\nSELECT is(:'tenant'::text, 'acme');\n"
                                         "SELECT * FROM finish();\n")
    return replace(run, says="Result: PASS")


def _pg_checksum(sandbox: Sandbox, tmp: Path) -> Run:
    """A table on the primary, replayed on the standby, readable by the monitoring role."""
    with pg_admin(sandbox, "pg-primary") as conn:
        conn.execute("DROP TABLE IF EXISTS public.docs_orders")
        conn.execute("CREATE TABLE public.docs_orders (id int PRIMARY KEY, v int)")
        conn.execute("INSERT INTO public.docs_orders SELECT g, g FROM generate_series(1, 500) g")
        conn.execute(f"GRANT SELECT ON public.docs_orders TO {MONITOR_USER}")

    def replayed() -> bool:
        with pg_admin(sandbox, "pg-standby") as conn:
            there = conn.execute("SELECT to_regclass('public.docs_orders')").fetchone()
            return bool(there and there[0]) and conn.execute(
                "SELECT count(*) FROM public.docs_orders").fetchone() == (500,)

    wait_for(lambda: replayed() or None, timeout=30, what="docs_orders on the standby")

    def drop() -> None:
        with pg_admin(sandbox, "pg-primary") as conn:
            conn.execute("DROP TABLE IF EXISTS public.docs_orders")

    run = generic("dbgauge checksum --source postgresql://dbgauge@pg1/app --replica "
                  "postgresql://dbgauge@pg2/app --format json", sandbox, tmp)
    # the sandbox's app database also holds what other tests on this worker left (a table
    # the monitoring role may not read is unchecked, exit 2): the example's own table only
    return replace(run, args=[*run.args, "--tables", "public.docs_orders"],
                   says='"status": "ok"', after=drop)


def _shop(sandbox: Sandbox) -> Callable[[], None]:
    """drift.md's shop tables on the MariaDB pair and a pt DSN table naming the replica
    (rendered into dbgauge's schema, where the monitoring account may write); the undo."""
    port = sandbox.state.port("mariadb-replica")
    execute(sandbox, "mariadb-primary", "CREATE DATABASE IF NOT EXISTS shop",
            "CREATE TABLE IF NOT EXISTS shop.orders (id INT PRIMARY KEY, v INT)",
            "INSERT IGNORE INTO shop.orders SELECT seq, seq FROM app.seq_1_to_1500",
            "CREATE TABLE IF NOT EXISTS shop.items (id INT PRIMARY KEY, order_id INT)",
            "INSERT IGNORE INTO shop.items SELECT seq, seq DIV 3 FROM app.seq_1_to_1500",
            "CREATE TABLE IF NOT EXISTS dbgauge.dsns (id INT PRIMARY KEY, parent_id INT, "
            "dsn VARCHAR(255) NOT NULL)")
    admin_run(sandbox, "mariadb-primary", ("REPLACE INTO dbgauge.dsns VALUES (1, NULL, %s)",
                                           (f"h=127.0.0.1,P={port}",)))
    caught_up(sandbox)

    def undo() -> None:
        execute(sandbox, "mariadb-primary", "DROP DATABASE IF EXISTS shop",
                "DROP TABLE IF EXISTS dbgauge.dsns")
        if one(sandbox, "mariadb-primary", "SELECT COUNT(*) FROM information_schema.tables "
               "WHERE table_schema = 'dbgauge' AND table_name = 'checksums'")[0]:
            execute(sandbox, "mariadb-primary", "DELETE FROM dbgauge.checksums WHERE db = 'shop'")
    return undo


def _drift(example: str) -> Callable[[Sandbox, Path], Run]:
    def render(sandbox: Sandbox, tmp: Path) -> Run:
        return replace(generic(example, sandbox, tmp), after=_shop(sandbox), says="shop.orders")
    return render


def _check_only(sandbox: Sandbox, tmp: Path) -> Run:
    """What a replicated run left in a replicate table of its own (chunks walked: a table
    the whole-table pre-check finds equal leaves no chunk rows), then read back."""
    undo = _shop(sandbox)
    subprocess.run([*DBGAUGE, "checksum", "--source", sandbox.admin_dsn("mariadb-primary"),
                    "--replica", sandbox.admin_dsn("mariadb-replica"), "--tables", "shop.*",
                    "--replicate", "dbgauge.docs_checksums", "--whole-table-time", "0"],
                   check=True, capture_output=True, timeout=60)
    caught_up(sandbox)
    run = generic("dbgauge checksum --source mysql://dbgauge@db1/ --password-file pw "
                  "--recursion-method dsn=D=percona,t=dsns --replicate percona.docs_checksums "
                  "--replicate-check-only", sandbox, tmp)

    def after() -> None:
        undo()
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS dbgauge.docs_checksums")
    return replace(run, says="shop.orders", after=after)


def _drift_checking_account(sandbox: Sandbox, tmp: Path) -> Run:
    """The sandbox's config with the checking account of drift.md's grants (the sandbox's
    admin) on the MariaDB targets: the replicated method sets binlog_format."""
    config = tmp / "dbgauge.yaml"
    config.write_text(sandbox.config.read_text()
                      .replace(f"mysql://{MONITOR_USER}@",
                               f"mysql://{sandbox.state.mariadb.admin_user}@")
                      .replace("password_file: ", "password_env: DOCS_PW\n    # was "))
    return Run(["checksum", "--config", str(config), "--source", "mariadb-primary",
                "--replica", "mariadb-replica"], {"DOCS_PW": sandbox.state.mariadb.admin_password},
               says="shop.orders", after=_shop(sandbox))


# docs example (as extracted) -> its rendering on the sandbox, where the generic one
# (tests/helpers/docs.py) does not do
RENDER: dict[str, Callable[[Sandbox, Path], Run]] = {
    "PGHOST=db1 PGUSER=dbgauge PGDATABASE=app dbgauge check connections --node postgresql://":
        lambda sb, _t: Run(["check", "connections", "--node", "postgresql://"],
                           {**_pg(sb, "pg-primary"), "PGUSER": MONITOR_USER,
                            "PGDATABASE": "app"}, says="CONNECTIONS OK"),
    "dbgauge check replication --node 'standby=host=db2 dbname=app sslmode=require'":
        lambda sb, _t: Run(["check", "replication", "--node",
                            f"standby=host=127.0.0.1 port={sb.state.port('pg-standby')} "
                            f"user={MONITOR_USER} dbname=app sslmode=disable"],
                           {"PGPASSWORD": sb.state.dbgauge_password}, says="REPLICATION OK"),
    "dbgauge pgtap run -h db1 -U ci -d app t/": _pgtap,
    "dbgauge check lag --defaults-file /etc/dbgauge/orders.cnf": _defaults_file,
    "_DBGAUGE_COMPLETE=fish_source dbgauge '|' source": lambda _s, _t: Run(
        [], {"_DBGAUGE_COMPLETE": "fish_source"}, says="complete"),
    "dbgauge checksum --source h=db1,u=checksum,p=... --replica h=db2 --tables shop.orders "
    "--chunk-size 1000": _checksum,
    "dbgauge --help": lambda _s, _t: Run(["--help"], says="Usage: dbgauge"),
    "dbgauge serve --config /etc/dbgauge/dbgauge.yaml --compat mysqld_exporter,postgres_exporter":
        _serve_config,
    "'DATA_SOURCE_NAME=postgresql://exporter@db1:5432/postgres?sslmode=require' dbgauge serve "
    "--web.listen-address=:9187 --extend.query-path=/etc/queries.yaml": _serve_postgres_exporter,
    "MYSQLD_EXPORTER_PASSWORD=... dbgauge serve --mysqld.address=db1:3306 "
    "--mysqld.username=exporter --collect.binlog_size --no-collect.info_schema.innodb_cmp":
        _serve_mysqld_exporter,
    "dbgauge pgtap run test/schema.sql test/api.pg --set tenant=acme": _pgtap_set,
    "dbgauge checksum --source postgresql://dbgauge@pg1/app --replica postgresql://dbgauge@pg2/app "
    "--format json": _pg_checksum,
    "dbgauge checksum --config dbgauge.yaml --source orders-primary --replica orders-replica":
        _drift_checking_account,
    "dbgauge checksum --source mysql://dbgauge@db1/ --password-file pw --recursion-method "
    "dsn=D=percona,t=dsns --replicate percona.checksums --replicate-check-only": _check_only,
    "dbgauge checksum --source mysql://dbgauge@db1:3306/ --replica mysql://dbgauge@db2:3306/ "
    "--password-file pw.txt --method direct --tables shop.orders,shop.items --print-repair":
        _drift("dbgauge checksum --source mysql://dbgauge@db1:3306/ --replica "
               "mysql://dbgauge@db2:3306/ --password-file pw.txt --method direct --tables "
               "shop.orders,shop.items --print-repair"),
    "dbgauge collect --config dbgauge.yaml db1 --compat mysqld_exporter --compat-only":
        lambda sb, t: generic("dbgauge collect --config dbgauge.yaml mariadb-primary --compat "
                              "mysqld_exporter --compat-only", sb, t),
}

# examples that need what the sandbox does not have, and why
NOT_RUN = {
    "dbgauge checksum --source mysql://dbgauge@db1/ --password-file pw --tables 'shop.*' "
    "--replicate percona.checksums --max-load Threads_running=50,Threads_connected=800":
        "the default --recursion-method (processlist,hosts) finds no replica here: the "
        "sandbox's replica sets no report_host (the other drift examples run)",
}


def _beating(sandbox: Sandbox) -> Callable[[str], bool]:
    def ready(_out: str) -> bool:
        try:
            return bool(one(sandbox, "mariadb-replica", "SELECT COUNT(*) AS n FROM "
                                                         "dbgauge.heartbeat")[0])
        except Exception:  # not there yet (no table, not replicated): keep waiting
            return False
    return ready


# long-running examples -> the state they are waited for (then they are stopped)
READY: dict[str, Callable[[Sandbox], Callable[[str], bool]]] = {
    "dbgauge heartbeat update mysql://dbgauge@db1:3306/ --password-file /etc/dbgauge/pw "
    "--create-table": _beating,
    "dbgauge heartbeat monitor db2=mysql://dbgauge@db2/ db3=mysql://dbgauge@db3/ "
    "--password-file pw": lambda _sb: lambda out: "s [" in out,
    "dbgauge heartbeat monitor mysql://dbgauge@db2/ -D percona --table heartbeat --utc":
        lambda _sb: lambda out: "s [" in out,
    "dbgauge status --config dbgauge.yaml --watch 5": lambda _sb: lambda out: "pg-primary" in out,
}
# the daemons of the docs, each waited for until its /metrics shows what the docs promise
SERVE = ("dbgauge serve --config /etc/dbgauge/dbgauge.yaml --compat "
         "mysqld_exporter,postgres_exporter",
         "'DATA_SOURCE_NAME=postgresql://exporter@db1:5432/postgres?sslmode=require' dbgauge serve "
         "--web.listen-address=:9187 --extend.query-path=/etc/queries.yaml",
         "MYSQLD_EXPORTER_PASSWORD=... dbgauge serve --mysqld.address=db1:3306 "
         "--mysqld.username=exporter --collect.binlog_size --no-collect.info_schema.innodb_cmp")
# exit codes other than 0 the docs promise on the sandbox: uptime alerts below an hour
EXPECT = {"dbgauge check uptime --config dbgauge.yaml -w 3600: -c 600:": {0, 1, 2},
          # docs/validate.md: on MariaDB the live check stops with exit 2
          "dbgauge validate innodb-cluster --live mysql://clusteradmin@db1:3306/ "
          "--password-file pw": {2}}
# a piece of the output, where the generic one (tests/helpers/docs.py `says`) does not fit
SAYS = {"dbgauge check uptime --config dbgauge.yaml -w 3600: -c 600:": "UPTIME ",
        "dbgauge validate innodb-cluster --live mysql://clusteradmin@db1:3306/ "
        "--password-file pw": "do not exist on MariaDB"}


@dataclass(frozen=True)
class Outcome:
    """What one example did: its rendering and process, or why it could not be rendered."""

    run: Run | None
    proc: subprocess.CompletedProcess[str] | None
    error: str = ""


def _render(example: str, sandbox: Sandbox, tmp: Path) -> Run:
    run = RENDER[example](sandbox, tmp) if example in RENDER else generic(example, sandbox, tmp)
    if example in READY:
        run = replace(run, ready=READY[example](sandbox))
    if example in SAYS:
        return replace(run, says=SAYS[example])
    return run


def _run(example: str, run: Run, cwd: Path) -> Outcome:
    try:
        return Outcome(run, subprocess.run([*DBGAUGE, *run.args], cwd=cwd, capture_output=True,
                                           text=True, timeout=60, check=False,
                                           env={**os.environ, **run.env}))
    except subprocess.TimeoutExpired:
        return Outcome(run, None, f"{example}: still running after 60 s")


def _start(run: Run, cwd: Path) -> subprocess.Popen[str]:
    with (cwd / "stdout").open("w") as out, (cwd / "stderr").open("w") as err:
        return subprocess.Popen([*DBGAUGE, *run.args], cwd=cwd, stdout=out, stderr=err,
                                text=True, env={**os.environ, **run.env})


def _stop(proc: subprocess.Popen[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc.send_signal(signal.SIGINT)  # Ctrl-C: the state last shown (status --watch)
    proc.wait(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, (cwd / "stdout").read_text(),
                                       (cwd / "stderr").read_text())


def _came_up(run: Run, tmp: Path) -> bool:
    """Whether a long-running example reached its state within a minute."""
    assert run.ready is not None
    try:
        wait_for(lambda: run.ready((tmp / "stdout").read_text())  # type: ignore[misc]
                 or None, timeout=60, what="ready")
    except AssertionError:
        return False
    return True


@pytest.fixture(scope="module")
def outcomes(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[dict[str, Outcome]]:
    """Every runnable example, rendered in a directory of its own and run: the long-running
    ones first (each waited for until ready), then the rest four at a time."""
    renders: dict[str, tuple[Run, Path]] = {}
    result: dict[str, Outcome] = {}
    for example in [e for e in all_examples() if e not in NOT_RUN]:
        tmp = tmp_path_factory.mktemp("example")
        try:
            renders[example] = (_render(example, sandbox, tmp), tmp)
        except Exception as exc:  # reported by the example's own test
            result[example] = Outcome(None, None, f"cannot render: {exc!r}")
    daemons: dict[str, subprocess.Popen[str]] = {}
    try:
        for example in sorted(READY.keys() | SERVE, key=lambda e: "heartbeat update" not in e):
            if example in renders:
                daemons[example] = _start(*renders[example])
                if not _came_up(*renders[example]):
                    result[example] = Outcome(None, _stop(daemons.pop(example),
                                                          renders[example][1]), "not ready")
        plain = {e: r for e, r in renders.items() if r[0].ready is None}
        # CREATE EXTENSION pgtap, the replicate table: one at a time, in order
        alone = {e for e in plain if "pgtap" in e or "checksum" in e}
        with ThreadPoolExecutor(4) as pool:
            done = {e: pool.submit(_run, e, *r) for e, r in plain.items() if e not in alone}
            result |= {e: _run(e, *plain[e]) for e in sorted(alone)}
            result |= {e: f.result() for e, f in done.items()}
    finally:
        result |= {e: Outcome(renders[e][0], _stop(p, renders[e][1]))
                   for e, p in daemons.items()}
        for run, _tmp in renders.values():
            run.after()
    yield result


def test_every_docs_example_is_run_or_says_why_not() -> None:
    for table in (NOT_RUN, RENDER, EXPECT, SAYS, READY, SERVE):
        assert set(table) <= set(all_examples()), set(table) - set(all_examples())
    assert set(SERVE) <= set(RENDER), "a daemon's rendering says when it is ready"


@pytest.mark.parametrize("example", [e for e in all_examples() if e not in NOT_RUN])
def test_docs_example_runs_on_the_sandbox(outcomes: dict[str, Outcome], example: str) -> None:
    outcome = outcomes[example]
    assert outcome.run is not None and outcome.proc is not None, (outcome.error, outcome.proc)
    run, proc = outcome.run, outcome.proc
    assert proc.returncode in EXPECT.get(example, {run.exit}), (example, run.args,
                                                                proc.stdout, proc.stderr)
    # a writer that prints nothing is proven by the state it was waited for
    assert run.says or run.ready is not None, f"{example}: say what it prints (SAYS)"
    assert run.says in proc.stdout + proc.stderr, (example, proc.stdout, proc.stderr)
