"""The docs' command examples and their rendering for the sandbox: the `dbgauge ...` lines of
the fenced blocks of README.md and docs/*.md, their hosts, ports, users, targets, files and
passwords replaced by the sandbox's (tests/integration/test_docs_examples.py runs them)."""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dbgauge.toolkit.sandbox.model import ADMIN_USER, MONITOR_USER
from tests.helpers import REPO
from tests.helpers.servers import Sandbox

DOCS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
COMMAND = re.compile(r"^(?:\w+=\S+\s+)*dbgauge(?:\s|$)")


def examples(path: Path) -> list[str]:
    """Every `dbgauge` command line of the file's fenced blocks (continuations joined,
    comments dropped, spacing normalised)."""
    out = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", path.read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if COMMAND.match(line.strip()):
                out.append(shlex.join(shlex.split(line, comments=True)))
    return out


def all_examples() -> list[str]:
    return sorted({e for path in DOCS for e in examples(path)})


def page_of(example: str) -> str:
    return next(p.name for p in DOCS if example in examples(p))


@dataclass(frozen=True)
class Run:
    """An example as run on the sandbox: argv after `dbgauge`, extra environment, the exit
    status the docs promise and a piece of its stdout. A long-running one (`ready` set) is
    started before the others, waited for until `ready()` holds, and stopped with SIGINT
    once they ran."""

    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    exit: int = 0
    says: str = ""  # a piece its stdout must hold
    after: Callable[[], None] = lambda: None  # undo what the rendering set up
    ready: Callable[[str], bool] | None = None  # given its stdout so far


# the docs' example hosts -> the sandbox's instances, by the kind of server they name
MYSQL_HOSTS = {"db1": "mariadb-primary", "db2": "mariadb-replica", "db3": "mariadb-replica"}
PG_HOSTS = {"db": "pg-primary", "db1": "pg-primary", "db2": "pg-standby", "db3": "pg-primary",
            "pg1": "pg-primary", "pg2": "pg-standby", "host": "pg-primary"}
HOSTS = {"db1": "mariadb-primary", "db2": "mariadb-replica", "db3": "pg-primary"}  # targets
TARGETS = {"orders-replica": "mariadb-replica", "orders-primary": "mariadb-primary"}
# the docs' users: the monitoring account, or (pgTAP, cluster admin) the sandbox's admin
ADMIN_USERS = {"ci", "you", "clusteradmin", "checksum"}
URI = re.compile(r"(mysql|postgresql)://(?:(\w+)@)?([\w.]+)(?::(\d+))?/(\w*)")
PT_HOST = re.compile(r"h=(db\d)(?:,P=\d+)?")
PT_USER = re.compile(r"\bu=monitor\b")
LIBPQ_HOST = re.compile(r"\bhost=(db\d?)\b")
SCRATCH = {"scratch": "app", "postgres": "postgres", "app": "app", "pgbouncer": "pgbouncer"}


def instance(scheme: str, host: str, port: str | None) -> str:
    if port == "6432":
        return "pgbouncer"
    return (MYSQL_HOSTS if scheme == "mysql" else PG_HOSTS)[host]


def uri(sandbox: Sandbox, m: re.Match[str]) -> str:
    """A docs URI on the sandbox: the monitoring account (password from the file or the
    environment), or the admin's, password written in."""
    scheme, user, host, port, db = m.groups()
    name = instance(scheme, host, port)
    state = sandbox.state
    if user in ADMIN_USERS and scheme == "mysql":
        user = f"{state.mariadb.admin_user}:{state.mariadb.admin_password}"
    elif user in ADMIN_USERS:
        user = f"{state.postgres.admin_user}:{state.postgres.admin_password}"
    else:
        user = MONITOR_USER
    return f"{scheme}://{user}@127.0.0.1:{state.port(name)}/{SCRATCH.get(db, db)}"


