"""SIGHUP with a hostile file: a YAML alias bomb in the config, a 5,000-digit port in the
--config.my-cnf file. Each reload fails at once with "reload failed" and the reason, and
the daemon keeps serving its previous config (no spinning reload thread, no traceback).

No sandbox: the targets are closed ports, down at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import free_port
from tests.helpers.daemon import Daemon

pytestmark = pytest.mark.integration


def _laughs() -> str:
    lines = ["l0: &l0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\ntargets: *l8\n"


def _up_targets(d: Daemon) -> set[str]:
    status, body = d.get("/metrics", headers={"X-Prometheus-Scrape-Timeout-Seconds": "2"})
    assert status == 200, body
    return {line.split('"')[1] for line in body.splitlines() if line.startswith("dbgauge_up{")}


def test_alias_bomb_on_sighup_fails_the_reload_and_keeps_the_config(tmp_path: Path) -> None:
    config = tmp_path / "dbgauge.yaml"
    config.write_text("targets:\n  - name: kept\n    kind: postgres\n"
                      f"    dsn: postgresql://dbgauge@127.0.0.1:{free_port()}/postgres\n"
                      "    password_env: KEPT_PASSWORD\n")
    d = Daemon(config, tmp_path / "daemon.log", env={"KEPT_PASSWORD": "x"})
    try:
        assert _up_targets(d) == {"kept"}
        config.write_text(_laughs())
        d.reload("reload failed")
        assert "alias bomb" in d.log_text()
        assert _up_targets(d) == {"kept"}
    finally:
        d.stop()
    assert "Traceback" not in d.log_text()


def test_huge_port_in_the_my_cnf_on_sighup_fails_the_reload(tmp_path: Path) -> None:
    cnf = tmp_path / "my.cnf"
    cnf.write_text(f"[client]\nuser=exporter\npassword=x\nhost=127.0.0.1\nport={free_port()}\n")
    d = Daemon(None, tmp_path / "daemon.log", args=["--config.my-cnf", str(cnf)])
    try:
        before = _up_targets(d)
        cnf.write_text("[client]\nuser=exporter\npassword=x\nhost=127.0.0.1\nport="
                       + "9" * 5000 + "\n")
        d.reload("reload failed")
        assert "is not a TCP port" in d.log_text()
        assert _up_targets(d) == before
    finally:
        d.stop()
    log = d.log_text()
    assert "Traceback" not in log and "9" * 100 not in log
