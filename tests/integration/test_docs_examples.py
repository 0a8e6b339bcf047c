"""The README's command examples, rendered for the sandbox and run: each `dbgauge ...` line
of a fenced block, its hosts, users and files made the sandbox's, must exit as documented
(0: every README example is one meant to work). A README example this module cannot render
fails the test, so a new example comes with its rendering."""

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
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

COMMAND = re.compile(r"^(?:\w+=\S+ )*dbgauge(?: |$)")


def readme_examples(path: Path = REPO / "README.md") -> list[str]:
    """Every `dbgauge` command line of the file's fenced blocks (continuations joined,
    comments dropped)."""
    out = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", path.read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if COMMAND.match(line.strip()):
                out.append(" ".join(shlex.split(line, comments=True)))
    return out


@dataclass(frozen=True)
class Run:
    """An example as run on the sandbox: argv after `dbgauge`, extra environment, and the
    exit status the docs promise."""

    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    exit: int = 0
    says: str = ""  # a piece its stdout must hold


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


# README example (as extracted) -> its rendering on the sandbox
RENDER: dict[str, Callable[[Sandbox, Path], Run]] = {
    "PGHOST=db1 PGUSER=dbgauge PGDATABASE=app dbgauge check connections --node postgresql://":
        lambda sb, _t: Run(["check", "connections", "--node", "postgresql://"],
                           {**_pg(sb, "pg-primary"), "PGUSER": MONITOR_USER,
                            "PGDATABASE": "app"}, says="CONNECTIONS OK"),
    "dbgauge check replication --node standby=host=db2 dbname=app sslmode=require":
        lambda sb, _t: Run(["check", "replication", "--node",
                            f"standby=host=127.0.0.1 port={sb.state.port('pg-standby')} "
                            f"user={MONITOR_USER} dbname=app sslmode=disable"],
                           {"PGPASSWORD": sb.state.dbgauge_password}, says="REPLICATION OK"),
    "dbgauge pgtap run -h db1 -U ci -d app t/": _pgtap,
    "dbgauge check lag --defaults-file /etc/dbgauge/orders.cnf": _defaults_file,
    "_DBGAUGE_COMPLETE=fish_source dbgauge": lambda _s, _t: Run(
        [], {"_DBGAUGE_COMPLETE": "fish_source"}, says="complete"),
    "dbgauge --help": lambda _s, _t: Run(["--help"], says="Usage: dbgauge"),
}


def test_every_readme_example_has_a_rendering() -> None:
    # a pipe's right-hand side is the shell's, not dbgauge's
    found = [e.split(" | ")[0] for e in readme_examples()]
    assert sorted(found) == sorted(RENDER), set(found) ^ set(RENDER)


@pytest.mark.parametrize("example", sorted(RENDER))
def test_readme_example_runs_on_the_sandbox(sandbox: Sandbox, tmp_path: Path,
                                            example: str) -> None:
    run = RENDER[example](sandbox, tmp_path)
    proc = subprocess.run([*DBGAUGE, *run.args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, **run.env})
    assert proc.returncode == run.exit, (example, proc.stdout, proc.stderr)
    assert run.says in proc.stdout, (example, proc.stdout)
