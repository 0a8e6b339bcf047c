"""The sandbox itself, against the real servers it starts (no mocks, no skips).

It runs in its own directory on the session base port + 2000, apart from the session
sandbox of conftest.py and a developer's default one (20000), all below the ephemeral
port range. Tests run in file order: the last ones take the sandbox down, and start and stop
it again as `make demo` and `make down` from a mode-700 clone.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import psycopg
import pymysql  # type: ignore[import-untyped,unused-ignore]
import pytest
import yaml

from dbgauge.toolkit import sandbox as sb
from tests.helpers import DBGAUGE, REPO, wait_for
from tests.helpers.ports import BASE_PORT as SESSION_BASE_PORT
from tests.helpers.servers import admin_dsn

pytestmark = pytest.mark.integration

# 2000 above the session sandbox, so two suites (or xdist workers) with distinct base
# ports never collide.
BASE_PORT = SESSION_BASE_PORT + 2000
T = TypeVar("T")


@dataclass(frozen=True)
class Built:
    directory: Path
    config: Path
    state: sb.SandboxState


@pytest.fixture(scope="module")
def built() -> Iterator[Built]:
    # Not tmp_path_factory: /tmp/pytest-of-root is 0700, and the servers run as
    # postgres/mysql, which must be able to traverse the directory.
    directory = Path(tempfile.mkdtemp(prefix="dbgauge-sbx-", dir="/tmp"))
    directory.chmod(0o755)
    try:
        config = sb.up(directory, BASE_PORT)
        yield Built(directory, config, sb.load_state(directory))
    finally:
        sb.down(directory)
        shutil.rmtree(directory, ignore_errors=True)




def mysql(state: sb.SandboxState, name: str, user: str = "", password: str = "") -> Any:
    return pymysql.connect(
        host="127.0.0.1",
        port=state.port(name),
        user=user or state.mariadb.admin_user,
        password=password or state.mariadb.admin_password,
        autocommit=True,
        connect_timeout=5,
        ssl_disabled=True,
    )


def mysql_one(state: sb.SandboxState, name: str, query: str, *args: object) -> Any:
    conn = mysql(state, name)
    try:
        cur = conn.cursor()
        cur.execute(query, args or None)
        return cur.fetchone()
    finally:
        conn.close()


def pg(state: sb.SandboxState, name: str) -> psycopg.Connection[Any]:
    return psycopg.connect(admin_dsn(state, name), autocommit=True, connect_timeout=5)


def by_name(directory: Path) -> dict[str, sb.InstanceStatus]:
    return {s.name: s for s in sb.status(directory)}


def test_cold_up_runs_everything(built: Built) -> None:
    """A sandbox made from nothing runs every instance (how long that takes is measured by
    the start-up itself, which gives up after its own timeouts, not asserted here)."""
    statuses = by_name(built.directory)
    assert list(statuses) == list(sb.INSTANCES)
    for name, st in statuses.items():
        assert st.running, f"{name}: {st.detail}"
        assert st.pid is not None
        assert st.port == BASE_PORT + sb.PORT_OFFSETS[name]
    assert statuses["mariadb-replica"].detail.startswith("replicating from mariadb-primary")
    assert statuses["pg-standby"].detail == "streaming from pg-primary"
    assert statuses["pg-subscriber"].detail == (
        "subscribed to pg-primary (drift_sub: apply worker running)")
    # the subscription's walsender is no standby (its slot is logical)
    wanted = "primary, 1 standby streaming, 1 logical walsender"
    wait_for(lambda: by_name(built.directory)["pg-primary"].detail == wanted or None,
             what=wanted)


def test_state_file_and_secrets(built: Built) -> None:
    path = built.directory / "sandbox.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    doc = json.loads(path.read_text())
    assert doc["base_port"] == BASE_PORT
    assert doc["instances"]["mariadb-replica"]["port"] == BASE_PORT + 3307
    state = built.state
    assert state.port("pgbouncer") == BASE_PORT + 6432
    assert state.mariadb.admin_user == state.postgres.admin_user == "sandbox_admin"
    assert admin_dsn(state, "mariadb-primary").startswith("mysql://sandbox_admin:")
    assert admin_dsn(state, "pg-standby").endswith(f"@127.0.0.1:{BASE_PORT + 5433}/app")
    assert admin_dsn(state, "pgbouncer").startswith("postgresql://pgb_admin:")
    assert admin_dsn(state, "pgbouncer", "app").startswith("postgresql://sandbox_admin:")
    for secret in (built.directory / "secrets").iterdir():
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600, secret
    assert state.dbgauge_password_file.read_text().strip() == state.dbgauge_password
    with pytest.raises(sb.SandboxError, match="unknown sandbox instance"):
        state.port("oracle")


def test_config_yaml(built: Built) -> None:
    assert built.config == built.directory / "dbgauge.yaml"
    doc = yaml.safe_load(built.config.read_text())
    # the daemon's port follows the base port (9860 only at the default base, 20000)
    assert doc["daemon"] == {"listen": f"127.0.0.1:{BASE_PORT + 7000}"}
    targets = {t["name"]: t for t in doc["targets"]}
    assert list(targets) == list(sb.INSTANCES)
    assert targets["mariadb-primary"]["dsn"] == f"mysql://dbgauge@127.0.0.1:{BASE_PORT + 3306}/"
    assert targets["pg-standby"]["dsn"] == f"postgresql://dbgauge@127.0.0.1:{BASE_PORT + 5433}/app"
    assert targets["pg-subscriber"]["dsn"] == \
        f"postgresql://dbgauge@127.0.0.1:{BASE_PORT + 5434}/drift"
    assert targets["pgbouncer"]["kind"] == "pgbouncer"
    for target in targets.values():
        assert target["labels"] == {"sandbox": "true"}
        password_file = Path(target["password_file"])
        assert password_file.is_absolute()
        assert password_file.read_text().strip() == built.state.dbgauge_password


def test_mariadb_gtid_replication(built: Built) -> None:
    state = built.state
    token = uuid.uuid4().hex
    conn = mysql(state, "mariadb-primary")
    try:
        cur = conn.cursor()
        cur.execute("CREATE TABLE IF NOT EXISTS app.sandbox_probe (token CHAR(32) PRIMARY KEY)")
        cur.execute("INSERT INTO app.sandbox_probe VALUES (%s)", (token,))
    finally:
        conn.close()

    def replicated() -> bool | None:
        query = "SELECT 1 FROM app.sandbox_probe WHERE token = %s"
        try:  # the CREATE TABLE itself may not have been applied yet
            row = mysql_one(state, "mariadb-replica", query, token)
        except pymysql.err.ProgrammingError:
            return None
        return True if row else None

    wait_for(replicated)
    assert mysql_one(state, "mariadb-replica", "SELECT @@read_only, @@server_id") == (1, 2)
    assert mysql_one(state, "mariadb-primary", "SELECT @@read_only, @@server_id") == (0, 1)
    strict = mysql_one(state, "mariadb-replica", "SELECT @@gtid_strict_mode, @@log_slave_updates")
    assert strict == (1, 1)
    # No errant transactions: every GTID on the replica came from server 1.
    replica_pos = mysql_one(state, "mariadb-replica", "SELECT @@gtid_binlog_pos")[0]
    primary_pos = mysql_one(state, "mariadb-primary", "SELECT @@gtid_binlog_pos")[0]
    assert replica_pos == primary_pos and replica_pos.startswith("0-1-")
    # No anonymous users (they would shadow dbgauge@% from 127.0.0.1), no test db.
    assert mysql_one(
        state, "mariadb-primary", "SELECT COUNT(*) FROM mysql.user WHERE user = ''"
    ) == (0,)
    assert mysql_one(state, "mariadb-replica", "SHOW DATABASES LIKE 'test'") is None


def test_mariadb_monitoring_user(built: Built) -> None:
    state = built.state
    for name in ("mariadb-primary", "mariadb-replica"):
        conn = mysql(state, name, "dbgauge", state.dbgauge_password)
        try:
            cur = conn.cursor(pymysql.cursors.DictCursor)
            cur.execute("SHOW SLAVE STATUS")
            row = cur.fetchone()
            if name == "mariadb-replica":
                assert row["Slave_IO_Running"] == "Yes" and row["Slave_SQL_Running"] == "Yes"
                assert row["Using_Gtid"] == "Slave_Pos"
            cur.execute("SHOW GRANTS")
            grants = " ".join(next(iter(g.values())) for g in cur.fetchall())
            assert "SLAVE MONITOR" in grants and "`dbgauge`.*" in grants
        finally:
            conn.close()


def test_postgres_streaming_replication(built: Built) -> None:
    state = built.state
    token = uuid.uuid4().hex
    with pg(state, "pg-primary") as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS sandbox_probe (token text PRIMARY KEY)")
        conn.execute("INSERT INTO sandbox_probe VALUES (%s)", (token,))
        row = conn.execute(
            "SELECT state FROM pg_stat_replication WHERE application_name = 'pg-standby'"
        ).fetchone()
        assert row == ("streaming",)
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (False,)

    with pg(state, "pg-standby") as conn:

        def replicated() -> bool | None:
            try:  # the CREATE TABLE itself may not have been replayed yet
                found = conn.execute("SELECT 1 FROM sandbox_probe WHERE token = %s", (token,))
            except psycopg.errors.UndefinedTable:
                return None
            return True if found.fetchone() else None

        wait_for(replicated)
        assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)


def test_postgres_roles_pgtap_and_schema(built: Built) -> None:
    state = built.state
    with pg(state, "pg-primary") as conn:
        assert conn.execute("SELECT pgtap_version() >= 1.2").fetchone() == (True,)
        owner = conn.execute(
            "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'dbgauge'"
        )
        assert owner.fetchone() == ("dbgauge",)
        db_owner = conn.execute(
            "SELECT datdba::regrole::text FROM pg_database WHERE datname = 'app'"
        ).fetchone()
        assert db_owner == ("sandbox_admin",)
    dsn = f"postgresql://dbgauge@127.0.0.1:{state.port('pg-standby')}/app"
    with psycopg.connect(dsn, password=state.dbgauge_password, autocommit=True) as conn:
        row = conn.execute("SELECT pg_has_role('pg_monitor', 'MEMBER'), current_user").fetchone()
        assert row == (True, "dbgauge")


def test_pgbouncer_admin_console(built: Built) -> None:
    state = built.state
    # The admin console speaks only the simple query protocol and rejects BEGIN:
    # autocommit, and ClientCursor (client-side binding) so parameters also go simple.
    with psycopg.connect(
        admin_dsn(state, "pgbouncer"), autocommit=True, cursor_factory=psycopg.ClientCursor
    ) as conn:
        pools = conn.execute("SHOW POOLS").fetchall()
        assert {row[0] for row in pools} >= {"pgbouncer"}
        assert conn.execute("SHOW CONFIG").fetchall()
        modes = {row[0]: row[1] for row in conn.execute("SHOW CONFIG").fetchall()}
        assert modes["pool_mode"] == "transaction"
    dsn = f"postgresql://dbgauge@127.0.0.1:{state.port('pgbouncer')}/pgbouncer"
    with psycopg.connect(
        dsn, password=state.dbgauge_password, autocommit=True, cursor_factory=psycopg.ClientCursor
    ) as conn:
        lists = dict(conn.execute("SHOW LISTS").fetchall())
        assert lists["databases"] >= 2
    # dbgauge also reaches the app database through the pooler (SCRAM on both sides).
    app = f"postgresql://dbgauge@127.0.0.1:{state.port('pgbouncer')}/app"
    with psycopg.connect(app, password=state.dbgauge_password, prepare_threshold=None) as conn:
        assert conn.execute("SELECT current_user, %s::int", (7,)).fetchone() == ("dbgauge", 7)
    with psycopg.connect(admin_dsn(state, "pgbouncer", "app"), prepare_threshold=None) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("sandbox_admin",)


def test_second_up_is_idempotent(built: Built) -> None:
    """A second `up` restarts nothing and rewrites nothing (its speed is not asserted)."""
    before = {s.name: s.pid for s in sb.status(built.directory)}
    config_before = built.config.read_text()
    assert sb.up(built.directory, BASE_PORT) == built.config
    assert built.config.read_text() == config_before
    assert {s.name: s.pid for s in sb.status(built.directory)} == before
    with pytest.raises(sb.SandboxError, match=f"--base-port {BASE_PORT}"):
        sb.up(built.directory, BASE_PORT + 1)


def _tmpdir_file(directory: Path, name: str) -> Path:
    """A `#sql*` file, as a server's own temporary table, in `name`'s --tmpdir."""
    pid = by_name(directory)[name].pid
    assert pid is not None
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    tmpdir = Path(next(a for a in args if a.startswith("--tmpdir=")).split("=", 1)[1])
    assert tmpdir.is_relative_to(directory), tmpdir  # not /tmp, shared with every server
    probe = tmpdir / f"#sql-temptable-dbgauge-{uuid.uuid4().hex}.MAI"
    probe.write_bytes(b"")
    owner = os.stat(f"/proc/{pid}")
    os.chown(probe, owner.st_uid, owner.st_gid)  # as the server's own file: deletable by it
    return probe


def test_stop_and_start_replica(built: Built) -> None:
    """The replica stops and starts, catches up, and its start does not delete the running
    primary's temporary tables (a starting mariadbd deletes every #sql* file in its tmpdir;
    with /tmp shared the primary crashed in ha_maria::drop_table)."""
    state, directory = built.state, built.directory
    primary_temp = _tmpdir_file(directory, "mariadb-primary")
    sb.stop_instance(directory, "mariadb-replica")
    assert not by_name(directory)["mariadb-replica"].running
    assert by_name(directory)["mariadb-primary"].running
    token = uuid.uuid4().hex
    conn = mysql(state, "mariadb-primary")
    try:
        conn.cursor().execute("INSERT INTO app.sandbox_probe VALUES (%s)", (token,))
    finally:
        conn.close()
    sb.start_instance(directory, "mariadb-replica")
    replica = by_name(directory)["mariadb-replica"]
    assert replica.running and replica.detail.startswith("replicating from mariadb-primary")
    assert primary_temp.exists()
    primary_temp.unlink()

    def caught_up() -> bool | None:
        query = "SELECT 1 FROM app.sandbox_probe WHERE token = %s"
        return True if mysql_one(state, "mariadb-replica", query, token) else None

    wait_for(caught_up)


def test_up_restarts_a_stopped_instance(built: Built) -> None:
    sb.stop_instance(built.directory, "pg-standby")
    assert not by_name(built.directory)["pg-standby"].running
    sb.up(built.directory, BASE_PORT)
    assert by_name(built.directory)["pg-standby"].detail == "streaming from pg-primary"


def test_reset_starts_afresh(built: Built) -> None:
    """`reset` discards every server's data and builds the sandbox again, same ports and
    passwords; what was written before is gone, replication runs."""
    token = uuid.uuid4().hex
    conn = mysql(built.state, "mariadb-primary")
    try:
        conn.cursor().execute("CREATE TABLE IF NOT EXISTS app.reset_probe (t varchar(40))")
        conn.cursor().execute("INSERT INTO app.reset_probe VALUES (%s)", (token,))
    finally:
        conn.close()
    said: list[str] = []
    assert sb.reset(built.directory, BASE_PORT, said.append) == built.config
    assert said == []  # nothing to rebuild: everything was new
    assert sb.load_state(built.directory) == built.state
    rows = by_name(built.directory)
    assert all(s.running for s in rows.values())
    assert rows["pg-standby"].detail == "streaming from pg-primary"
    assert rows["mariadb-replica"].detail.startswith("replicating from mariadb-primary")
    query = "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'reset_probe'"
    assert mysql_one(built.state, "mariadb-primary", query)[0] == 0


def test_down_then_foreign_port_blocks_up(built: Built) -> None:
    directory = built.directory
    assert sb.down(directory) == list(reversed(sb.INSTANCES))
    assert not any(s.running for s in sb.status(directory))
    assert sb.down(directory) == []
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", BASE_PORT + 5432))
        squatter.listen()
        with pytest.raises(sb.SandboxError, match=f"port {BASE_PORT + 5432}") as info:
            sb.up(directory, BASE_PORT)
        assert "--base-port" in str(info.value)
        assert "in use by another process" in by_name(directory)["pg-primary"].detail
    assert not any(s.running for s in sb.status(directory))


def make(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # -o deps: the packages are installed; everything else is the Makefile's own recipe
    return subprocess.run(["make", "-s", "-o", "deps", *args], cwd=clone, capture_output=True,
                          text=True, timeout=300, check=False)


def test_make_demo_and_make_down_from_a_mode_700_clone(built: Built) -> None:
    """A clone in a mode-700 home (root's on Debian): `sandbox where` keeps the sandbox out
    of it and says why; `make demo` starts the (stopped) sandbox and the exporter and says
    where; a bare `make down` finds both again and really stops them."""
    home = Path(tempfile.mkdtemp(prefix="dbgauge-home-", dir="/tmp"))  # mode 700
    clone = home / "clone"
    pid = 0
    try:
        clone.mkdir()
        for name in ("Makefile", "pyproject.toml"):
            shutil.copy(REPO / name, clone / name)
        (clone / ".venv").mkdir()
        (clone / ".venv" / "bin").symlink_to(REPO / ".venv" / "bin")
        (clone / ".venv" / ".stamp").touch()
        where = subprocess.run([*DBGAUGE, "sandbox", "where", "--existing"], cwd=clone,
                               capture_output=True, text=True, timeout=60, check=True)
        if os.geteuid() == 0:  # the servers run as postgres and mysql
            assert where.stdout.strip().startswith("/var/tmp/dbgauge-sandbox-"), where.stdout
            assert f"{home} lacks the x permission for the 'postgres' OS user" in where.stderr
        else:  # the servers run as ourselves: the clone's own .sandbox
            assert where.stdout.strip() == str(clone / ".sandbox")
        assert not any(s.running for s in sb.status(built.directory))
        demo = make(clone, "demo", f"SANDBOX_DIR={built.directory}")
        assert demo.returncode == 0, demo.stdout + demo.stderr
        assert f"sandbox   {built.directory}" in demo.stdout
        # the exporter listens where the sandbox's config says: base + 7000
        assert f"metrics   http://127.0.0.1:{BASE_PORT + 7000}/metrics" in demo.stdout
        assert all(s.running for s in sb.status(built.directory))
        pid = int((built.directory / "serve.pid").read_text())
        down = make(clone, "down")  # no SANDBOX_DIR: the clone remembers it
        assert down.returncode == 0, down.stdout + down.stderr
        assert f"stopped: the exporter (pid {pid})" in down.stdout
        assert f"sandbox: {built.directory}" in down.stdout
        assert "stopped: pg-subscriber, pgbouncer, " in down.stdout, down.stdout
        assert not any(s.running for s in sb.status(built.directory))
        wait_for(lambda: not Path(f"/proc/{pid}").exists(), timeout=30,
                 what="the demo exporter gone")
    finally:
        if pid and Path(f"/proc/{pid}").exists():
            os.kill(pid, 15)
        shutil.rmtree(home, ignore_errors=True)
