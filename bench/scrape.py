"""Compare the cost of one scrape: dbgauge vs the usual Prometheus exporters.

Runs dbgauge and its peer (mysqld_exporter, postgres_exporter and, if it works,
the Python pgbouncer exporter) against the same sandbox server, scrapes both
alternately and prints latency, CPU per scrape, RSS and series count per scrape.
Alternating scrapes means both exporters see the same server state over time. The peers
run with the parity set (MYSQLD_PARITY flags; bench/parity/postgres_queries.yaml), the
collectors that export what dbgauge's defaults export, so series counts are comparable.

With --compat, dbgauge also speaks the peer's names (`daemon.compat`: mysqld_exporter,
postgres_exporter, pgbouncer_exporter), so it serves its own families and the peer's: the
cost of switching without touching a dashboard, against the peer it imitates.

Usage: python bench/scrape.py [--sandbox-dir .sandbox] [--scrapes 200] [--warmup 10]
                              [--compat] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import quote, urlsplit

import yaml
from harness import (
    CLK_TCK,
    HOST,
    BenchError,
    Result,
    Running,
    Spec,
    cpu_seconds,
    free_port,
    rss_mib,
    version_of,
)

PAIR_BUDGET = 50.0       # seconds of measured scrapes per pair; keeps the run ~3 min max
SELF_PREFIXES = ("go_", "process_", "promhttp_", "python_")
MYSQLD = "/usr/bin/prometheus-mysqld-exporter"
POSTGRES = "/usr/bin/prometheus-postgres-exporter"
PGBOUNCER = "/usr/bin/prometheus-pgbouncer-exporter"
FAIRNESS = ("dbgauge runs as its own process per pair, with a temporary config holding only "
            "the target under test, scraped at /metrics: the same shape as the peer (one "
            "process, one server). /probe on one shared daemon was not used, because its RSS "
            "and CPU would include the other targets' runners and connections.")


# --------------------------------------------------------------------- exposition parsing

def series_lines(body: str) -> list[str]:
    return [ln for ln in body.splitlines() if ln and not ln.startswith("#")]


def label_values(body: str, metric: str, label: str, value: str | None = None) -> list[str]:
    """Values of `label` on samples of `metric` (optionally only those equal to `value`)."""
    rx = re.compile(rf'^{metric}\{{[^}}]*\b{label}="([^"]*)"[^}}]*\}} (\S+)$', re.M)
    return sorted({m[1] for m in rx.finditer(body)
                   if value is None or float(m[2]) == float(value)})


def has_sample(body: str, pattern: str) -> bool:
    return re.search(rf"^{pattern}$", body, re.M) is not None


def dbgauge_collectors(body: str) -> str:
    ran = label_values(body, "dbgauge_collector_success", "collector")
    return "collectors: " + (", ".join(ran) or "none")


def mysqld_collectors(body: str) -> str:
    ran = label_values(body, "mysql_exporter_collector_duration_seconds", "collector")
    return "defaults: " + ", ".join(c for c in ran if c != "connection")


PG_MAPS = ("pg_stat_database", "pg_stat_database_conflicts", "pg_stat_activity",
           "pg_stat_replication", "pg_replication_slots", "pg_stat_archiver", "pg_locks",
           "pg_settings")


def postgres_collectors(body: str) -> str:
    ran = label_values(body, "pg_scrape_collector_success", "collector")
    maps = [m for m in PG_MAPS if re.search(rf"^{m}_(?!conflicts)\w+[{{ ]", body, re.M)]
    return f"collectors: {', '.join(ran)}; built-in maps: {', '.join(maps) or 'none'}"


def scrape_warnings(name: str, body: str) -> list[str]:
    """Collector failures the exporter reports while still saying the target is up."""
    failed: list[str] = []
    if name == "dbgauge":
        failed = label_values(body, "dbgauge_collector_success", "collector", "0")
    elif name == "mysqld_exporter" and has_sample(body, r"mysql_exporter_last_scrape_error 1"):
        failed = ["last scrape error (mysql_exporter_last_scrape_error 1)"]
    elif name == "postgres_exporter":
        failed = label_values(body, "pg_scrape_collector_success", "collector", "0")
        if has_sample(body, r"pg_exporter_last_scrape_error 1"):
            failed.append("last scrape error (pg_exporter_last_scrape_error 1)")
    return [f"failing: {f}" for f in failed]


# --------------------------------------------------------------------- sandbox and specs

@dataclass(frozen=True)
class Target:
    """A sandbox target as dbgauge.yaml describes it, plus the monitoring password."""

    name: str
    entry: dict[str, Any]
    host: str
    port: int
    user: str
    dbname: str
    password: str


def load_sandbox(directory: Path) -> tuple[dict[str, Any], dict[str, Target]]:
    """Read DIR/dbgauge.yaml and DIR/sandbox.json; explain how to get them if missing."""
    config_file, state_file = directory / "dbgauge.yaml", directory / "sandbox.json"
    for f in (config_file, state_file):
        if not f.is_file():
            raise BenchError(f"{f} not found: start the sandbox first "
                             f"(.venv/bin/dbgauge sandbox up --dir {directory})")
    config = yaml.safe_load(config_file.read_text())
    try:
        password = json.loads(state_file.read_text())["dbgauge_password"]
    except (KeyError, ValueError) as exc:
        raise BenchError(f"{state_file}: no dbgauge_password ({exc})") from None
    targets: dict[str, Target] = {}
    for entry in config.get("targets", []):
        url = urlsplit(entry["dsn"])
        targets[entry["name"]] = Target(
            entry["name"], entry, url.hostname or HOST, url.port or 0,
            url.username or "dbgauge", url.path.lstrip("/"), password)
    return config, targets


def dbgauge_spec(target: Target, daemon: dict[str, Any], tmp: Path, port: int) -> Spec:
    """dbgauge with a config of this one target (JSON is valid YAML)."""
    path = tmp / f"dbgauge-{target.name}.yaml"
    path.write_text(json.dumps({"daemon": daemon, "targets": [target.entry]}, indent=2))
    exe = Path(sys.executable).with_name("dbgauge")
    if not exe.exists():
        exe = Path(__file__).resolve().parent.parent / ".venv" / "bin" / "dbgauge"
    name = re.escape(target.name)
    return Spec(
        "dbgauge", target.name, port,
        [str(exe), "serve", "--config", str(path), "--listen", f"{HOST}:{port}"], "/metrics",
        lambda body: has_sample(body, rf'dbgauge_up\{{[^}}]*target="{name}"[^}}]*\}} 1(\.0)?'),
        "dbgauge_up 1", dbgauge_collectors)


# The parity set: the peers' collectors that cover what dbgauge's default collectors export
# (issue 15), so the series counts are comparable and neither side is measured doing less.
MYSQLD_PARITY = (
    "--collect.global_status", "--collect.global_variables", "--collect.slave_status",
    "--collect.info_schema.innodb_metrics", "--collect.engine_innodb_status",
    "--collect.perf_schema.eventsstatements", "--collect.perf_schema.eventsstatements.limit=50",
    "--collect.perf_schema.tableiowaits", "--collect.info_schema.tables",
    "--collect.info_schema.processlist", "--collect.binlog_size",
    "--collect.info_schema.query_response_time",
)
POSTGRES_PARITY = Path(__file__).resolve().parent / "parity" / "postgres_queries.yaml"


def mysqld_spec(target: Target, tmp: Path, port: int) -> Spec:
    cnf = tmp / "my.cnf"
    cnf.write_text(f"[client]\nuser={target.user}\npassword={target.password}\n"
                   f"host={target.host}\nport={target.port}\n")
    cnf.chmod(0o600)
    return Spec("mysqld_exporter", target.name, port,
                [MYSQLD, f"--config.my-cnf={cnf}", f"--web.listen-address={HOST}:{port}",
                 *MYSQLD_PARITY],
                "/metrics", lambda body: has_sample(body, r"mysql_up 1"), "mysql_up 1",
                mysqld_collectors)


def postgres_spec(target: Target, port: int) -> Spec:
    dsn = (f"postgresql://{quote(target.user, safe='')}:{quote(target.password, safe='')}"
           f"@{target.host}:{target.port}/{target.dbname}?sslmode=disable")
    return Spec("postgres_exporter", target.name, port,
                [POSTGRES, f"--web.listen-address={HOST}:{port}",
                 f"--extend.query-path={POSTGRES_PARITY}"], "/metrics",
                lambda body: has_sample(body, r"pg_up 1"), "pg_up 1", postgres_collectors,
                {"DATA_SOURCE_NAME": dsn})


def pgbouncer_spec(target: Target, port: int) -> Spec:
    """The Python exporter has no up metric; its pgbouncer_* families prove it got answers."""
    return Spec("pgbouncer_exporter", target.name, port,
                [PGBOUNCER, "--host", HOST, "--port", str(port), "--pgbouncer-host",
                 target.host, "--pgbouncer-port", str(target.port), "--pgbouncer-user",
                 target.user],
                "/metrics", lambda body: has_sample(body, r"pgbouncer_databases(\{.*\})? \S+"),
                "pgbouncer_databases present (it has no up metric)",
                lambda _body: "all: SHOW STATS, POOLS, DATABASES, LISTS",
                {"PGPASSWORD": target.password})


def peer_spec(binary: str, target: Target, tmp: Path) -> Spec:
    if binary == MYSQLD:
        return mysqld_spec(target, tmp, free_port())
    if binary == POSTGRES:
        return postgres_spec(target, free_port())
    return pgbouncer_spec(target, free_port())


# --------------------------------------------------------------------- measuring

def measure_pair(specs: list[Spec], logs: Path, scrapes: int, warmup: int) -> list[Result]:
    """Start both exporters, warm up, then alternate scrapes; always stop both."""
    running: list[Running] = []
    try:
        for spec in specs:
            running.append(Running(spec, logs / f"{spec.name}.log"))
        for r in running:
            r.wait_ready()
        results = [Result(s.name, s.target, version_of(s.argv[:1])) for s in specs]
        for _ in range(warmup):
            for r in running:
                r.scrape()
        cpu0 = [cpu_seconds(r.proc.pid) for r in running]
        deadline = time.monotonic() + PAIR_BUDGET
        bodies = [""] * len(running)
        for i in range(scrapes):
            if time.monotonic() > deadline:
                for res in results:
                    res.warnings.append(f"stopped after {i} scrapes ({PAIR_BUDGET:.0f} s budget)")
                break
            # Alternate who goes first so neither always follows the other's server work.
            order = range(len(running)) if i % 2 == 0 else reversed(range(len(running)))
            for j in order:
                ms, bodies[j] = running[j].scrape()
                results[j].latencies_ms.append(ms)
        for j, (r, res) in enumerate(zip(running, results, strict=True)):
            res.scrapes = len(res.latencies_ms)
            res.cpu_seconds = cpu_seconds(r.proc.pid) - cpu0[j]
            res.rss_mib = rss_mib(r.proc.pid)
            lines = series_lines(bodies[j])
            res.series = len(lines)
            res.self_series = sum(ln.startswith(SELF_PREFIXES) for ln in lines)
            res.collectors = r.spec.collectors(bodies[j])
            res.warnings += scrape_warnings(r.spec.name, bodies[j]) + r.log_problems()
        return results
    finally:
        for r in running:
            r.stop()


# --------------------------------------------------------------------- output

def fmt(x: float, digits: int = 1) -> str:
    return f"{x:.{digits}f}"


def table(pairs: list[list[Result]]) -> str:
    rows = ["| exporter | target | series | p50 ms | p95 ms | CPU ms/scrape | RSS MiB |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for results in pairs:
        for r in results:
            rows.append(f"| {r.exporter} | {r.target} | {r.series} | {fmt(r.pct(50), 2)} | "
                        f"{fmt(r.pct(95), 2)} | {fmt(r.cpu_ms, 2)} | {fmt(r.rss_mib)} |")
    for ours, peer in (ratio_pair(p) for p in pairs):
        rows.append(
            f"| ratio {peer.exporter}/dbgauge | {peer.target} | "
            f"{fmt(peer.series / ours.series)}x | {fmt(peer.pct(50) / ours.pct(50), 2)}x | "
            f"{fmt(peer.pct(95) / ours.pct(95), 2)}x | {ratio(peer.cpu_ms, ours.cpu_ms)} | "
            f"{fmt(peer.rss_mib / ours.rss_mib, 2)}x |")
    return "\n".join(rows)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "n/a (dbgauge CPU below tick resolution)"


def ratio_pair(results: list[Result]) -> tuple[Result, Result]:
    ours = next(r for r in results if r.exporter == "dbgauge")
    peer = next(r for r in results if r.exporter != "dbgauge")
    return ours, peer


def ratios_json(pairs: list[list[Result]]) -> list[dict[str, Any]]:
    out = []
    for ours, peer in (ratio_pair(p) for p in pairs):
        out.append({"peer": peer.exporter, "target": peer.target,
                    "series": peer.series / ours.series,
                    "p50": peer.pct(50) / ours.pct(50), "p95": peer.pct(95) / ours.pct(95),
                    "cpu": peer.cpu_ms / ours.cpu_ms if ours.cpu_ms > 0 else None,
                    "rss": peer.rss_mib / ours.rss_mib})
    return out


# --------------------------------------------------------------------- main

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--sandbox-dir", type=Path, default=Path(".sandbox"),
                   help="sandbox directory holding dbgauge.yaml and sandbox.json")
    p.add_argument("--scrapes", type=int, default=200, help="measured scrapes per exporter")
    p.add_argument("--warmup", type=int, default=10, help="unmeasured scrapes first")
    p.add_argument("--compat", action="store_true",
                   help="dbgauge also speaks the peer's metric names (daemon.compat)")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the raw numbers here")
    args = p.parse_args(argv)
    if args.scrapes < 1 or args.warmup < 0:
        p.error("--scrapes must be >= 1 and --warmup >= 0")
    return args


@contextlib.contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """SIGTERM unwinds like Ctrl-C, so `finally` still stops the exporters."""
    def handler(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(args: argparse.Namespace) -> int:
    config, targets = load_sandbox(args.sandbox_dir)
    daemon = config.get("daemon") or {}
    wanted = [("mariadb-primary", MYSQLD, True), ("pg-primary", POSTGRES, True),
              ("pgbouncer", PGBOUNCER, False)]
    dialects = {MYSQLD: "mysqld_exporter", POSTGRES: "postgres_exporter",
                PGBOUNCER: "pgbouncer_exporter"}
    pairs: list[list[Result]] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="dbgauge-bench-") as tmpname:
        tmp = Path(tmpname)
        tmp.chmod(0o700)
        for name, peer_bin, required in wanted:
            if name not in targets:
                skipped.append(f"{name}: not in {args.sandbox_dir}/dbgauge.yaml")
                continue
            if not shutil.which(peer_bin):
                skipped.append(f"{name}: {peer_bin} is not installed")
                continue
            target = targets[name]
            peer = peer_spec(peer_bin, target, tmp)
            ours = dbgauge_spec(target, {**daemon, "compat": [dialects[peer_bin]]}
                                if args.compat else daemon, tmp, free_port())
            print(f"measuring {ours.name} vs {peer.name} on {name} "
                  f"({args.warmup} warm-up + {args.scrapes} scrapes each)...",
                  file=sys.stderr, flush=True)
            try:
                pairs.append(measure_pair([ours, peer], tmp, args.scrapes, args.warmup))
            except BenchError as exc:
                if required or str(exc).startswith("dbgauge "):
                    raise
                last = str(exc).strip().splitlines()[-1].strip()
                if "total_requests" in last:
                    last += (" (this exporter reads SHOW STATS columns that PgBouncer "
                             "removed in 1.8)")
                skipped.append(f"{peer.name} on {name}: {last}")
    if not pairs:
        raise BenchError("nothing measured: " + "; ".join(skipped))
    print(report(pairs, skipped, args))
    if args.json:
        args.json.write_text(json.dumps({
            "settings": {"scrapes": args.scrapes, "warmup": args.warmup,
                         "sandbox_dir": str(args.sandbox_dir), "method": FAIRNESS},
            "results": [r.as_dict() for p in pairs for r in p],
            "ratios": ratios_json(pairs), "skipped": skipped}, indent=2) + "\n")
        print(f"\nraw numbers written to {args.json}")
    return 0


def report(pairs: list[list[Result]], skipped: list[str], args: argparse.Namespace) -> str:
    compat = " (dbgauge with --compat: its own families and the peer's)" if args.compat else ""
    lines = [f"# Scrape cost: {args.scrapes} sequential scrapes after {args.warmup} warm-up, "
             f"alternating within each pair{compat}", "", table(pairs), "",
             f"Method: {FAIRNESS} Latency is request to last byte on a fresh loopback TCP "
             "connection, text format, no gzip, header X-Prometheus-Scrape-Timeout-Seconds: "
             "10. CPU = utime+stime delta over the measured scrapes / scrapes "
             f"(tick {1000 // CLK_TCK} ms). RSS = VmRSS after the run. series = sample "
             f"lines per scrape, including exporter self-metrics ({', '.join(SELF_PREFIXES)}*)."
             " Ratios are peer/dbgauge: above 1 means dbgauge is cheaper.", ""]
    for results in pairs:
        for r in results:
            lines.append(f"- {r.exporter} {r.version} on {r.target}: {r.collectors}; "
                         f"{r.self_series} of {r.series} series are runtime/process "
                         "self-metrics" + "".join(f"; WARNING {w}" for w in r.warnings))
    lines += [f"- skipped {s}" for s in skipped]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        with sigterm_as_exit():
            return run(args)
    except BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
