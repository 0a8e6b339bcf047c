"""The docs' command examples, rendered for the sandbox and run: each `dbgauge ...` line of
a fenced block in README.md and docs/checks.md, its hosts, users, targets and files made the
sandbox's, must exit as documented (0 unless `EXPECT` says otherwise: the sandbox is
healthy). An example this module cannot render fails the test, so a new example comes with
its rendering (or a reason in `NOT_RUN`)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dbgauge.toolkit.sandbox.model import ADMIN_USER, MONITOR_USER
from tests.helpers import DBGAUGE, REPO
from tests.helpers.servers import Sandbox, caught_up, execute

pytestmark = pytest.mark.integration

COMMAND = re.compile(r"^(?:\w+=\S+ )*dbgauge(?: |$)")


DOCS = (REPO / "README.md", REPO / "docs" / "checks.md")


def readme_examples(path: Path = REPO / "README.md") -> list[str]:
    """Every `dbgauge` command line of the file's fenced blocks (continuations joined,
    comments dropped)."""
    out = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", path.read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if COMMAND.match(line.strip()):
                out.append(shlex.join(shlex.split(line, comments=True)))
    return out


@dataclass(frozen=True)
class Run:
    """An example as run on the sandbox: argv after `dbgauge`, extra environment, and the
    exit status the docs promise."""

    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    exit: int = 0
    says: str = ""  # a piece its stdout must hold
    after: Callable[[], None] = lambda: None  # undo what the rendering set up


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


# README example (as extracted) -> its rendering on the sandbox
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
}


# the docs' example hosts and targets -> the sandbox's instances
HOSTS = {"db1": "mariadb-primary", "db2": "mariadb-replica", "db3": "pg-primary"}
TARGETS = {"orders-replica": "mariadb-replica", "orders-primary": "mariadb-primary"}
URI = re.compile(r"(mysql|postgresql)://dbgauge@(db\d)(?::(\d+))?/")
PT_HOST = re.compile(r"h=(db\d),P=\d+")
# examples that need what the sandbox does not have, and why
NOT_RUN = {
    "dbgauge check lag --node mysql://dbgauge@db2:3306/ --heartbeat-table percona.heartbeat":
        "needs a pt-heartbeat writer (tests/integration/test_heartbeat_cli.py runs one)",
    "dbgauge check lag --config dbgauge.yaml -w 10 -c 60":
        "the sandbox config reads MariaDB lag from the heartbeat its daemon writes",
}
# exit codes other than 0 the docs promise on the sandbox: uptime alerts below an hour
EXPECT = {"dbgauge check uptime --config dbgauge.yaml -w 3600: -c 600:": {0, 1, 2}}


def generic(example: str, sandbox: Sandbox) -> Run:
    """A docs example with the sandbox's config, targets, addresses and password."""
    def uri(m: re.Match[str]) -> str:
        name = "pgbouncer" if m.group(3) == "6432" else HOSTS[m.group(2)]
        return f"{m.group(1)}://dbgauge@127.0.0.1:{sandbox.state.port(name)}/"

    text = URI.sub(uri, example)
    text = PT_HOST.sub(lambda m: f"h=127.0.0.1,P={sandbox.state.port(HOSTS[m.group(1)])}",
                       text)
    args = shlex.split(text)[1:]
    for i, arg in enumerate(args):
        before = args[i - 1] if i else ""
        if before == "--config":
            args[i] = str(sandbox.config)
        elif before in ("--target", "--targets"):
            args[i] = ",".join(TARGETS.get(n, HOSTS.get(n, n)) for n in arg.split(","))
        elif before == "--password-file":
            args[i] = str(sandbox.state.dbgauge_password_file)
    # a password for the DSNs that carry none, as ~/.pgpass or the environment gives it
    return Run(args, {"DBGAUGE_PW": sandbox.state.dbgauge_password,
                      "PGPASSWORD": sandbox.state.dbgauge_password})


def all_examples() -> list[str]:
    return sorted({e for path in DOCS for e in readme_examples(path)})


def test_every_docs_example_is_run_or_says_why_not() -> None:
    assert set(NOT_RUN) <= set(all_examples())
    assert set(RENDER) <= set(all_examples())
    assert set(EXPECT) <= set(all_examples())


@pytest.mark.parametrize("example", [e for e in all_examples() if e not in NOT_RUN])
def test_docs_example_runs_on_the_sandbox(sandbox: Sandbox, tmp_path: Path,
                                          example: str) -> None:
    run = RENDER[example](sandbox, tmp_path) if example in RENDER else generic(example,
                                                                                sandbox)
    try:
        proc = subprocess.run([*DBGAUGE, *run.args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, check=False, env={**os.environ, **run.env})
    finally:
        run.after()
    assert proc.returncode in EXPECT.get(example, {run.exit}), (example, run.args,
                                                                proc.stdout, proc.stderr)
    assert run.says in proc.stdout, (example, proc.stdout)
