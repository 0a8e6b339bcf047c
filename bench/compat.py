"""What `--compat` costs a scrape: dbgauge without it, with it, and with `--compat-only`
(the peer's default families alone: the same families as the peer), beside the peer with
its defaults (mysqld_exporter 0.14 for a mysql target, postgres_exporter 0.11 for a
postgres target, Debian's pgbouncer_exporter 1.7 without its SHOW STATS collector for a
pgbouncer target: whole, it does not start on PgBouncer 1.8 or later).

Each runs as its own process against the same sandbox target (one dbgauge per config, as
bench/scrape.py runs them), scraped alternately: latency per scrape, CPU per scrape (the
process's user + system time over the measured scrapes) and series per scrape.

Usage: python bench/compat.py [--sandbox-dir .sandbox] [--target mariadb-primary]
                              [--scrapes 50] [--warmup 5]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

from harness import BenchError, Running, Spec, cpu_seconds, free_port
from scrape import (
    MYSQLD,
    POSTGRES,
    Target,
    dbgauge_spec,
    has_sample,
    load_sandbox,
    mysqld_collectors,
    postgres_collectors,
)

# Debian's pgbouncer_exporter 1.7 dies on any PgBouncer since 1.8 (its SHOW STATS
# collector reads total_requests, which 1.8 removed): run as the compat test runs it, with
# that one collector replaced by one that collects nothing. It then does less work than
# dbgauge, which reads SHOW STATS too.
WITHOUT_STATS = """
import sys
import prometheus_pgbouncer_exporter.cli as cli

class NoStats:
    def __init__(self, *args, **kwargs):
        pass

    def collect(self):
        return iter(())

cli.StatsCollector = NoStats
sys.argv[0] = "prometheus-pgbouncer-exporter"
cli.main()
"""


def _pgbouncer_peer(entry: Target, port: int) -> tuple[str, Spec]:
    return "pgbouncer_exporter", Spec(
        "pgbouncer_exporter 1.7 (no SHOW STATS)", entry.name, port,
        ["/usr/bin/python3", "-c", WITHOUT_STATS, "--host", "127.0.0.1", "--port", str(port),
         "--pgbouncer-host", entry.host, "--pgbouncer-port", str(entry.port),
         "--pgbouncer-user", entry.user], "/metrics",
        lambda body: has_sample(body, r"pgbouncer_used_clients(\{.*\})? \S+"),
        "pgbouncer_used_clients present (it has no up metric)",
        lambda _body: "POOLS, DATABASES, LISTS", {"PGPASSWORD": entry.password})


def _peer(entry: Target, kind: str, tmp: Path) -> tuple[str, Spec]:
    """The dialect and the peer with its defaults, for a target of `kind`."""
    port = free_port()
    if kind == "pgbouncer":
        return _pgbouncer_peer(entry, port)
    if kind == "mysql":
        cnf = tmp / "my.cnf"
        cnf.write_text(f"[client]\nuser={entry.user}\npassword={entry.password}\n"
                       f"host={entry.host}\nport={entry.port}\n")
        cnf.chmod(0o600)
        return "mysqld_exporter", Spec(
            "mysqld_exporter 0.14 (defaults)", entry.name, port,
            [MYSQLD, f"--config.my-cnf={cnf}", f"--web.listen-address=127.0.0.1:{port}"],
            "/metrics", lambda body: has_sample(body, r"mysql_up 1"), "mysql_up 1",
            mysqld_collectors)
    dsn = (f"postgresql://{quote(entry.user, safe='')}:{quote(entry.password, safe='')}"
           f"@{entry.host}:{entry.port}/{entry.dbname}?sslmode=disable")
    return "postgres_exporter", Spec(
        "postgres_exporter 0.11 (defaults)", entry.name, port,
        [POSTGRES, f"--web.listen-address=127.0.0.1:{port}"], "/metrics",
        lambda body: has_sample(body, r"pg_up 1"), "pg_up 1", postgres_collectors,
        {"DATA_SOURCE_NAME": dsn})


def specs(directory: Path, target: str, tmp: Path) -> list[Spec]:
    config, targets = load_sandbox(directory)
    if target not in targets:
        raise BenchError(f"no target {target} in {directory}/dbgauge.yaml")
    entry = targets[target]
    kind = entry.entry["kind"]
    if kind not in ("mysql", "postgres", "pgbouncer"):
        raise BenchError(f"{target} is a {kind} target: pick a mysql, postgres or "
                         "pgbouncer one")
    dialect, peer = _peer(entry, kind, tmp)
    plain = dbgauge_spec(entry, config.get("daemon", {}), tmp, free_port())
    out = [plain]
    for extra in (["--compat", dialect], ["--compat", dialect, "--compat-only"]):
        spec = dbgauge_spec(entry, config.get("daemon", {}), tmp, free_port())
        spec.name = "dbgauge " + " ".join(extra)
        spec.argv = [*spec.argv, *extra]
        out.append(spec)
    if kind == "pgbouncer":  # the SHOWs the stubbed peer runs, and no more
        spec = dbgauge_spec(entry, config.get("daemon", {}), tmp, free_port())
        spec.name = f"dbgauge --compat {dialect} --compat-only, no SHOW STATS"
        spec.argv = [*spec.argv, "--compat", dialect, "--compat-only"]
        spec.path = "/metrics?" + "&".join(f"collect[]=pgbouncer_{c}"
                                           for c in ("pools", "databases", "lists"))
        out.append(spec)
    return [*out, peer]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sandbox-dir", type=Path, default=Path(".sandbox"))
    parser.add_argument("--target", default="mariadb-primary")
    parser.add_argument("--scrapes", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dbgauge-bench-compat-") as tmp:
        running = [Running(s, Path(tmp) / f"{i}.log")
                   for i, s in enumerate(specs(args.sandbox_dir, args.target, Path(tmp)))]
        try:
            for r in running:
                r.wait_ready()
            for _ in range(args.warmup):
                for r in running:
                    r.scrape()
            cpu0 = [cpu_seconds(r.proc.pid) for r in running]
            latencies: list[list[float]] = [[] for _ in running]
            series = [0] * len(running)
            for _ in range(args.scrapes):
                for i, r in enumerate(running):
                    ms, body = r.scrape()
                    latencies[i].append(ms)
                    series[i] = sum(1 for ln in body.splitlines()
                                    if ln and not ln.startswith("#")
                                    and not re.match(r"(go|process|promhttp|python)_", ln))
            cpu = [cpu_seconds(r.proc.pid) - c for r, c in zip(running, cpu0, strict=True)]
        finally:
            for r in running:
                r.stop()
    rows = []
    for r, lat, n, c in zip(running, latencies, series, cpu, strict=True):
        lat.sort()
        rows.append({"exporter": r.spec.name, "series": n,
                     "p50_ms": round(statistics.median(lat), 2),
                     "p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 2),
                     "cpu_ms_per_scrape": round(1000 * c / args.scrapes, 2)})
    print(f"{args.target}: {args.scrapes} scrapes each after {args.warmup} warm-up, "
          "alternating")
    print(f"{'exporter':40} {'series':>7} {'p50 ms':>8} {'p95 ms':>8} {'CPU ms':>8}")
    for row in rows:
        print(f"{row['exporter']:40} {row['series']:>7} {row['p50_ms']:>8} "
              f"{row['p95_ms']:>8} {row['cpu_ms_per_scrape']:>8}")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"bench/compat.py: {exc}", file=sys.stderr)
        sys.exit(1)
