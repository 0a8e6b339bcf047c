"""No password in any output: every command that takes a DSN or a config, given DSNs of every
form dbgauge accepts or is likely to be handed (tests/helpers/dsns.py), each carrying a
marked password, against a reachable server (the password is wrong: authentication fails)
and an unreachable one (port 1: refused at once). The markers must not show in stdout,
stderr, the JSON output, the daemon's log, its pages or its /probe answers.

A DSN that parses goes into one run with the others (named n0, n1...). One that is refused
needs a run of its own (the first bad DSN ends a run), and runs cost a Python start each: a
refused DSN goes through `check lag` (the plugin line) and one other command, in turn, so
every command sees several refused forms and every refused form two commands. Runs go four
at a time.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.targets import target_from_dsn
from tests.helpers import DBGAUGE, REPO
from tests.helpers.daemon import Daemon
from tests.helpers.dsns import FORMS, leaked, marked
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

PASSWORDS = (marked("", "-", ""), marked("@", ":/ ,='\"%?#&", "\\"))
UNREACHABLE = 1  # nothing listens on port 1: refused at once


@dataclass(frozen=True)
class Case:
    """One DSN: its form, whether dbgauge takes it (`kind` then), and a run name."""

    form: str
    dsn: str
    kind: str | None  # None: refused at parse time
    reachable: bool

    def named(self, name: str) -> str:
        return f"{name}={self.bare}"

    @property
    def bare(self) -> str:
        """The DSN without its NAME= (a config's dsn: has none)."""
        return self.dsn.removeprefix("node1=")


def turns(items: Sequence[Case], n: int, i: int) -> list[Case]:
    """Every n-th of `items`, from the i-th: one command's share."""
    return list(items[i::n])


@dataclass(frozen=True)
class Run:
    argv: tuple[str, ...]
    code: int
    out: str
    err: str

    def shown(self) -> str:
        return self.out + self.err


def _kind(dsn: str) -> str | None:
    try:
        return target_from_dsn(dsn).kind
    except ConfigError:
        return None


@pytest.fixture(scope="module")
def cases(sandbox: Sandbox) -> list[Case]:
    out = []
    for form, make in sorted(FORMS.items()):
        postgres = "postgres" in form or "libpq" in form
        reachable_port = sandbox.state.port("pg-primary" if postgres else "mariadb-primary")
        for password in PASSWORDS:
            for port in (reachable_port, UNREACHABLE):
                dsn = make("dbgauge", password, "127.0.0.1", port)
                kind = _kind(dsn)
                if kind is None and port == UNREACHABLE:
                    continue  # refused before any connection: the host does not matter
                out.append(Case(form, dsn, kind, port != UNREACHABLE))
    assert {c.form for c in out if c.kind} >= {"mysql-uri", "libpq-kv", "postgres-uri-query"}
    assert {c.form for c in out if c.kind is None} >= {"pt", "go-tcp", "mysql-one-slash"}
    return out


def run_all(argvs: Sequence[Sequence[str]], timeout: float = 60) -> list[Run]:
    def one(argv: Sequence[str]) -> Run:
        proc = subprocess.run([*DBGAUGE, *argv], capture_output=True, text=True, cwd=REPO,
                              timeout=timeout, check=False)
        return Run(tuple(argv), proc.returncode, proc.stdout, proc.stderr)

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, argvs))


def assert_no_password(runs: Sequence[Run]) -> None:
    shown = [f"{' '.join(r.argv)}\n  -> {r.shown()}" for r in runs if leaked(r.shown())]
    assert not shown, "a password was shown:\n" + "\n".join(shown[:5])


def _nodes(cases: Sequence[Case]) -> list[str]:
    return [c.named(f"n{i}") for i, c in enumerate(cases)]


