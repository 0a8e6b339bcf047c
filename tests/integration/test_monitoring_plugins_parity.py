"""dbgauge beside Debian's monitoring plugins (monitoring-plugins-standard 2.3.3:
check_mysql, check_mysql_query, check_pgsql) on the same sandbox servers, the same
thresholds written each tool's way: the states agree, except where docs/checks.md names
a deliberate difference (`theirs` below: the plugin's state, dbgauge's is `state`).

Each condition is made once (a server down, a wrong password, a replica whose SQL thread
waits on a row lock, a stopped replication thread) and every pair of commands runs in
parallel against it; lag is compared once the replica is past both levels, never at a
fixed time after the lock.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, free_port, wait_for
from tests.helpers.daemon import DBGAUGE
from tests.helpers.servers import Sandbox, admin, replica_caught_up, replicating, run
from tests.helpers.stalled import StalledListener

pytestmark = pytest.mark.integration

PLUGINS = Path("/usr/lib/nagios/plugins")
STATES = {0: "OK", 1: "WARNING", 2: "CRITICAL", 3: "UNKNOWN"}
PW_ENV = "MP_PARITY_PW"
LAG_TABLE = "app.mp_parity_lag"


@dataclass(frozen=True)
class Case:
    """One plugin command line and dbgauge's, and the state both must report (`theirs`:
    the plugin's state where docs/checks.md names a deliberate difference)."""

    plugin: Sequence[str]
    ours: Sequence[str]
    state: str
    theirs: str = ""