def text(sandbox: Sandbox, example: str) -> str:
    """The example's addresses and users made the sandbox's."""
    state = sandbox.state
    out = URI.sub(lambda m: uri(sandbox, m), example)
    out = PT_HOST.sub(lambda m: f"h=127.0.0.1,P={state.port(MYSQL_HOSTS[m.group(1)])}", out)
    out = PT_USER.sub(f"u={MONITOR_USER}", out).replace("u=checksum",
                                                        f"u={state.mariadb.admin_user}")
    out = LIBPQ_HOST.sub(lambda m: f"host=127.0.0.1 port={state.port(PG_HOSTS[m.group(1)])}",
                         out)
    out = re.sub(r"(?<![\w/])/etc/pgbouncer/pgbouncer\.ini", "pgbouncer.ini", out)  # staged
    out = re.sub(r"\bpercona([.,]|\b)", r"dbgauge\1", out)  # the writer keeps dbgauge's
    return out.replace("sslmode=require", "sslmode=disable")


FIXTURES = REPO / "tests" / "fixtures" / "validate"


def stage(sandbox: Sandbox, tmp: Path) -> dict[str, str]:
    """The files the docs' examples name, in the example's directory (its cwd and $HOME):
    ~/.my.cnf and ~/.pgpass of the monitoring account, a pg_service.conf, pgTAP test files,
    validator inputs; and the environment that points at them."""
    state = sandbox.state
    pw, admin_pw = state.dbgauge_password, state.postgres.admin_password
    (tmp / ".my.cnf").write_text(f"[client]\nuser={MONITOR_USER}\npassword={pw}\n")
    (tmp / "monitor.cnf").write_text(f"[client]\nuser={MONITOR_USER}\npassword={pw}\n")
    (tmp / "build").mkdir()
    (tmp / "checksum.cnf").write_text(f"[client]\nuser={state.mariadb.admin_user}\n"
                                      f"password={state.mariadb.admin_password}\n")
    (tmp / "orders.cnf").write_text(f"[client]\nuser={MONITOR_USER}\npassword={pw}\n"
                                    f"host=127.0.0.1\nport={state.port('mariadb-replica')}\n")
    (tmp / "pgpass").write_text(f"*:*:*:{MONITOR_USER}:{pw}\n*:*:*:{ADMIN_USER}:{admin_pw}\n")
    (tmp / "pgpass").chmod(0o600)
    (tmp / "pg_service.conf").write_text(
        f"[orders-standby]\nhost=127.0.0.1\nport={state.port('pg-standby')}\n"
        f"user={MONITOR_USER}\ndbname=app\n[ci]\nhost=127.0.0.1\n"
        f"port={state.port('pg-primary')}\nuser={ADMIN_USER}\ndbname=app\n")
    for folder in ("t", "test"):
        (tmp / folder).mkdir()
        for name in ("one.sql", "schema.sql", "schema_test.sql"):
            (tmp / folder / name).write_text("SELECT plan(1);\nSELECT ok(true, 'one');\n"
                                             "SELECT * FROM finish();\n")
        (tmp / folder / "api.pg").write_text("SELECT plan(1);\nSELECT ok(true, 'api');\n"
                                             "SELECT * FROM finish();\n")
    (tmp / "sql").symlink_to(REPO / "sql")
    shutil.copytree(FIXTURES / "innodb" / "good" / "cluster-8.4", tmp, dirs_exist_ok=True)
    ini = sandbox.directory / "pgbouncer" / "pgbouncer.ini"
    shutil.copy(ini, tmp / "pgbouncer.ini")
    (tmp / "host1" / "etc" / "pgbouncer").mkdir(parents=True)
    shutil.copy(ini, tmp / "host1" / "etc" / "pgbouncer" / "pgbouncer.ini")
    return {"HOME": str(tmp), "PGPASSFILE": str(tmp / "pgpass"),
            "PGSERVICEFILE": str(tmp / "pg_service.conf")}