def test_check_commands(cases: list[Case]) -> None:
    """check lag (plugin line) and check replication --format json: the taken DSNs in one
    run each; every refused DSN through check lag, a share through check replication."""
    taken = [c for c in cases if c.kind]
    refused = [c for c in cases if c.kind is None]
    nodes = [a for n in _nodes(taken) for a in ("--node", n)]
    argvs = [["check", "lag", "-t", "20", *nodes],
             ["check", "replication", "--format", "json", "-t", "20", *nodes]]
    argvs += [["check", "lag", "--node", c.dsn] for c in refused]
    argvs += [["check", "replication", "--format", "json", "--node", c.dsn]
              for c in turns(refused, 4, 0)]
    runs = run_all(argvs)
    assert_no_password(runs)
    # the taken nodes are down (password refused, nothing listening): CRITICAL; a refused
    # DSN is a bad option: UNKNOWN
    assert all(r.code == 2 for r in runs[:2]), [(r.argv, r.out) for r in runs[:2]]
    assert all(r.code == 3 for r in runs[2:]), [(r.argv, r.out) for r in runs[2:] if r.code != 3]
    for run in runs[:2]:  # every taken node failed, and says why
        assert run.out.count("auth-failed") == sum(c.reachable for c in taken), run.out
        assert run.out.count("unreachable") == sum(not c.reachable for c in taken), run.out
    assert all("***" in r.out for r in runs[2:])  # the refused DSN is shown, masked


def test_checksum_and_heartbeat_monitor(cases: list[Case], sandbox: Sandbox) -> None:
    """checksum --source DSN, checksum --replica DSN (from a configured source), and
    heartbeat monitor over the MySQL-family DSNs (one run) and each refused DSN."""
    taken = [c for c in cases if c.kind]
    refused = [c for c in cases if c.kind is None]
    mysql = [c for c in taken if c.kind == "mysql"]
    argvs: list[list[str]] = []
    for c in [*turns(taken, 3, 0), *turns(refused, 4, 1)]:
        argvs.append(["checksum", "--source", c.dsn])
    for c in [*turns(mysql, 9, 1), *turns(refused, 8, 2)]:  # a config costs seconds
        argvs.append(["checksum", "--config", str(sandbox.config), "--source",
                      "mariadb-primary", "--replica", c.dsn])
    for c in turns(refused, 4, 3):
        argvs.append(["heartbeat", "monitor", c.dsn, "--run-time", "1s"])
    argvs.append(["heartbeat", "monitor", *_nodes(mysql), "--run-time", "1s",
                  "--interval", "0.5s"])
    runs = run_all(argvs)
    assert_no_password(runs)
    assert all(r.code != 0 for r in runs if r.argv[0] == "checksum")
    monitor = runs[-1]
    assert monitor.out.count("authentication failed") >= sum(c.reachable for c in mysql)
    assert monitor.out.count("cannot connect") >= sum(not c.reachable for c in mysql)


def _config(path: Path, cases: Sequence[Case]) -> Path:
    targets = [{"name": f"t{i}", "kind": c.kind, "dsn": c.bare, "connect_timeout": "2s"}
               for i, c in enumerate(cases)]
    path.write_text(yaml.safe_dump({"targets": targets}))
    return path


def test_config_check_collect_and_serve_refusing_a_config(cases: list[Case],
                                                          tmp_path: Path) -> None:
    """config check of a config with every taken DSN, collect of each of its targets, and
    config check and serve of a config holding one refused DSN."""
    taken = [c for c in cases if c.kind]
    good = _config(tmp_path / "taken.yaml", taken)
    argvs: list[list[str]] = [["config", "check", str(good)]]
    argvs += [["collect", "--config", str(good), "--timeout", "5s", f"t{i}"]
              for i in range(1, len(taken), 9)]  # loading a config costs seconds
    refused = [c for c in cases if c.kind is None]
    for i, c in enumerate(refused):
        path = tmp_path / f"refused{i}.yaml"
        path.write_text(yaml.safe_dump({"targets": [{"name": "t", "kind": "mysql",
                                                     "dsn": c.bare}]}))
        if i % 6 == 0:
            argvs.append(["config", "check", str(path)])
        elif i % 6 == 3:
            argvs.append(["serve", "--config", str(path), "--listen", "127.0.0.1:0"])
    runs = run_all(argvs)
    assert_no_password(runs)
    assert runs[0].code == 0 and f"{len(taken)} target(s)" in runs[0].out, runs[0].shown()
    collects = [r for r in runs if r.argv[0] == "collect"]
    assert collects and all(r.code == 1 and "dbgauge_up" in r.out for r in collects)
    refusals = [r for r in runs if "refused" in r.argv[-1] or "127.0.0.1:0" in r.argv]
    assert all(r.code == 2 and "***" in r.err for r in refusals), \
        [(r.argv, r.code, r.err) for r in refusals if r.code != 2 or "***" not in r.err]


