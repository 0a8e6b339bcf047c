"""validate pgbouncer --live against the sandbox's real PgBouncer 1.18.

The drift test edits a copy of the sandbox's pgbouncer.ini (the running pooler never
sees it): that is exactly a file edited without RELOAD. The shared file is not touched.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from dbgauge.checks.pgbouncer.live import reachable
from dbgauge.cli import cli
from tests.helpers import free_port
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration


def _copy_ini(sandbox: Sandbox, tmp_path: Path) -> Path:
    src = sandbox.state.instance("pgbouncer").datadir / "pgbouncer.ini"
    dst = tmp_path / "pgbouncer.ini"
    shutil.copyfile(src, dst)
    return dst


def _password_file(tmp_path: Path, secret: str) -> str:
    path = tmp_path / "pw"
    path.write_text(secret + "\n")
    return str(path)


def _validate(args: list[str]) -> tuple[int, dict[str, Any], str]:
    res = CliRunner().invoke(cli, ["validate", "pgbouncer", *args, "--format", "json"])
    assert "Traceback" not in res.output
    try:
        doc = json.loads(res.output)
    except json.JSONDecodeError:
        doc = {}
    return res.exit_code, doc, res.output


def _live_args(sandbox: Sandbox, tmp_path: Path) -> list[str]:
    """Live validation as the least-privilege monitoring user (a stats_users member)."""
    return ["--live", sandbox.state.dbgauge_dsn("pgbouncer"),
            "--password-file", _password_file(tmp_path, sandbox.state.dbgauge_password)]


def _line_of(path: Path, pattern: str) -> int:
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if re.match(pattern, line):
            return n
    raise AssertionError(f"{pattern} not in {path}")


def test_unchanged_file_matches_the_running_pooler(sandbox: Sandbox, tmp_path: Path) -> None:
    ini = _copy_ini(sandbox, tmp_path)
    code, doc, out = _validate([str(ini), *_live_args(sandbox, tmp_path)])
    assert code == 0, out
    assert "PgBouncer 1.18" in doc["name"]  # the table version came from the live server
    live_rules = {"pgbouncer/drift", "pgbouncer/restart-pending", "pgbouncer/live-databases",
                  "pgbouncer/unreachable"}
    assert [f for f in doc["findings"] if f["rule"] in live_rules] == []


def test_file_edited_without_reload_shows_drift_and_pending_restart(
        sandbox: Sandbox, tmp_path: Path) -> None:
    ini = _copy_ini(sandbox, tmp_path)
    text = ini.read_text()
    port = sandbox.state.port("pgbouncer")
    text = re.sub(r"(?m)^default_pool_size = \d+$", "default_pool_size = 33", text)
    text = re.sub(r"(?m)^listen_port = \d+$", f"listen_port = {port + 1}", text)
    text = re.sub(r"(?m)^pool_mode = \w+$", "pool_mode = session", text)
    text = text.replace("[pgbouncer]", "reports = host=127.0.0.1 port=1 dbname=reports\n\n"
                                       "[pgbouncer]", 1)
    ini.write_text(text)
    code, doc, out = _validate([str(ini), *_live_args(sandbox, tmp_path)])
    got = {(f["rule"], f["key"], f["line"]) for f in doc["findings"]
           if f["rule"] in ("pgbouncer/drift", "pgbouncer/restart-pending",
                            "pgbouncer/live-databases")}
    assert got == {
        ("pgbouncer/drift", "default_pool_size", _line_of(ini, "default_pool_size")),
        ("pgbouncer/drift", "pool_mode", _line_of(ini, "pool_mode")),
        ("pgbouncer/restart-pending", "listen_port", _line_of(ini, "listen_port")),
        ("pgbouncer/live-databases", "reports", _line_of(ini, "reports =")),
    }, out
    pending = next(f for f in doc["findings"] if f["rule"] == "pgbouncer/restart-pending")
    assert f"running value '{port}'" in pending["message"] and "RELOAD keeps" in pending["message"]
    assert code == 0  # drift is a warning ...
    strict = CliRunner().invoke(cli, ["validate", "pgbouncer", str(ini),
                                      *_live_args(sandbox, tmp_path), "--strict"])
    assert strict.exit_code == 1  # ... and fails the run with --strict


def test_pool_sizing_against_the_real_max_connections(sandbox: Sandbox, tmp_path: Path) -> None:
    ini = _copy_ini(sandbox, tmp_path)
    with psycopg.connect(sandbox.admin_dsn("pg-primary")) as conn:
        max_conn = int(conn.execute("SHOW max_connections").fetchone()[0])  # type: ignore[index]
        reserved = int(conn.execute(
            "SHOW superuser_reserved_connections").fetchone()[0])  # type: ignore[index]
    limit = max_conn - reserved
    n_dbs = sum(1 for line in ini.read_text().split("[pgbouncer]")[0].splitlines()
                if re.match(r"^\w+ = host=", line))
    # Cap every pool so the worst case fits, then blow it up: the check must follow.
    text = ini.read_text()
    fits = re.sub(r"(?m)^default_pool_size = \d+$", "default_pool_size = 1", text)
    fits = re.sub(r" pool_size=\d+", " pool_size=1", fits)
    ini.write_text(fits)
    args = [str(ini), "--postgres", sandbox.admin_dsn("pg-primary")]
    code, doc, out = _validate(args)
    assert not [f for f in doc["findings"] if f["rule"] == "pgbouncer/sizing"], out
    ini.write_text(re.sub(r"(?m)^default_pool_size = \d+$",
                          f"default_pool_size = {limit + 1}", fits))
    code, doc, out = _validate(args)
    sizing = [f for f in doc["findings"] if f["rule"] == "pgbouncer/sizing"]
    assert code == 1 and len(sizing) == 1, out
    assert f"PostgreSQL allows {max_conn} - {reserved} reserved = {limit}" in sizing[0]["message"]
    assert n_dbs >= 2


def test_backend_reachability_probe(sandbox: Sandbox) -> None:
    assert reachable("127.0.0.1", sandbox.state.port("pg-primary"), 2.0) is None
    closed = free_port()
    assert reachable("127.0.0.1", closed, 2.0)
    assert reachable("/nonexistent-dir", 5432, 2.0)


def test_live_failures_exit_2_without_secrets(sandbox: Sandbox, tmp_path: Path) -> None:
    ini = _copy_ini(sandbox, tmp_path)
    port = sandbox.state.port("pgbouncer")
    wrong = f"postgresql://dbgauge:not-the-password-42@127.0.0.1:{port}/pgbouncer"
    res = CliRunner().invoke(cli, ["validate", "pgbouncer", str(ini), "--live", wrong])
    assert res.exit_code == 2
    assert "authentication failed" in res.output and "not-the-password-42" not in res.output
    assert "Traceback" not in res.output
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    res = CliRunner().invoke(cli, ["validate", "pgbouncer", str(ini), "--live",
                                   f"postgresql://dbgauge@127.0.0.1:{dead}/pgbouncer"])
    assert res.exit_code == 2 and "cannot connect" in res.output
