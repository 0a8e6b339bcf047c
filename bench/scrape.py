"""Compare the cost of one scrape: dbgauge vs the usual Prometheus exporters.

Runs dbgauge and its peer (mysqld_exporter, postgres_exporter and, if it works,
the Python pgbouncer exporter) against the same sandbox server, scrapes both
alternately and prints latency, CPU per scrape, RSS and series count per scrape.
Alternating scrapes means both exporters see the same server state over time.

Usage: python bench/scrape.py [--sandbox-dir .sandbox] [--scrapes 200] [--warmup 10]
                              [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import quote, urlsplit

import yaml

HOST = "127.0.0.1"
TIMEOUT_HEADER = {"X-Prometheus-Scrape-Timeout-Seconds": "10",
                  "Accept": "text/plain;version=0.0.4"}
HTTP_TIMEOUT = 12.0      # seconds per scrape; the exporters are told 10
START_TIMEOUT = 20.0     # seconds for an exporter to answer HTTP at all
PAIR_BUDGET = 50.0       # seconds of measured scrapes per pair; keeps the run ~3 min max
LOG_PROBLEM = re.compile(r"\b(WARNING|ERROR|CRITICAL|level=(warn|error))\b")
SELF_PREFIXES = ("go_", "process_", "promhttp_", "python_")
MYSQLD = "/usr/bin/prometheus-mysqld-exporter"
POSTGRES = "/usr/bin/prometheus-postgres-exporter"
PGBOUNCER = "/usr/bin/prometheus-pgbouncer-exporter"
FAIRNESS = ("dbgauge runs as its own process per pair, with a temporary config holding only "
            "the target under test, scraped at /metrics: the same shape as the peer (one "
            "process, one server). /probe on one shared daemon was not used, because its RSS "
            "and CPU would include the other targets' runners and connections.")


class BenchError(Exception):
    """A failure that makes the numbers meaningless: reported in one line, no traceback."""


@dataclass
class Spec:
    """How to start one exporter and how to tell that its target is up."""

    name: str
    target: str
    port: int
    argv: list[str]
    path: str
    is_up: Callable[[str], bool]
    up_text: str
    collectors: Callable[[str], str]
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Result:
    """Raw numbers of one exporter over the measured scrapes."""

    exporter: str
    target: str
    version: str
    scrapes: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0
    rss_mib: float = 0.0
    series: int = 0
    self_series: int = 0
    collectors: str = ""
    warnings: list[str] = field(default_factory=list)

    def pct(self, q: int) -> float:
        """q-th percentile (inclusive method), ms."""
        if len(self.latencies_ms) < 2:
            return self.latencies_ms[0] if self.latencies_ms else float("nan")
        return statistics.quantiles(self.latencies_ms, n=100, method="inclusive")[q - 1]

    @property
    def cpu_ms(self) -> float:
        return 1000.0 * self.cpu_seconds / self.scrapes if self.scrapes else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {
            "exporter": self.exporter, "target": self.target, "version": self.version,
            "scrapes": self.scrapes, "series": self.series, "self_series": self.self_series,
            "p50_ms": self.pct(50), "p95_ms": self.pct(95),
            "mean_ms": statistics.fmean(self.latencies_ms) if self.latencies_ms else None,
            "max_ms": max(self.latencies_ms, default=None),
            "cpu_seconds_total": self.cpu_seconds, "cpu_ms_per_scrape": self.cpu_ms,
            "rss_mib": self.rss_mib, "collectors": self.collectors,
            "warnings": self.warnings, "latencies_ms": self.latencies_ms,
        }


# --------------------------------------------------------------------- /proc and processes

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    """All live descendants of pid (an exporter may fork helpers; none of these do today)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                rest = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(rest[1])
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        todo += kids
    return found


def cpu_seconds(pid: int) -> float:
    """utime+stime of pid and its descendants (live ones, and reaped ones via cutime/cstime)."""
    total = 0
    for i, p in enumerate([pid, *_children(pid)]):
        rest = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        fields = rest[11:15] if i == 0 else rest[11:13]  # utime stime [cutime cstime]
        total += sum(int(f) for f in fields)
    return total / CLK_TCK


