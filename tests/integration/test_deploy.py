"""deploy/ is real: rules pass promtool, the unit passes systemd-analyze, manifests and the
Dockerfile only use commands and flags the CLI has, and the dashboard only queries metrics
dbgauge exports (checked against a live scrape of the sandbox)."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from dbgauge.app import parse_config
from dbgauge.cli import cli
from dbgauge.toolkit.config import parse_yaml_model
from dbgauge.toolkit.exporter.webconfig import WebConfigModel
from tests.helpers import REPO, parse_metrics, wait_for
from tests.helpers.daemon import Daemon
from tests.helpers.majors import on_major
from tests.helpers.ports import PG_VERSION
from tests.helpers.servers import Sandbox, replica_caught_up, run

pytestmark = pytest.mark.integration

DEPLOY = REPO / "deploy"
DRIFT_TABLE = "app.dbgauge_deploy_checksum"
METRIC = re.compile(r"\b(dbgauge_[a-z0-9_]+)\b")
# Series that exist only under conditions the scraped daemon (the sandbox with scheduled
# checks) does not meet; each must still be declared by a collector, the daemon or a job.
CONDITIONAL: dict[str, str] = {
    "dbgauge_postgres_archiver_last_failed_age_seconds":
        "only once archive_command has failed (the archiver test makes it fail on purpose)",
    "dbgauge_postgres_archiver_last_archived_age_seconds":
        "only once a WAL segment has been archived",
    "dbgauge_postgres_table_dead_tuples":
        "only for tables that exist in the connected database (the top-N may be empty)",
    "dbgauge_postgres_sequence_used_ratio":
        "only for sequences dbgauge may read that have been used (the top-N may be empty)",
    "dbgauge_mysql_group_replication_member_online":
        "MySQL 8 Group Replication only; the sandbox runs MariaDB (captured-output tests)",
}


# ----------------------------------------------------------------- CLI introspection

def parse_cli(argv: list[str]) -> list[str]:
    """Parse `dbgauge ARGV` with the real click command tree (no callback runs).

    Returns the command path; raises click.UsageError for an unknown command or option,
    a missing argument or a bad value.
    """
    ctx = cli.make_context("dbgauge", list(argv), resilient_parsing=False)
    path = ["dbgauge"]
    command: click.Command = cli
    while isinstance(command, click.Group):
        with warnings.catch_warnings():  # click 8.2 deprecates protected_args, 9.0 drops it
            warnings.simplefilter("ignore", DeprecationWarning)
            args = [*getattr(ctx, "protected_args", []), *ctx.args]
        if not args:
            break
        name, sub, rest = command.resolve_command(ctx, args)
        assert sub is not None and name is not None
        path.append(name)
        ctx = sub.make_context(name, rest, parent=ctx, resilient_parsing=False)
        command = sub
    return path


def test_parse_cli_rejects_what_the_cli_rejects() -> None:
    assert parse_cli(["serve", "--config", "x", "--web.config.file", "w"]) == ["dbgauge",
                                                                            "serve"]
    for bad in (["serve", "--no-such-flag"], ["nosuchcommand"], ["collect", "--config", "x"]):
        with pytest.raises(click.UsageError):
            parse_cli(bad)


# ----------------------------------------------------------------- Prometheus rules

def test_promtool_checks_the_rules() -> None:
    proc = subprocess.run(["promtool", "check", "rules", str(DEPLOY / "prometheus/rules.yml")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout


def test_promtool_unit_tests_of_the_rules_pass() -> None:
    proc = subprocess.run(["promtool", "test", "rules", "rules_test.yml"],
                          cwd=DEPLOY / "prometheus", capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SUCCESS" in proc.stdout


def _rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load((DEPLOY / "prometheus/rules.yml").read_text())
    return [rule for group in doc["groups"] for rule in group["rules"]]


def test_every_alert_is_unit_tested_and_has_severity_and_summary() -> None:
    tests = yaml.safe_load((DEPLOY / "prometheus/rules_test.yml").read_text())
    fired = {case["alertname"] for t in tests["tests"] for case in t.get("alert_rule_test", [])
             if case["exp_alerts"]}
    quiet = {case["alertname"] for t in tests["tests"] for case in t.get("alert_rule_test", [])
             if not case["exp_alerts"]}
    alerts = [r for r in _rules() if "alert" in r]
    assert len(alerts) >= 10
    for rule in alerts:
        assert rule["alert"] in fired, f"{rule['alert']} is never tested firing"
        assert rule["alert"] in quiet or "for" not in rule, \
            f"{rule['alert']} is never tested staying quiet before its `for`"
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
    names = {r["alert"] for r in alerts}
    # the failures the issue names, each with an alert
    for needed in ("DbgaugeTargetDown", "DbgaugeMySQLReplicaSQLThreadStopped",
                   "DbgaugeMySQLReplicaIOThreadStopped", "DbgaugeMySQLReplicationLag",
                   "DbgaugePostgresReplicationLag", "DbgaugeMySQLRowLockWaitLong",
                   "DbgaugePostgresLockWaitLong", "DbgaugePgBouncerClientsWaiting",
                   "DbgaugeSplitBrain", "DbgaugeDataDrift"):
        assert needed in names, needed


# ----------------------------------------------------------------- metric names vs reality

def _declared() -> set[str]:
    """Every metric name the code declares: collectors, self metrics, scheduled jobs."""
    from dbgauge.app import registry
    from dbgauge.toolkit.metrics import JOB_METRICS, SELF_METRICS

    names = {s.name for c in registry() for s in c.metrics}
    names |= {s.name for s in (*SELF_METRICS, *JOB_METRICS)}
    names |= {s.name for s in _job_specs()}
    return names


def _job_specs() -> list[Any]:
    """Metric specs of the scheduled check and checksum jobs (declared in checks/)."""
    import importlib

    specs: list[Any] = []
    for module_name in ("dbgauge.checks.schedule", "dbgauge.checks.drift.schedule"):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            continue
        for attr in vars(module).values():
            metrics = getattr(attr, "metrics", None)
            if isinstance(metrics, tuple):
                specs.extend(m for m in metrics if hasattr(m, "name"))
            if hasattr(attr, "name") and hasattr(attr, "labels") and hasattr(attr, "help"):
                specs.append(attr)
    return specs


@pytest.fixture(scope="module")
def live_names(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> Iterator[set[str]]:
    """Metric names of a live scrape of the sandbox, scheduled checks included."""
    d = tmp_path_factory.mktemp("deploy-daemon")
    config = yaml.safe_load(sandbox.config.read_text())
    config["checks"] = [{"check": "split-brain", "interval": "1h"},
                        {"check": "lag", "interval": "1h"}]
    # a table of our own to checksum (dropped again below), so per-table series exist
    config["checksums"] = [{"source": "mariadb-primary", "replicas": ["mariadb-replica"],
                            "tables": [DRIFT_TABLE], "method": "direct", "interval": "1h"}]
    (d / "c.yaml").write_text(yaml.safe_dump(config))
    run(sandbox, "mariadb-primary", "CREATE TABLE IF NOT EXISTS app.dbgauge_deploy_checksum "
        "(id INT PRIMARY KEY, v VARCHAR(20))",
        "REPLACE INTO app.dbgauge_deploy_checksum VALUES (1, 'a')")
    daemon = None
    try:
        replica_caught_up(sandbox)
        daemon = Daemon(d / "c.yaml", d / "log")

        def scraped() -> set[str] | None:
            assert daemon is not None
            status, body = daemon.get("/metrics",
                                      headers={"X-Prometheus-Scrape-Timeout-Seconds": "10"})
            assert status == 200
            m = parse_metrics(body)
            runs = [v for (n, _), v in m.items() if n == "dbgauge_job_last_run_timestamp_seconds"]
            return {n for n, _ in m} if len(runs) == 3 and all(runs) else None

        yield wait_for(scraped, timeout=60, what="the scheduled checks and checksum to run")
    finally:
        if daemon is not None:
            daemon.stop()
        run(sandbox, "mariadb-primary", "DROP TABLE IF EXISTS app.dbgauge_deploy_checksum")
        replica_caught_up(sandbox)


def _dashboard() -> dict[str, Any]:
    return json.loads((DEPLOY / "grafana/dbgauge.json").read_text())


def _panels(dash: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dash["panels"]:
        yield panel
        yield from panel.get("panels", [])


def _exprs() -> list[tuple[str, str]]:
    return [(p["title"], t["expr"]) for p in _panels(_dashboard()) for t in p.get("targets", [])]


def _check_names(where: str, exprs: list[str], live: set[str]) -> None:
    declared = _declared()
    for expr in exprs:
        for name in METRIC.findall(expr):
            if name in live or not on_major(name, PG_VERSION):  # not on this major
                continue
            assert name in declared, f"{where}: {name} in {expr!r} is not a dbgauge metric"
            assert name in CONDITIONAL, (
                f"{where}: {name} is declared but missing from a live scrape of the healthy "
                "sandbox; add it to CONDITIONAL with the reason if that is expected")


def test_dashboard_queries_only_metrics_dbgauge_exports(live_names: set[str]) -> None:
    exprs = _exprs()
    assert len(exprs) >= 25
    _check_names("dashboard", [e for _, e in exprs], live_names)
    # the panels the issue asks for
    text = " ".join(e for _, e in exprs)
    for needed in ("dbgauge_mysql_heartbeat_lag_seconds",
                   "dbgauge_postgres_replication_lag_seconds",
                   "dbgauge_mysql_lock_oldest_wait_seconds",
                   "dbgauge_postgres_lock_oldest_wait_seconds",
                   "dbgauge_mysql_innodb_buffer_pool_bytes",
                   "dbgauge_mysql_innodb_history_list_length",
                   "dbgauge_pgbouncer_pool_client_connections", "dbgauge_check_status",
                   # the mysqld_exporter / postgres_exporter families (issue 15)
                   "dbgauge_mysql_statements_seconds_total", "dbgauge_mysql_table_data_bytes",
                   "dbgauge_mysql_processlist_threads", "dbgauge_mysql_binlog_bytes",
                   "dbgauge_mysql_query_response_time_total",
                   "dbgauge_mysql_global_status_com_select_total",
                   "dbgauge_postgres_database_size_bytes", "dbgauge_postgres_database_xid_age",
                   "dbgauge_postgres_checkpoints_requested_total",
                   "dbgauge_postgres_wal_bytes_total", "dbgauge_postgres_archiver_failed_total",
                   "dbgauge_postgres_statements_seconds_total",
                   "dbgauge_postgres_table_dead_tuples", "dbgauge_postgres_sequence_used_ratio"):
        assert needed in text, needed


def test_rules_use_only_metrics_dbgauge_exports(live_names: set[str]) -> None:
    _check_names("rules.yml", [r["expr"] for r in _rules()], live_names)


def test_dashboard_promql_parses(tmp_path: Path) -> None:
    """promtool parses each expression (as a recording rule), Grafana variables filled in."""
    rules = [{"record": f"dashboard:expr_{i}",
              "expr": expr.replace("$__rate_interval", "5m").replace("$target", ".+")}
             for i, (_, expr) in enumerate(_exprs())]
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    proc = subprocess.run(["promtool", "check", "rules", str(path)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_dashboard_is_importable_grafana_json() -> None:
    dash = _dashboard()
    assert dash["uid"] and dash["title"] and dash["schemaVersion"] >= 30
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert "label_values(dbgauge_up, target)" in json.dumps(variables["target"])
    ids = [p["id"] for p in _panels(dash)]
    assert len(ids) == len(set(ids))
    for panel in _panels(dash):
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${datasource}"
        for target in panel["targets"]:
            # scheduled jobs (checksums span a source and replicas) have no single target
            assert 'target=~"$target"' in target["expr"] \
                or re.search(r"dbgauge_(job|checksum)_", target["expr"]), \
                f"panel {panel['title']!r} ignores the target selector: {target['expr']}"


# ----------------------------------------------------------------- systemd

UNITS = ("dbgauge.service", "dbgauge-heartbeat.service")


def _unit(name: str = "dbgauge.service") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in (DEPLOY / "systemd" / name).read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, _, val = line.partition("=")
            out.setdefault(key.strip(), []).append(val.strip())
    return out


@pytest.mark.parametrize("name", UNITS)
def test_systemd_unit_verifies_and_is_hardened(tmp_path: Path, name: str) -> None:
    unit = _unit(name)
    for cmd in (*unit["ExecStart"], *unit.get("ExecStartPre", [])):
        argv = shlex.split(cmd)
        assert argv[0] == "/opt/dbgauge/bin/dbgauge"
        parse_cli(argv[1:])
    for key, expected in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"),
                          ("CapabilityBoundingSet", ""), ("DynamicUser", "yes"),
                          ("PrivateTmp", "yes"), ("ProtectHome", "yes")):
        assert unit[key] == [expected], key
    # a copy whose binary exists here: systemd-analyze checks ExecStart is executable
    local = tmp_path / name
    dbgauge = Path(sys.executable).parent / "dbgauge"
    local.write_text((DEPLOY / "systemd" / name).read_text()
                     .replace("/opt/dbgauge/bin/dbgauge", str(dbgauge)))
    proc = subprocess.run(["systemd-analyze", "verify", str(local)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stderr.strip() == "", proc.stderr
    proc = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(local)],
                          capture_output=True, text=True, timeout=60, check=False)
    score = re.search(r"Overall exposure level for \S+: ([\d.]+)", proc.stdout)
    assert score is not None, proc.stdout + proc.stderr
    assert float(score.group(1)) <= 2.0, proc.stdout


def test_systemd_analyze_catches_a_broken_unit(tmp_path: Path) -> None:
    """The check above can fail: a typo'd key and a missing binary are reported."""
    bad = tmp_path / "dbgauge.service"
    bad.write_text((DEPLOY / "systemd/dbgauge.service").read_text()
                   .replace("ProtectSystem=", "ProtectSystm="))
    proc = subprocess.run(["systemd-analyze", "verify", str(bad)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert "ProtectSystm" in proc.stderr and "not executable" in proc.stderr


# ----------------------------------------------------------------- Kubernetes and Docker

def _manifests() -> dict[str, dict[str, Any]]:
    docs: dict[str, dict[str, Any]] = {}
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["apiVersion"] and doc["metadata"]["name"], path
            docs[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
    return docs


def _dockerfile() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            instruction, _, rest = line.strip().partition(" ")
            out.append((instruction.upper(), rest.strip()))
    return out


def _entrypoint() -> list[str]:
    return list(json.loads(next(r for i, r in _dockerfile() if i == "ENTRYPOINT")))


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec["containers"]]


def test_kubernetes_manifests_reference_real_commands_and_flags() -> None:
    docs = _manifests()
    for kind in ("Deployment", "Service", "ConfigMap", "ServiceMonitor", "CronJob"):
        assert any(k.startswith(kind + "/") for k in docs), f"no {kind} manifest"
    commands = []
    for name, doc in docs.items():
        if doc["kind"] == "Deployment":
            pod = doc["spec"]["template"]["spec"]
        elif doc["kind"] == "CronJob":
            pod = doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        else:
            continue
        for container in _containers(pod):
            argv = [*container.get("command", _entrypoint()), *container.get("args", [])]
            assert argv[0] == "dbgauge", f"{name}: {argv}"
            commands.append(parse_cli(argv[1:]))
    assert ["dbgauge", "serve"] in commands
    assert ["dbgauge", "checksum"] in commands


def test_kubernetes_manifests_fit_together() -> None:
    docs = _manifests()
    deploy = docs["Deployment/dbgauge"]
    pod_labels = deploy["spec"]["template"]["metadata"]["labels"]
    assert deploy["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    service = docs["Service/dbgauge"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    monitor = docs["ServiceMonitor/dbgauge"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"][
        "labels"].items()
    service_ports = {p["name"] for p in service["spec"]["ports"]}
    for endpoint in monitor["spec"]["endpoints"]:
        assert endpoint["port"] in service_ports
    configmaps = {k.split("/", 1)[1]: d for k, d in docs.items() if k.startswith("ConfigMap/")}
    for name, doc in docs.items():
        if doc["kind"] not in ("Deployment", "CronJob"):
            continue
        pod = doc["spec"]["template"]["spec"] if doc["kind"] == "Deployment" else \
            doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        volumes = {v["name"]: v for v in pod["volumes"]}
        for container in _containers(pod):
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["capabilities"]["drop"] == ["ALL"], name
            mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
            for mount in mounts.values():
                assert mount["name"] in volumes, f"{name}: volume {mount['name']} undefined"
            ports = {p["name"] for p in container.get("ports", [])}
            for probe in ("livenessProbe", "readinessProbe"):
                if probe in container:
                    assert container[probe]["httpGet"]["port"] in ports
            args = container.get("args", [])
            config_path = args[args.index("--config") + 1]
            mount = mounts[config_path]
            cm = configmaps[volumes[mount["name"]]["configMap"]["name"]]
            config = parse_config(cm["data"][mount["subPath"]], f"{name}:{config_path}")
            # every file the config points at is mounted into the container
            files = [str(t.password_file) for t in config.all_targets() if t.password_file]
            if config.daemon.web_config_file and args[0] == "serve":
                files.append(str(config.daemon.web_config_file))
                web_mount = mounts[str(config.daemon.web_config_file)]
                web = parse_yaml_model(WebConfigModel, cm["data"][web_mount["subPath"]],
                                       "web.yml", "mapping")
                assert web.tls_server_config is not None
                files += [str(web.tls_server_config.cert_file),
                          str(web.tls_server_config.key_file)]
            for file in files:
                assert any(file == p or file.startswith(p.rstrip("/") + "/") for p in mounts), \
                    f"{name}: {file} is not mounted"


def test_dockerfile_runs_a_real_command_as_non_root() -> None:
    steps = _dockerfile()
    assert _entrypoint() == ["dbgauge"]
    cmd = json.loads(next(r for i, r in steps if i == "CMD"))
    assert parse_cli(cmd) == ["dbgauge", "serve"]
    assert next(r for i, r in reversed(steps) if i == "USER").split(":")[0] not in ("0", "root")
    base = next(r for i, r in steps if i == "FROM")
    assert re.match(r"python:3\.(1[1-9])", base), base  # requires-python >= 3.11
    for instruction, rest in steps:
        if instruction == "COPY" and "--from" not in rest:
            for src in rest.split()[:-1]:
                assert (REPO / src).exists(), f"COPY {src}: not in the repository"


@pytest.mark.slow
def test_dockerfile_build_stage_builds_a_working_wheel(tmp_path: Path) -> None:
    """No container engine here: replay the build stage's COPY lines into an empty
    directory and build the wheel from exactly that (a missing COPY fails the build)."""
    ctx = tmp_path / "src"
    ctx.mkdir()
    for instruction, rest in _dockerfile():
        if instruction == "COPY" and "--from" not in rest:
            *sources, dest = rest.split()
            for src in sources:
                target = ctx / dest / Path(src).name if dest.endswith("/") or dest == "./" \
                    else ctx / dest
                if (REPO / src).is_dir():
                    # as COPY does: a link (dbgauge/toolkit -> ../toolkit) stays a link
                    shutil.copytree(REPO / src, target, symlinks=True,
                                    ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(REPO / src, target)
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                           "--outdir", str(tmp_path / "dist"), str(ctx)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("dbgauge-*.whl"))
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("dbgauge/sql/mysql/") for n in names)
    assert "dbgauge/toolkit/exporter/webconfig.py" in names and "dbgauge/cli/serve.py" in names
    assert {n.split("/")[0] for n in names} == {"dbgauge", *(n.split("/")[0] for n in names
                                                            if ".dist-info/" in n)}


def test_example_config_is_valid() -> None:
    text = (DEPLOY / "dbgauge.example.yaml").read_text()
    assert parse_config(text, "dbgauge.example.yaml").targets