class Tools:
    """The command lines of both tools for the sandbox's servers."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.password = sandbox.state.dbgauge_password

    def port(self, name: str) -> int:
        return self.sandbox.state.port(name)

    def check_mysql(self, name: str, *args: str, password: str = "") -> list[str]:
        return [str(PLUGINS / "check_mysql"), "-H", "127.0.0.1", "-P", str(self.port(name)),
                "-u", "dbgauge", "-p", password or self.password, *args]

    def check_mysql_query(self, query: str, *args: str) -> list[str]:
        return [str(PLUGINS / "check_mysql_query"), "-H", "127.0.0.1", "-P",
                str(self.port("mariadb-primary")), "-u", "dbgauge", "-p", self.password,
                "-q", query, *args]

    def check_pgsql(self, *args: str, port: int = 0) -> list[str]:
        return [str(PLUGINS / "check_pgsql"), "-H", "127.0.0.1", "-P",
                str(port or self.port("pg-primary")), "-l", "dbgauge",
                "-d", self.sandbox.state.postgres.database, *args]

    def dbgauge(self, check: str, dsn: str, *args: str) -> list[str]:
        return [*DBGAUGE, "check", check, "--node", dsn, "--password-env", PW_ENV,
                "-t", "30", *args]

    def mysql_dsn(self, name: str, password: str = "") -> str:
        secret = f":{password}" if password else ""
        return f"mysql://dbgauge{secret}@127.0.0.1:{self.port(name)}/"

    def pg_dsn(self, port: int = 0) -> str:
        return (f"postgresql://dbgauge@127.0.0.1:{port or self.port('pg-primary')}/"
                f"{self.sandbox.state.postgres.database}")


def _run(argv: Sequence[str], env: dict[str, str]) -> tuple[str, str]:
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, env=env,
                          cwd=REPO, check=False)
    return STATES.get(proc.returncode, f"exit {proc.returncode}"), proc.stdout.strip()


def _disagreements(cases: Sequence[Case], password: str) -> list[str]:
    """Every case whose states are not the expected ones, said with both outputs."""
    env = {**os.environ, PW_ENV: password, "PGPASSWORD": password, "PGCONNECT_TIMEOUT": "5"}
    with ThreadPoolExecutor(4) as pool:
        theirs = list(pool.map(lambda c: _run(c.plugin, env), cases))
        ours = list(pool.map(lambda c: _run(c.ours, env), cases))
    said = [f"{Path(c.plugin[0]).name} {' '.join(c.plugin[1:])}: plugin {t[0]} ({t[1][:160]}),"
            f" dbgauge {o[0]} ({o[1][:200]}), expected {c.theirs or c.state}/{c.state}"
            for c, t, o in zip(cases, theirs, ours, strict=True)
            if (t[0], o[0]) != (c.theirs or c.state, c.state)]
    return [line.replace(password, "***") for line in said]


# Connection-time levels no connection on a loaded test machine reaches (the defaults, 2 and
# 8 s in both, are for the monitored servers; the conditions here are the query's).
EASY = ("-w", "20", "-c", "30")


def _pgsql_cases(tools: Tools) -> list[Case]:
    pg, down = tools.pg_dsn(), free_port()
    cases = [
        Case(tools.check_pgsql(*EASY), tools.dbgauge("connection", pg, *EASY), "OK"),
        Case(tools.check_pgsql("-w", "0", "-c", "30"),
             tools.dbgauge("connection", pg, "-w", "0", "-c", "30"), "WARNING"),
        Case(tools.check_pgsql("-w", "0", "-c", "0"),
             tools.dbgauge("connection", pg, "-w", "0", "-c", "0"), "CRITICAL"),
        Case(tools.check_pgsql(port=down), tools.dbgauge("connection", tools.pg_dsn(down)),
             "CRITICAL"),
    ]
    # -q with -W/-C: ranges of the query's value, judged beside the connection time
    for query, levels, state in (
            ("SELECT 5", ("-W", "10", "-C", "20"), "OK"),
            ("SELECT 5", ("-W", "3", "-C", "10"), "WARNING"),
            ("SELECT 5", ("-W", "1", "-C", "3"), "CRITICAL"),
            ("SELECT 5", ("-W", "10:", "-C", "~:20"), "WARNING"),  # below 10
            ("SELECT 5", ("-C", "@4:6"), "CRITICAL"),  # inside 4..6
            ("SELECT 5", (), "OK"),  # no ranges: never alerts
            ("SELECT count(*) FROM pg_database", ("-C", "1:1000"), "OK")):
        cases.append(Case(tools.check_pgsql(*EASY, "-q", query, *levels),
                          tools.dbgauge("connection", pg, *EASY, "-q", query, *levels), state))
    # the query's value against -W/-C while the connection time is past -w: the worse
    cases.append(Case(tools.check_pgsql("-w", "0", "-q", "SELECT 5", "-C", "3"),
                      tools.dbgauge("connection", pg, "-w", "0", "-q", "SELECT 5", "-C", "3"),
                      "CRITICAL"))
    # deliberate: a query that measured nothing is UNKNOWN in dbgauge
    for query, theirs in (("SELECT 5 WHERE false", "WARNING"), ("SELECT 'x'", "CRITICAL"),
                          ("SELECT nosuchcolumn", "CRITICAL")):
        cases.append(Case(tools.check_pgsql(*EASY, "-q", query, "-W", "10"),
                          tools.dbgauge("connection", pg, *EASY, "-q", query, "-W", "10"),
                          "UNKNOWN", theirs=theirs))
    return cases


def _mysql_query_cases(tools: Tools) -> list[Case]:
    primary = tools.mysql_dsn("mariadb-primary")
    cases = [Case(tools.check_mysql_query(query, *levels),
                  tools.dbgauge("custom-query", primary, "-q", query, *levels), state)
             for query, levels, state in (
                 ("SELECT 5", ("-w", "10", "-c", "20"), "OK"),
                 ("SELECT 5", ("-w", "3", "-c", "10"), "WARNING"),
                 ("SELECT 5", ("-w", "1", "-c", "3"), "CRITICAL"),
                 ("SELECT 5", ("-w", "10:20"), "WARNING"),
                 ("SELECT 5", ("-c", "@5:5"), "CRITICAL"),
                 ("SELECT COUNT(*) FROM information_schema.SCHEMATA", ("-c", "1:1000"), "OK"))]
    # deliberate: nothing measured is UNKNOWN in dbgauge
    cases += [Case(tools.check_mysql_query(query, "-w", "10"),
                   tools.dbgauge("custom-query", primary, "-q", query, "-w", "10"),
                   "UNKNOWN", theirs=theirs)
              for query, theirs in (("SELECT 5 FROM DUAL WHERE 1 = 0", "WARNING"),
                                    ("SELECT 'x'", "CRITICAL"))]
    return cases


def _mysql_cases(tools: Tools, cnf: Path) -> list[Case]:
    primary, replica = tools.mysql_dsn("mariadb-primary"), tools.mysql_dsn("mariadb-replica")
    down = free_port()
    wrong = "not-the-password"
    at_primary = ("-H", "127.0.0.1", "-P", str(tools.port("mariadb-primary")))
    from_file = f"mysql://127.0.0.1:{tools.port('mariadb-primary')}/"
    return [
        Case(tools.check_mysql("mariadb-primary"),
             tools.dbgauge("connection", primary, *EASY), "OK"),
        Case([*tools.check_mysql("mariadb-primary")[:3], "-P", str(down), "-u", "dbgauge",
              "-p", "x"],
             tools.dbgauge("connection", f"mysql://dbgauge@127.0.0.1:{down}/"), "CRITICAL"),
        Case(tools.check_mysql("mariadb-primary", password=wrong),
             tools.dbgauge("connection", tools.mysql_dsn("mariadb-primary", wrong)),
             "CRITICAL"),
        Case(tools.check_mysql("mariadb-primary", "-n", password=wrong),
             tools.dbgauge("connection", tools.mysql_dsn("mariadb-primary", wrong), "-n"),
             "OK"),
        # -f FILE -g GROUP: the credentials in [nagios]; [client] alone names another user
        Case([str(PLUGINS / "check_mysql"), *at_primary, "-f", str(cnf), "-g", "nagios"],
             [*DBGAUGE, "check", "connection", "--node", from_file, "-f", str(cnf),
              "-g", "nagios", *EASY], "OK"),
        Case([str(PLUGINS / "check_mysql"), *at_primary, "-f", str(cnf)],
             [*DBGAUGE, "check", "connection", "--node", from_file, "-f", str(cnf)],
             "CRITICAL"),
        # deliberate: the option file's port is used (check_mysql takes 3306 unless -P)
        Case([str(PLUGINS / "check_mysql"), "-f", str(cnf), "-g", "nagios_here"],
             [*DBGAUGE, "check", "connection", "-f", str(cnf), "-g", "nagios_here", *EASY],
             "OK", theirs="CRITICAL"),
        # -S: a replica in step, and a primary that replicates from nothing
        Case(tools.check_mysql("mariadb-replica", "-S", "-w", "10", "-c", "20"),
             tools.dbgauge("lag", replica, "-S", "-w", "10", "-c", "20"), "OK"),
        Case(tools.check_mysql("mariadb-primary", "-S"),
             tools.dbgauge("lag", primary, "-S"), "WARNING"),
    ]


@pytest.fixture
def option_file(tmp_path: Path, sandbox: Sandbox) -> Path:
    """[client] names a user that does not exist; [nagios] the monitoring user;
    [nagios_here] also the primary's host and port."""
    path = tmp_path / "nagios.cnf"
    password = sandbox.state.dbgauge_password
    path.write_text(f"[client]\nuser=mp_nobody\npassword=nothing\n[nagios]\nuser=dbgauge\n"
                    f"password={password}\n[nagios_here]\nuser=dbgauge\npassword={password}\n"
                    f"host=127.0.0.1\nport={sandbox.state.port('mariadb-primary')}\n")
    path.chmod(0o600)
    return path