def rss_mib(pid: int) -> float:
    """VmRSS of pid and its descendants, MiB."""
    kib = 0
    for p in [pid, *_children(pid)]:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                kib += int(line.split()[1])
    return kib / 1024


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def version_of(argv: list[str]) -> str:
    """First line of `--version` (Go exporters print it on stderr)."""
    try:
        out = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    text = (out.stdout + out.stderr).strip().splitlines()
    return text[0].split(" (")[0].split("version ")[-1].split()[-1] if text else "?"


class Running:
    """One exporter subprocess on a free loopback port; its output goes to a log file."""

    def __init__(self, spec: Spec, log: Path) -> None:
        self.spec, self.port, self.log = spec, spec.port, log
        with log.open("wb") as out:
            self.proc = subprocess.Popen(spec.argv, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL,
                                         env={**os.environ, **spec.env},
                                         start_new_session=True)

    def tail(self, lines: int = 8) -> str:
        try:
            text = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return "\n    ".join(["", *text[-lines:]]) if text else " (empty log)"

    def log_problems(self) -> list[str]:
        """Warnings and errors the exporter logged during the run (counted, last one shown)."""
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return []
        bad = [ln for ln in text if LOG_PROBLEM.search(ln)]
        return [f"{len(bad)} warning/error log lines, last: {bad[-1].strip()}"] if bad else []

    def fail(self, why: str) -> BenchError:
        return BenchError(f"{self.spec.name} on {self.spec.target}: {why}; its log ends with:"
                          f"{self.tail()}")

    def wait_ready(self) -> None:
        """Until the HTTP server answers anything (an early exit is reported with its log)."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise self.fail(f"exited with status {self.proc.returncode} at start")
            try:
                get(self.port, "/", 1.0)
                return
            except OSError:
                time.sleep(0.1)
        raise self.fail(f"did not answer HTTP on {HOST}:{self.port} within {START_TIMEOUT:.0f} s")

    def scrape(self) -> tuple[float, str]:
        """One checked scrape: (latency ms, body); raises BenchError unless 200 and up."""
        try:
            status, body, seconds = get(self.port, self.spec.path, HTTP_TIMEOUT)
        except OSError as exc:
            raise self.fail(f"scrape failed: {exc}") from None
        if status != 200:
            raise self.fail(f"scrape returned HTTP {status}: {body[:200]!r}")
        if not self.spec.is_up(body):
            raise self.fail(f"target is not reported up (expected {self.spec.up_text})")
        return seconds * 1000.0, body

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def get(port: int, path: str, timeout: float) -> tuple[int, str, float]:
    """GET on a fresh connection (like every exporter sees it): status, body, seconds."""
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        started = time.perf_counter()
        conn.request("GET", path, headers=TIMEOUT_HEADER)
        resp = conn.getresponse()
        body = resp.read()
        elapsed = time.perf_counter() - started
        return resp.status, body.decode("utf-8", "replace"), elapsed
    finally:
        conn.close()


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
    return "foundation collectors: " + (", ".join(ran) or "none")


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


def mysqld_spec(target: Target, tmp: Path, port: int) -> Spec:
    cnf = tmp / "my.cnf"
    cnf.write_text(f"[client]\nuser={target.user}\npassword={target.password}\n"
                   f"host={target.host}\nport={target.port}\n")
    cnf.chmod(0o600)
    return Spec("mysqld_exporter", target.name, port,
                [MYSQLD, f"--config.my-cnf={cnf}", f"--web.listen-address={HOST}:{port}"],
                "/metrics", lambda body: has_sample(body, r"mysql_up 1"), "mysql_up 1",
                mysqld_collectors)


def postgres_spec(target: Target, port: int) -> Spec:
    dsn = (f"postgresql://{quote(target.user, safe='')}:{quote(target.password, safe='')}"
           f"@{target.host}:{target.port}/{target.dbname}?sslmode=disable")
    return Spec("postgres_exporter", target.name, port,
                [POSTGRES, f"--web.listen-address={HOST}:{port}"], "/metrics",
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
            ours = dbgauge_spec(target, daemon, tmp, free_port())
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
    lines = [f"# Scrape cost: {args.scrapes} sequential scrapes after {args.warmup} warm-up, "
             "alternating within each pair", "", table(pairs), "",
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
