"""Writers check before they write, against the sandbox: every dbgauge writer refuses a
read-only server with exit 2 and a message naming what it found, and the server's GTID
and binlog positions do not move -- even for an account the server would let write.

The account here has ALL PRIVILEGES (SUPER, READ ONLY ADMIN on MariaDB 10.11): read_only
does not stop it, only dbgauge's guard does. Refusals run against the replica (read_only
ON). What must write (--allow-read-only) or turn read-only mid-run runs on the primary
made read-only for the test (SET GLOBAL read_only, always set OFF again): its writes then
replicate normally, and the replica never holds an errant transaction that would turn
later split-brain tests CRITICAL.
"""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbgauge.checks.drift import ChecksumOptions, run_checksum
from dbgauge.toolkit.db import connect_dsn
from dbgauge.toolkit.errors import WriteRefused
from dbgauge.toolkit.gtid import errant_mariadb, mariadb_state
from dbgauge.toolkit.heartbeat import HeartbeatWriter
from dbgauge.toolkit.sql import quote_ident
from dbgauge.toolkit.targets import Heartbeat, Target
from tests.helpers import DBGAUGE, REPO, wait_for
from tests.helpers.daemon import Daemon
from tests.helpers.drift import mariadb_table, targets
from tests.helpers.servers import (
    Sandbox,
    execute,
    mariadb_account,
    replica_caught_up,
    run,
)

pytestmark = pytest.mark.integration

SUPER = "dbgauge_wg_super"
HB_TABLE = "dbgauge.wg_heartbeat"  # not dbgauge.heartbeat: other tests own that one
REPLICATE = "dbgauge.wg_checksums"
CHUNKED = "app.wg_chunked"


@pytest.fixture(scope="module")
def super_pw(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The password file of SUPER, an all-privileges account (replicated to the replica)."""
    password = secrets.token_hex(12)
    path = tmp_path_factory.mktemp("wg") / "super.pw"
    path.write_text(password + "\n")
    path.chmod(0o600)
    with mariadb_account(sandbox, SUPER, password, "ALL PRIVILEGES"):
        replica_caught_up(sandbox)
        yield path
    execute(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS {HB_TABLE}, {REPLICATE}")
    replica_caught_up(sandbox)


def dsn(sandbox: Sandbox, name: str) -> str:
    return f"mysql://{SUPER}@127.0.0.1:{sandbox.state.port(name)}/"


def super_target(sandbox: Sandbox, name: str, pw: Path, heartbeat: Heartbeat | None = None
                 ) -> Target:
    return Target(name=name, kind="mysql", dsn=dsn(sandbox, name), password_file=pw,
                  heartbeat=heartbeat)


def positions(sandbox: Sandbox, name: str) -> dict[str, Any]:
    """Where the server's GTIDs and binlog are: any write it logs moves one of them."""
    row = run(sandbox, name, "SELECT @@GLOBAL.gtid_current_pos AS current_pos, "
                             "@@GLOBAL.gtid_binlog_pos AS binlog_pos")[0]
    status = run(sandbox, name, "SHOW MASTER STATUS")[0]
    return {**row, "file": status["File"], "position": status["Position"]}


def own_writes(sandbox: Sandbox, name: str) -> dict[tuple[int, int], int]:
    """The newest seq per domain of the transactions the server binlogged itself (its own
    server_id in gtid_binlog_state): on a replica, each one is an errant transaction."""
    row = run(sandbox, name, "SELECT @@GLOBAL.gtid_binlog_state AS state, "
                             "@@GLOBAL.server_id AS id")[0]
    return {key: seq for key, seq in mariadb_state(row["state"]).items()
            if key[1] == int(row["id"])}


@contextmanager
def unmoved(sandbox: Sandbox) -> Iterator[None]:
    """The replica binlogs no transaction of its own within the block. When nothing wrote
    on the primary meanwhile, neither server's GTID or binlog position moved at all; when
    something did (another test module's daemon keeps a heartbeat on the primary), the
    replica moved only by what it replicated: no GTID the primary lacks."""
    names = ("mariadb-primary", "mariadb-replica")
    before = {name: positions(sandbox, name) for name in names}
    own = own_writes(sandbox, "mariadb-replica")
    yield
    after = {name: positions(sandbox, name) for name in names}
    assert own_writes(sandbox, "mariadb-replica") == own
    if after["mariadb-primary"] == before["mariadb-primary"]:
        # no GTID moved on either server: no transaction was logged. (A fresh-clone run saw
        # the replica's binlog grow by 368 bytes with both GTIDs unchanged: events that are
        # no transaction, such as the Binlog_checkpoint events MariaDB writes a moment
        # after earlier commits became durable; not identified further.)
        gtids = ("current_pos", "binlog_pos")
        assert {n: {k: after[n][k] for k in gtids} for n in names} == \
            {n: {k: before[n][k] for k in gtids} for n in names}
        return
    replica = run(sandbox, "mariadb-replica", "SELECT @@GLOBAL.gtid_binlog_state AS s")[0]["s"]
    primary = run(sandbox, "mariadb-primary", "SELECT @@GLOBAL.gtid_binlog_state AS s")[0]["s"]
    assert errant_mariadb(replica, mariadb_state(primary)) == ()


@contextmanager
def read_only_primary(sandbox: Sandbox) -> Iterator[None]:
    """The primary read_only (a demoted primary) for the block; OFF again afterwards."""
    execute(sandbox, "mariadb-primary", "SET GLOBAL read_only = ON")
    try:
        yield
    finally:
        execute(sandbox, "mariadb-primary", "SET GLOBAL read_only = OFF")


def table_exists(sandbox: Sandbox, name: str, table: str) -> bool:
    schema, _, tbl = table.partition(".")
    return bool(run(sandbox, name, ("SELECT COUNT(*) AS n FROM information_schema.TABLES "
                                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                                    (schema, tbl)))[0]["n"])


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*DBGAUGE, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, check=False)