def test_serve_logs_pages_and_probe(cases: list[Case], sandbox: Sandbox,
                                    tmp_path: Path) -> None:
    """A daemon with every taken DSN as a target and the peers' /probe credentials (a
    my.cnf and postgres_exporter auth modules, wrong passwords): /metrics, the status
    page and JSON, and /probe?target= each DSN (with and without auth_module): no marker
    in any answer or in the debug log."""
    taken = [c for c in cases if c.kind]
    config = _config(tmp_path / "serve.yaml", taken)
    password = PASSWORDS[0]
    mycnf = tmp_path / "my.cnf"
    mycnf.write_text(f"[client]\nuser=dbgauge\npassword={password}\nhost=127.0.0.1\n"
                     f"port={sandbox.state.port('mariadb-primary')}\n"
                     f"[client.wrong]\nuser=dbgauge\npassword={password}\n")
    auth = tmp_path / "postgres_exporter.yml"
    auth.write_text(yaml.safe_dump({"auth_modules": {"wrong": {
        "type": "userpass", "userpass": {"username": "dbgauge", "password": password},
        "options": {"sslmode": "disable", "connect_timeout": "2"}}}}))
    daemon = Daemon(config, tmp_path / "serve.log",
                    args=["--config.my-cnf", str(mycnf), "--config.file", str(auth),
                          "--log.level", "debug"])
    try:
        answers = [daemon.get("/metrics", headers={"X-Prometheus-Scrape-Timeout-Seconds": "8"}),
                   daemon.get("/"), daemon.get("/status.json")]
        for c in cases:
            for module in ("", "&auth_module=wrong"):
                answers.append(daemon.get(f"/probe?target={quote(c.dsn, safe='')}{module}",
                                          headers={"X-Prometheus-Scrape-Timeout-Seconds": "5"}))
    finally:
        daemon.stop()
    log = daemon.log_text()
    shown = [(status, body[:300]) for status, body in answers if leaked(body)]
    assert not shown, shown
    assert not leaked(log), [line for line in log.splitlines() if leaked(line)][:5]
    metrics = answers[0][1]
    assert metrics.count("dbgauge_up{") >= len(taken) and "dbgauge_up{" in metrics
    assert "GET /probe?target=" in log  # the requests were logged, redacted
    assert {status for status, _ in answers[3:]} >= {200, 400}


def test_validate_live_and_pgtap(cases: list[Case], tmp_path: Path) -> None:
    """validate innodb-cluster --live (MySQL family) and pgtap run --dsn (PostgreSQL, psql
    reporting libpq's errors): a share of the DSNs each, taken and refused."""
    suite = tmp_path / "t"
    suite.mkdir()
    (suite / "one.sql").write_text("SELECT plan(1);\nSELECT pass('x');\n")
    mysql = [c for c in cases if c.kind == "mysql"]
    postgres = [c for c in cases if c.kind == "postgres"]
    refused = [c for c in cases if c.kind is None]
    argvs = [["validate", "innodb-cluster", "--live", c.bare]
             for c in [*turns(mysql, 5, 0), *turns(refused, 8, 5)]]
    argvs += [["pgtap", "run", "--dsn", c.bare, str(suite)]
              for c in [*turns(postgres, 3, 0), *turns(refused, 8, 6)]]
    runs = run_all(argvs)
    assert_no_password(runs)
    assert all(r.code != 0 for r in runs), [r.argv for r in runs if r.code == 0]
    assert sum("authentication failed" in r.shown() for r in runs) >= 2


def test_usage_errors_quoting_what_was_typed(cases: list[Case]) -> None:
    """click's own messages (a DSN given without --node, or where a duration belongs)."""
    refused = [c for c in cases if c.kind is None]
    some = [*turns(refused, 6, 0), *turns([c for c in cases if c.kind], 12, 0)]
    argvs = [["check", "lag", c.dsn] for c in some]
    argvs += [["heartbeat", "monitor", "--interval", c.dsn, "x"] for c in some[::2]]
    argvs += [["config", "check", "a.yaml", c.dsn] for c in some[1::2]]
    runs = run_all(argvs)
    assert_no_password(runs)
    assert all(r.code in (2, 3) for r in runs), [(r.argv, r.code) for r in runs]
    extra = [r for r in runs if r.argv[0] == "check"]  # the whole argument is quoted
    assert all("***" in r.out for r in extra), [r.out for r in extra if "***" not in r.out]
