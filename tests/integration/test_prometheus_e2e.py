"""End to end with a real Prometheus (Debian's 2.x): it scrapes the sandbox daemon through
/metrics and through the /probe + file_sd relabelling config printed in docs/deploy.md,
evaluates the shipped rules, and fires the replication alert when the replica's SQL thread
is stopped.

The only change to the shipped rules is `for:` shortened to 2s, so the alert fires in
seconds; `promtool test rules` checks the real durations (test_deploy.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from dbgauge.toolkit import sandbox as sb
from tests.helpers import REPO, wait_for
from tests.helpers.daemon import Daemon
from tests.helpers.prometheus import Prometheus
from tests.helpers.prometheus import prometheus as start_prometheus
from tests.helpers.servers import Sandbox, replica_caught_up, run

pytestmark = pytest.mark.integration

# The sandbox config has one target per sandbox instance, named after it.
TARGETS = sb.INSTANCES


def _doc_probe_job() -> dict[str, Any]:
    """The /probe scrape config block from docs/deploy.md, as documented."""
    text = (REPO / "docs/deploy.md").read_text()
    block = re.search(r"<!-- probe-scrape-config:.*?-->\n```yaml\n(.*?)```", text, re.S)
    assert block is not None, "docs/deploy.md lost its probe scrape config block"
    job: dict[str, Any] = yaml.safe_load(block.group(1))["scrape_configs"][0]
    return job


@pytest.fixture(scope="module")
def prometheus(daemon: Daemon, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    d = tmp_path_factory.mktemp("prometheus")
    rules = (REPO / "deploy/prometheus/rules.yml").read_text()
    fast_rules, count = re.subn(r"(?m)^(\s+)for: \S+$", r"\1for: 2s", rules)
    assert count >= 10
    (d / "rules.yml").write_text(fast_rules)
    (d / "targets.json").write_text(json.dumps([{"targets": list(TARGETS),
                                                 "labels": {"team": "sandbox"}}]))
    probe = _doc_probe_job()
    probe["file_sd_configs"] = [{"files": [str(d / "targets.json")], "refresh_interval": "1s"}]
    for rule in probe["relabel_configs"]:
        if rule.get("replacement") == "dbgauge-host:9860":
            rule["replacement"] = f"127.0.0.1:{daemon.port}"
    timing = {"scrape_interval": "2s", "scrape_timeout": "2s"}
    config = {
        "global": {"evaluation_interval": "1s", **timing},
        "rule_files": [str(d / "rules.yml")],
        "scrape_configs": [
            {"job_name": "dbgauge", **timing,
             "static_configs": [{"targets": [f"127.0.0.1:{daemon.port}"]}]},
            {**probe, **timing},
        ],
    }
    with start_prometheus(d, config) as prom:
        yield prom


def _labels(key: tuple[tuple[str, str], ...]) -> dict[str, str]:
    return dict(key)


def test_prometheus_scrapes_every_target_up_through_metrics_and_probe(
        prometheus: Prometheus, daemon: Daemon) -> None:
    def all_up() -> dict[str, Any] | None:
        up = prometheus.query("up")
        by_job: dict[str, set[str]] = {}
        for key, v in up.items():
            if v == 1:
                labels = _labels(key)
                by_job.setdefault(labels["job"], set()).add(labels["instance"])
        if by_job.get("dbgauge-probe") != set(TARGETS) or "dbgauge" not in by_job:
            return None
        via_probe = prometheus.query('dbgauge_up{job="dbgauge-probe"}')
        via_metrics = prometheus.query('dbgauge_up{job="dbgauge"}')
        if len(via_probe) != len(TARGETS) or len(via_metrics) != len(TARGETS):
            return None
        return {"probe": via_probe, "metrics": via_metrics}

    found = wait_for(all_up, timeout=60, interval=0.5)
    for job in ("probe", "metrics"):
        for key, v in found[job].items():
            assert v == 1, (job, key, daemon.log_text()[-3000:])
    # relabelling: the probe job's instance is the database, and file_sd labels arrive
    for key in found["probe"]:
        labels = _labels(key)
        assert labels["instance"] == labels["target"] and labels["team"] == "sandbox"
    targets = prometheus.api("targets")["activeTargets"]
    assert {t["health"] for t in targets} == {"up"}, [t["lastError"] for t in targets]


def test_dashboard_expressions_evaluate_in_prometheus(prometheus: Prometheus) -> None:
    """Every dashboard query runs (Grafana variables filled in) without a PromQL error."""
    dash = json.loads((REPO / "deploy/grafana/dbgauge.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    wait_for(lambda: prometheus.query('dbgauge_up{job="dbgauge"}') or None, timeout=60)
    answered = 0
    for expr in exprs:
        expr = expr.replace("$__rate_interval", "1m").replace("$target", ".+")
        result = prometheus.api("query", query=expr)  # asserts status success
        answered += bool(result["result"])
    assert answered >= len(exprs) // 2, "most panels should have data on the sandbox"


def test_replication_alert_fires_when_the_sql_thread_stops(
        prometheus: Prometheus, sandbox: Sandbox) -> None:
    def alert_state() -> str | None:
        for alert in prometheus.api("alerts")["alerts"]:
            labels = alert["labels"]
            if labels["alertname"] == "DbgaugeMySQLReplicaSQLThreadStopped" \
                    and labels.get("target") == "mariadb-replica":
                return str(alert["state"])
        return None

    wait_for(lambda: prometheus.query('dbgauge_mysql_replica_sql_running{job="dbgauge"}') or None,
         timeout=60)
    assert alert_state() is None  # healthy sandbox: nothing pending or firing
    run(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
    try:
        wait_for(lambda: alert_state() == "firing" or None, timeout=60, interval=0.5)
        running = prometheus.query(
            'dbgauge_mysql_replica_sql_running{job="dbgauge",target="mariadb-replica"}')
        assert list(running.values()) == [0.0]
    finally:
        run(sandbox, "mariadb-replica", "START SLAVE")
    replica_caught_up(sandbox)
    wait_for(lambda: alert_state() is None or None, timeout=60, interval=0.5)