def test_states_agree_with_the_monitoring_plugins(sandbox: Sandbox, option_file: Path) -> None:
    tools = Tools(sandbox)
    wait_for(lambda: replicating(sandbox), timeout=30, what="the replica to replicate")
    replica_caught_up(sandbox)
    cases = _pgsql_cases(tools) + _mysql_query_cases(tools) + _mysql_cases(tools, option_file)
    wrong = _disagreements(cases, tools.password)
    assert not wrong, "\n".join(wrong)


_PERF_LEVELS = re.compile(r"=[0-9.]+s;([0-9.]*);([0-9.]*)")


def test_a_level_given_alone_keeps_the_other_default_as_check_pgsql(sandbox: Sandbox) -> None:
    """check_pgsql -w 5 keeps its -c 8, and -c 3 its -w 2: so does `check connection`
    (unlike check_postgres' rule elsewhere); their perfdata carry the same levels. A
    default that would contradict the level given is dropped (-c 1: no warning), which
    check_pgsql, judging critical first, never shows either."""
    tools = Tools(sandbox)
    env = {**os.environ, PW_ENV: tools.password, "PGPASSWORD": tools.password}
    for levels, expected in ((("-w", "5"), (5.0, 8.0)), (("-c", "3"), (2.0, 3.0))):
        got = []
        for argv in (tools.check_pgsql(*levels),
                     tools.dbgauge("connection", tools.pg_dsn(), *levels)):
            state, out = _run(argv, env)
            match = _PERF_LEVELS.search(out.split("|", 1)[-1])
            assert state == "OK" and match, out
            got.append(tuple(float(x) for x in match.groups()))
        assert got == [expected, expected], (levels, got)
    _, out = _run(tools.dbgauge("connection", tools.pg_dsn(), "-c", "1"), env)
    assert re.search(r"=[0-9.]+s;;1(;|\s|$)", out), out


def _seconds_behind(sandbox: Sandbox) -> float | None:
    (row,) = run(sandbox, "mariadb-replica", "SHOW SLAVE STATUS")
    behind = row["Seconds_Behind_Master"]
    return None if behind is None else float(behind)