ENV_VALUES: dict[str, Callable[[Sandbox, str], dict[str, str]]] = {
    "PGHOST": lambda sb, v: {"PGHOST": "127.0.0.1",
                             "PGPORT": str(sb.state.port(PG_HOSTS[v]))},
    "PGUSER": lambda _sb, v: {"PGUSER": ADMIN_USER if v in ADMIN_USERS else MONITOR_USER},
    "PGPASSFILE": lambda _sb, _v: {},  # the staged one
}


OPTION_VALUES: dict[str, Callable[[Sandbox, str], str]] = {
    "--config": lambda sb, _v: str(sb.config),
    "--target": lambda _sb, v: ",".join(TARGETS.get(n, HOSTS.get(n, n)) for n in v.split(",")),
    "--password-file": lambda sb, _v: str(sb.state.dbgauge_password_file),
    "--defaults-file": lambda _sb, v: Path(v).name,  # staged
    "--source": lambda _sb, v: TARGETS.get(v, v),
    "--replica": lambda _sb, v: TARGETS.get(v, v),
    # pg_prove's connection flags
    "-h": lambda _sb, _v: "127.0.0.1",
    "-U": lambda _sb, v: ADMIN_USER if v in ADMIN_USERS else MONITOR_USER,
}
OPTION_VALUES["--targets"] = OPTION_VALUES["--target"]


def generic(example: str, sandbox: Sandbox, tmp: Path) -> Run:
    """A docs example with the sandbox's config, targets, addresses, password and files; a
    shell pipe or redirection is left off (its stdout is what is checked)."""
    words = shlex.split(text(sandbox, example).replace("F=/etc/dbgauge/", "F="))
    env = stage(sandbox, tmp)
    while "=" in words[0]:
        key, _, value = words.pop(0).partition("=")
        env |= ENV_VALUES[key](sandbox, value) if key in ENV_VALUES else {key: value}
    args = words[1:]
    if args[:1] == ["pgtap"]:  # the docs' `export DBGAUGE_PGTAP_DSN=...`, as admin
        env |= {"DBGAUGE_PGTAP_DSN": sandbox.admin_dsn("pg-primary", "app"),
                "PGPASSWORD": sandbox.state.postgres.admin_password}
        if "-h" in args and "-p" in args:
            args[args.index("-p") + 1] = str(sandbox.state.port("pg-primary"))
    for stop in ("|", ">"):
        if stop in args:
            args = args[:args.index(stop)]
    for i in range(1, len(args)):
        if args[i - 1] in OPTION_VALUES:
            args[i] = OPTION_VALUES[args[i - 1]](sandbox, args[i])
    # a password for the DSNs that carry none, as ~/.pgpass or the environment gives it
    return Run(args, says=says(args),
               env={"DBGAUGE_PW": sandbox.state.dbgauge_password,
                    "PGPASSWORD": sandbox.state.dbgauge_password, **env})


def says(args: list[str]) -> str:
    """What a healthy sandbox makes the command print: a check's `NAME OK` line, a
    checksum's verdict, pgTAP's result, a validator's summary, a JSON document's key."""
    fmt = args[args.index("--format") + 1] if "--format" in args else "text"
    if fmt == "sarif":
        return '"runs"'
    if fmt == "json":
        return '"status"' if args[0] in ("check", "checksum") else '"nodes"'
    command = " ".join(args[:2])
    fixed = {"heartbeat check": "LAG OK", "heartbeat monitor": "s [", "status --config":
             "pg-primary [OK]", "pgtap generate": "pgTAP schema snapshot",
             "pgtap run": "Result: PASS", "checksum --source": "no drift", "checksum --config":
             "no drift", "collect --config": "mysql_up", "heartbeat update": ""}
    if command in fixed:
        return fixed[command]
    if args[0] == "validate":
        return f"validate {args[1]} "
    return f"{args[1].upper()} OK" if args[0] == "check" else ""