# ----------------------------------------------------------------- heartbeat


def test_heartbeat_update_refuses_the_replica_and_writes_nothing(sandbox: Sandbox,
                                                                  super_pw: Path) -> None:
    """The issue's command: --create-table on the replica with an account that could write."""
    execute(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS {HB_TABLE}")
    replica_caught_up(sandbox)
    with unmoved(sandbox):
        out = cli("heartbeat", "update", dsn(sandbox, "mariadb-replica"), "--table", HB_TABLE,
                  "--create-table", "--interval", "200ms", "--password-file", str(super_pw))
    assert out.returncode == 2, out.stdout + out.stderr
    assert ("refusing to write the heartbeat row (dbgauge.wg_heartbeat) on target "
            "127.0.0.1:") in out.stderr
    assert "the server is read-only (read_only=ON)" in out.stderr
    assert "errant transaction" in out.stderr and "pass --allow-read-only" in out.stderr
    assert "Traceback" not in out.stderr
    assert not table_exists(sandbox, "mariadb-replica", HB_TABLE)  # not even the table


def test_heartbeat_writer_waits_out_a_read_only_server_and_writes_again(
        sandbox: Sandbox, super_pw: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A primary demoted (read_only) while the writer runs: nothing written, one log line,
    and writing again once it takes writes (a switchover back)."""
    writer = HeartbeatWriter(super_target(sandbox, "mariadb-primary", super_pw,
                                          Heartbeat("write", 0.1, HB_TABLE)))
    with caplog.at_level(logging.DEBUG, logger="dbgauge.heartbeat"):
        writer.start()
        try:
            wait_for(lambda: writer.writes >= 2, what="heartbeat writes on the primary")
            with read_only_primary(sandbox):
                refused = writer.refused
                wait_for(lambda: writer.refused > refused, what="a refusal")
                with unmoved(sandbox):
                    stalled = writer.writes
                    wait_for(lambda: writer.refused >= refused + 5, what="more refusals")
                    assert writer.writes == stalled
            wait_for(lambda: writer.writes >= stalled + 2, what="writing again")
            assert writer.running
        finally:
            writer.stop()
    messages = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    refusals = [m for m in messages if "wrote nothing" in m]
    assert len(refusals) == 1, messages  # logged once, however many times it asked
    assert "read_only=ON" in refusals[0]
    assert "set heartbeat.allow_read_only: true on target mariadb-primary" in refusals[0]
    assert any("is writing again" in m for m in messages), messages


def test_allow_read_only_writes_through_read_only(sandbox: Sandbox, super_pw: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    writer = HeartbeatWriter(super_target(sandbox, "mariadb-primary", super_pw,
                                          Heartbeat("write", 0.1, HB_TABLE,
                                                    allow_read_only=True)))
    with caplog.at_level(logging.INFO, logger="dbgauge.heartbeat"), \
            read_only_primary(sandbox):
        before = positions(sandbox, "mariadb-primary")
        writer.start()
        try:
            wait_for(lambda: writer.writes >= 3, what="writes on the read-only primary")
        finally:
            writer.stop()
        assert positions(sandbox, "mariadb-primary")["binlog_pos"] != before["binlog_pos"]
    assert writer.refused == 0
    noted = [r.getMessage() for r in caplog.records if "writes although" in r.getMessage()]
    assert len(noted) == 1 and "read_only=ON" in noted[0], noted
    replica_caught_up(sandbox)  # the writes were the primary's: they replicate


def test_heartbeat_update_allow_read_only_writes_on_a_read_only_server(
        sandbox: Sandbox, super_pw: Path) -> None:
    with read_only_primary(sandbox):
        before = positions(sandbox, "mariadb-primary")
        writer = subprocess.Popen(
            [*DBGAUGE, "heartbeat", "update", dsn(sandbox, "mariadb-primary"), "--table",
             HB_TABLE, "--create-table", "--interval", "100ms", "--allow-read-only",
             "--password-file", str(super_pw)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: positions(sandbox, "mariadb-primary")["binlog_pos"]
                     != before["binlog_pos"], what="the heartbeat written on the primary")
            assert writer.poll() is None  # still writing in the foreground
        finally:
            writer.terminate()
            _, err = writer.communicate(timeout=15)
    assert writer.returncode == 0, err
    assert err.count("writes although the server is read-only (read_only=ON)") == 1, err
    replica_caught_up(sandbox)


def test_daemon_writer_on_a_read_only_target_writes_nothing_and_logs_once(
        sandbox: Sandbox, super_pw: Path, tmp_path: Path) -> None:
    config = tmp_path / "wg.yaml"
    config.write_text(yaml.safe_dump({"targets": [{
        "name": "wg-replica", "kind": "mysql", "dsn": dsn(sandbox, "mariadb-replica"),
        "password_file": str(super_pw), "collectors": ["mysql_replication"],
        "heartbeat": {"mode": "write", "interval": 0.2, "table": HB_TABLE}}]}))
    with unmoved(sandbox):
        d = Daemon(config, tmp_path / "serve.log", args=["--log.level", "debug"])
        try:
            wait_for(lambda: d.log_text().count("the server is still read-only") >= 5,
                     timeout=30, what="the daemon's writer asking again")
            status, _ = d.get("/metrics")
            assert status == 200  # the daemon is unharmed
        finally:
            assert d.stop() == 0
    log = d.log_text()
    assert log.count("wrote nothing") == 1, log
    assert "refusing to write the heartbeat row (dbgauge.wg_heartbeat) on target wg-replica: " \
           "the server is read-only (read_only=ON)" in log
    assert "set heartbeat.allow_read_only: true on target wg-replica" in log


# ----------------------------------------------------------------- checksum --replicate


@pytest.fixture(scope="module")
def chunked(sandbox: Sandbox, super_pw: Path) -> Iterator[str]:
    """A 1000-row table on both servers, walked in 10 chunks of 100 rows."""
    with mariadb_table(sandbox, CHUNKED,
                       "CREATE TABLE app.wg_chunked (id INT PRIMARY KEY, v INT) ENGINE=InnoDB",
                       "INSERT INTO app.wg_chunked SELECT seq, seq FROM app.seq_1_to_1000"):
        yield CHUNKED


def _options(**extra: Any) -> ChecksumOptions:
    return ChecksumOptions(tables=(CHUNKED,), method="replicated", chunk_size=100,
                           whole_table_time=0, replicate=REPLICATE, keep_state=False, **extra)


def test_checksum_refuses_a_read_only_source_before_writing(
        sandbox: Sandbox, super_pw: Path, chunked: str) -> None:
    replica = targets(sandbox)["mariadb-replica"]
    with read_only_primary(sandbox), unmoved(sandbox):
        with pytest.raises(WriteRefused) as refused:
            run_checksum(super_target(sandbox, "mariadb-primary", super_pw), [replica],
                         _options())
        out = cli("checksum", "--source", dsn(sandbox, "mariadb-primary"), "--replica",
                  dsn(sandbox, "mariadb-replica"), "--tables", CHUNKED,
                  "--method", "replicated", "--replicate", REPLICATE,
                  "--password-file", str(super_pw), "--quiet")
    assert str(refused.value).startswith(
        "refusing to write checksum chunks into dbgauge.wg_checksums on source "
        "mariadb-primary: the server is read-only (read_only=ON)"), refused.value
    assert "pass --allow-read-only (a checksums: job: allow_read_only: true)" in str(
        refused.value)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "refusing to write checksum chunks" in out.stderr
    assert "the server is read-only (read_only=ON)" in out.stderr
    assert not table_exists(sandbox, "mariadb-primary", REPLICATE)


class FlipAfterFirstChunk:
    """Makes the primary read-only once the first chunk is written (a switchover mid-run)
    and notes its positions then."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.at_flip: dict[str, Any] | None = None
        self.notes: list[str] = []

    def plan(self, tables: Sequence[tuple[str, int]]) -> None:
        pass

    def progress(self, table: str, rows: int, total: int) -> None:
        if rows > 0 and self.at_flip is None:
            execute(self.sandbox, "mariadb-primary", "SET GLOBAL read_only = ON")
            self.at_flip = positions(self.sandbox, "mariadb-primary")

    def note(self, text: str) -> None:
        self.notes.append(text)


def test_checksum_stops_writing_when_the_source_turns_read_only(
        sandbox: Sandbox, super_pw: Path, chunked: str) -> None:
    replica = targets(sandbox)["mariadb-replica"]
    flip = FlipAfterFirstChunk(sandbox)
    try:
        with pytest.raises(WriteRefused, match=r"read_only=ON"):
            run_checksum(super_target(sandbox, "mariadb-primary", super_pw), [replica],
                         _options(), flip)
        assert flip.at_flip is not None
        assert positions(sandbox, "mariadb-primary") == flip.at_flip
    finally:
        execute(sandbox, "mariadb-primary", "SET GLOBAL read_only = OFF")
    written = run(sandbox, "mariadb-primary", "SELECT COUNT(*) AS n FROM dbgauge.wg_checksums "
                  "WHERE tbl = 'wg_chunked'")[0]["n"]
    assert written == 1  # the chunk before the switchover, none after
    replica_caught_up(sandbox)


def test_checksum_allow_read_only_writes_on_a_read_only_source(
        sandbox: Sandbox, super_pw: Path, chunked: str) -> None:
    replica = targets(sandbox)["mariadb-replica"]
    notes: list[str] = []

    class Notes(FlipAfterFirstChunk):
        def progress(self, table: str, rows: int, total: int) -> None:
            pass

        def note(self, text: str) -> None:
            notes.append(text)

    with read_only_primary(sandbox):
        result = run_checksum(super_target(sandbox, "mariadb-primary", super_pw), [replica],
                              _options(allow_read_only=True), Notes(sandbox))
    assert result.evidence["status"] == "ok", result.evidence
    chunks = result.evidence["tables"][0]["chunks"]
    assert chunks >= 10  # 100-row chunks, and the open-ended ones at both ends
    assert run(sandbox, "mariadb-primary", "SELECT COUNT(*) AS n FROM dbgauge.wg_checksums "
               "WHERE tbl = 'wg_chunked'")[0]["n"] == chunks  # each written on the source
    assert any("is read-only (read_only=ON): writing the checksum chunks anyway" in n
               for n in notes), notes
    replica_caught_up(sandbox)


# ----------------------------------------------------------------- PostgreSQL


class PgScratch:
    """A database made on pg-primary (without pgTAP) for one test; dropped afterwards."""

    def __init__(self, sandbox: Sandbox, name: str) -> None:
        self.sandbox = sandbox
        self.name = name
        self._admin("CREATE DATABASE {}")

    def _admin(self, statement: str) -> None:
        conn = connect_dsn(self.sandbox.admin_dsn("pg-primary"))
        try:
            conn.execute_sql(statement.format(quote_ident(self.name, "postgres")))
        finally:
            conn.close()

    def dsn(self, instance: str) -> str:
        return self.sandbox.admin_dsn(instance, database=self.name)

    def has_pgtap(self, instance: str) -> bool:
        conn = connect_dsn(self.dsn(instance))
        try:
            return bool(conn.execute_sql("SELECT count(*) AS n FROM pg_extension "
                                         "WHERE extname = 'pgtap'")[0]["n"])
        finally:
            conn.close()

    def drop(self) -> None:
        self._admin("DROP DATABASE IF EXISTS {} WITH (FORCE)")


def pgtap(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dbgauge", "pgtap", "run", *args], cwd=REPO,
                          env={**os.environ, "DBGAUGE_PGTAP_DSN": dsn},
                          capture_output=True, text=True, timeout=60, check=False)


SUITE = str(REPO / "tests" / "fixtures" / "pgtap" / "suites" / "pass.sql")


def test_install_pgtap_refuses_the_standby(sandbox: Sandbox) -> None:
    scratch = PgScratch(sandbox, f"dbgauge_wg_{secrets.token_hex(4)}")
    try:
        def on_standby() -> bool:
            try:
                connect_dsn(scratch.dsn("pg-standby")).close()
            except Exception:
                return False
            return True

        wait_for(on_standby, timeout=30, what="the scratch database on the standby")
        out = pgtap(scratch.dsn("pg-standby"), "--install-pgtap", SUITE)
        assert out.returncode == 2, out.stdout + out.stderr
        assert "refusing to create extension pgtap (--install-pgtap) on 127.0.0.1:" \
            in out.stderr
        assert "in recovery (pg_is_in_recovery() is true)" in out.stderr
        assert "it is a standby" in out.stderr and "no option makes" in out.stderr
        assert not scratch.has_pgtap("pg-primary")
    finally:
        scratch.drop()


def test_install_pgtap_refuses_default_transaction_read_only(sandbox: Sandbox) -> None:
    scratch = PgScratch(sandbox, f"dbgauge_wg_{secrets.token_hex(4)}")
    try:
        scratch._admin("ALTER DATABASE {} SET default_transaction_read_only = on")
        out = pgtap(scratch.dsn("pg-primary"), "--install-pgtap", SUITE)
        assert out.returncode == 2, out.stdout + out.stderr
        assert "the server is read-only (default_transaction_read_only=on)" in out.stderr
        assert "its transactions are read-only by default" in out.stderr
        assert not scratch.has_pgtap("pg-primary")
        # the same database taking writes again: --install-pgtap works there
        scratch._admin("ALTER DATABASE {} RESET default_transaction_read_only")
        ok = pgtap(scratch.dsn("pg-primary"), "--install-pgtap", SUITE)
        assert ok.returncode == 0, ok.stdout + ok.stderr
    finally:
        scratch.drop()