@contextmanager
def lagging(sandbox: Sandbox) -> Iterator[None]:
    """The replica's SQL thread waiting on a row lock held on the replica, behind an
    update of that row on the primary written with a timestamp 200 s back:
    Seconds_Behind_Master is 200 s and grows by the second."""
    run(sandbox, "mariadb-primary",
        f"CREATE TABLE IF NOT EXISTS {LAG_TABLE} (id INT PRIMARY KEY, v INT)",
        f"REPLACE INTO {LAG_TABLE} VALUES (1, 0)")  # noqa: S608
    replica_caught_up(sandbox)
    holder: Any = admin(sandbox, "mariadb-replica")
    with closing(holder):
        cur = holder.cursor()
        cur.execute("BEGIN")
        cur.execute(f"SELECT v FROM {LAG_TABLE} WHERE id = 1 FOR UPDATE")  # noqa: S608
        run(sandbox, "mariadb-primary", "SET timestamp = UNIX_TIMESTAMP() - 200",
            f"UPDATE {LAG_TABLE} SET v = v + 1 WHERE id = 1")  # noqa: S608
        try:
            yield
        finally:
            cur.execute("ROLLBACK")
    replica_caught_up(sandbox)


@contextmanager
def thread_stopped(sandbox: Sandbox, thread: str) -> Iterator[None]:
    run(sandbox, "mariadb-replica", f"STOP SLAVE {thread}")
    try:
        yield
    finally:
        run(sandbox, "mariadb-replica", f"START SLAVE {thread}")
        wait_for(lambda: replicating(sandbox), timeout=30, what="replication to run again")


def test_replica_lag_and_stopped_threads_agree_with_check_mysql(sandbox: Sandbox) -> None:
    """check_mysql -S -w/-c (seconds behind master, as ranges) beside dbgauge check lag -S
    on a --node DSN (no heartbeat: Seconds_Behind_Master, as check_mysql reads it)."""
    tools = Tools(sandbox)
    wait_for(lambda: replicating(sandbox), timeout=30, what="the replica to replicate")
    replica = tools.mysql_dsn("mariadb-replica")

    def pair(*levels: str, state: str, theirs: str = "") -> Case:
        return Case(tools.check_mysql("mariadb-replica", "-S", *levels),
                    tools.dbgauge("lag", replica, "-S", *levels), state, theirs)

    with lagging(sandbox):
        wait_for(lambda: (_seconds_behind(sandbox) or 0) >= 150, timeout=40,
                 what="the replica 150 s behind")
        wrong = _disagreements([pair("-w", "100", "-c", "100000", state="WARNING"),
                                pair("-w", "100", "-c", "150", state="CRITICAL"),
                                pair("-w", "100000", "-c", "200000", state="OK"),
                                # deliberate: lag's defaults (30 s, 120 s); check_mysql -S
                                # alerts on lag only with -w/-c
                                pair(state="CRITICAL", theirs="OK")],
                               tools.password)
    assert not wrong, "\n".join(wrong)
    for thread in ("SQL_THREAD", "IO_THREAD"):
        with thread_stopped(sandbox, thread):
            wait_for(lambda: replicating(sandbox) is None, what=f"the {thread} stopped")
            wrong = _disagreements([pair(state="CRITICAL"),
                                    pair("-w", "100", "-c", "200", state="CRITICAL")],
                                   tools.password)
        assert not wrong, f"{thread} stopped:\n" + "\n".join(wrong)



def test_a_server_that_never_answers_is_unknown_after_t() -> None:
    """Deliberate difference: a server that accepts TCP and never answers. dbgauge says
    UNKNOWN after -t, naming the node, as the plugin guidelines ask of a timeout;
    check_pgsql says CRITICAL, and check_mysql, which has no -t, is still waiting when
    dbgauge has answered (the monitoring system's own timeout ends it)."""
    env = {**os.environ, PW_ENV: "x", "PGPASSWORD": "x"}
    with closing(StalledListener()) as stalled:
        port = str(stalled.port)
        assert _run([str(PLUGINS / "check_pgsql"), "-H", "127.0.0.1", "-P", port, "-l", "x",
                     "-t", "2"], env)[0] == "CRITICAL"
        for dsn in (f"postgresql://x@127.0.0.1:{port}/db", f"mysql://x@127.0.0.1:{port}/"):
            state, out = _run([*DBGAUGE, "check", "connection", "--node", dsn,
                               "--password-env", PW_ENV, "-t", "2"], env)
            assert (state, "[no-answer]") == ("UNKNOWN", out.splitlines()[-1].split()[2]), out
        with pytest.raises(subprocess.TimeoutExpired):
            subprocess.run([str(PLUGINS / "check_mysql"), "-H", "127.0.0.1", "-P", port,
                            "-u", "x", "-p", "x"], capture_output=True, timeout=8, check=False)
