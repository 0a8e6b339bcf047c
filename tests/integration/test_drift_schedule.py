"""The daemon runs configured checksums on a schedule and serves their last result."""

from __future__ import annotations

import subprocess
import time
from contextlib import closing
from pathlib import Path

import pytest
import yaml

from tests.helpers import parse_metrics, value
from tests.helpers.daemon import Daemon
from tests.helpers.servers import Sandbox, caught_up, execute

pytestmark = pytest.mark.integration


def test_daemon_serves_the_last_checksum_run(sandbox: Sandbox, tmp_path: Path) -> None:
    execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_sched",
            "CREATE TABLE app.drift_sched (id INT PRIMARY KEY, v INT)",
            "INSERT INTO app.drift_sched SELECT seq, seq FROM app.seq_1_to_500")
    caught_up(sandbox)
    execute(sandbox, "mariadb-replica", "UPDATE app.drift_sched SET v = 0 WHERE id IN (7, 9)",
            log_bin=False)
    config = yaml.safe_load(sandbox.config.read_text())
    config["checksums"] = [{"source": "mariadb-primary", "replicas": ["mariadb-replica"],
                            "tables": ["app.drift_sched"], "method": "direct",
                            "interval": "1h"}]
    path = tmp_path / "dbgauge.yaml"
    path.write_text(yaml.safe_dump(config))
    daemon = Daemon(path, tmp_path / "serve.log")
    try:
        job = {"dbgauge_job": "checksum:mariadb-primary"}
        deadline = time.monotonic() + 60
        while True:
            status, body = daemon.get("/metrics")
            assert status == 200
            m = parse_metrics(body)
            if value(m, "dbgauge_checksum_last_run_timestamp_seconds", **job):
                break
            assert time.monotonic() < deadline, daemon.log_text()
            time.sleep(0.2)
        labels = {**job, "table": "app.drift_sched", "replica": "mariadb-replica"}
        assert value(m, "dbgauge_job_success", **job) == 1.0
        assert value(m, "dbgauge_checksum_tables_checked", **job) == 1.0
        assert value(m, "dbgauge_checksum_tables_unchecked", **job) == 0.0
        assert value(m, "dbgauge_checksum_drift", **job) == 1.0
        assert value(m, "dbgauge_checksum_differing_rows", **labels) == 2.0
        assert value(m, "dbgauge_checksum_differing_chunks", **labels) == 1.0
        assert value(m, "dbgauge_checksum_table_rows", **job, table="app.drift_sched") == 500
        assert (value(m, "dbgauge_checksum_last_run_duration_seconds", **job) or 0) > 0
        check = subprocess.run(["promtool", "check", "metrics"], input=body,
                               capture_output=True, text=True, timeout=30, check=False)
        assert check.returncode == 0 and not (check.stdout + check.stderr).strip(), \
            check.stdout + check.stderr
        help_line = body.split("# HELP dbgauge_checksum_differing_rows")[1].split("\n")[0]
        assert "cached" in help_line.lower()
    finally:
        daemon.stop()
        with closing(open(daemon.log)) as log:
            assert "Traceback" not in log.read()
        execute(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.drift_sched")
        caught_up(sandbox)
