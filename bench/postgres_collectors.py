"""Scrape cost of dbgauge's PostgreSQL and PgBouncer collectors vs the usual exporters.

Pairs, each on the same sandbox server, scraped alternately (the method and the
measuring code are bench/scrape.py's, imported from there):

- pg-primary and pg-standby: dbgauge (postgres_database, postgres_locks,
  postgres_replication: its defaults for postgres targets) vs Debian's
  prometheus-postgres-exporter with its defaults;
- pgbouncer: dbgauge (pgbouncer_pools, _stats, _databases, _config, _lists) vs Debian's
  prometheus-pgbouncer-exporter 1.7. That exporter reads SHOW STATS' `total_requests`,
  which PgBouncer 1.8 removed, so on the sandbox's 1.18 it fails as soon as a database has
  traffic. The script records that failure as it happens, then runs it the only way its
  own options allow: `--database` naming a database without a pool, which leaves it
  exporting SHOW LISTS and two SHOW DATABASES gauges. Those numbers are printed as what
  they are, not as a like-for-like comparison.

Usage: python bench/postgres_collectors.py [--sandbox-dir .sandbox] [--scrapes 200]
                                           [--warmup 10] [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scrape  # bench/scrape.py: exporter specs, measuring, tables

POSTGRES_TARGETS = ("pg-primary", "pg-standby")
PGBOUNCER_FILTER_DB = "postgres"  # a [databases] entry the sandbox's tests never pool


def dbgauge_collectors(body: str) -> str:
    """The collectors dbgauge ran and their mean duration in the last scrape."""
    rx = re.compile(r'^dbgauge_collector_duration_seconds\{[^}]*collector="([^"]+)"[^}]*\} (\S+)$',
                    re.M)
    parts = [f"{m[1]} {float(m[2]) * 1000:.1f} ms" for m in rx.finditer(body)]
    return "collectors (duration in the last scrape): " + (", ".join(parts) or "none")


def ours(target: scrape.Target, daemon: dict[str, Any], tmp: Path) -> scrape.Spec:
    spec = scrape.dbgauge_spec(target, daemon, tmp, scrape.free_port())
    return dataclasses.replace(spec, collectors=dbgauge_collectors)


def pgbouncer_filtered(target: scrape.Target) -> scrape.Spec:
    spec = scrape.pgbouncer_spec(target, scrape.free_port())
    return dataclasses.replace(
        spec, argv=[*spec.argv, "--database", PGBOUNCER_FILTER_DB],
        collectors=lambda _body: (f"--database {PGBOUNCER_FILTER_DB} (no pool there): SHOW "
                                  "LISTS + pool_size/reserve_pool of that one database only"))


def table(rows: list[tuple[str, scrape.Result, scrape.Result]]) -> str:
    """Numbers of each pair, then peer/dbgauge ratios (above 1: dbgauge is cheaper)."""
    out = ["| pair | exporter | series | p50 ms | p95 ms | CPU ms/scrape | RSS MiB |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for label, us, peer in rows:
        for r in (us, peer):
            out.append(f"| {label} | {r.exporter} {r.version} | {r.series} | "
                       f"{r.pct(50):.2f} | {r.pct(95):.2f} | {r.cpu_ms:.2f} | "
                       f"{r.rss_mib:.1f} |")
    out += ["", "| pair | peer/dbgauge: series | p50 | p95 | CPU | RSS |",
            "|---|---:|---:|---:|---:|---:|"]
    for label, us, peer in rows:
        out.append(f"| {label} | {peer.series / us.series:.2f}x | "
                   f"{peer.pct(50) / us.pct(50):.2f}x | {peer.pct(95) / us.pct(95):.2f}x | "
                   f"{scrape.ratio(peer.cpu_ms, us.cpu_ms)} | "
                   f"{peer.rss_mib / us.rss_mib:.2f}x |")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    config, targets = scrape.load_sandbox(args.sandbox_dir)
    daemon = config.get("daemon") or {}
    rows: list[tuple[str, scrape.Result, scrape.Result]] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="dbgauge-bench-pg-") as name:
        tmp = Path(name)
        tmp.chmod(0o700)
        for target_name in POSTGRES_TARGETS:
            if not shutil.which(scrape.POSTGRES):
                raise scrape.BenchError(f"{scrape.POSTGRES} is not installed "
                                        "(deploy/install-deps installs it)")
            target = targets[target_name]
            print(f"measuring dbgauge vs postgres_exporter on {target_name}...",
                  file=sys.stderr, flush=True)
            us, peer = scrape.measure_pair(
                [ours(target, daemon, tmp), scrape.postgres_spec(target, scrape.free_port())],
                tmp, args.scrapes, args.warmup)
            rows.append((target_name, us, peer))
        if shutil.which(scrape.PGBOUNCER):
            target = targets["pgbouncer"]
            print("trying prometheus-pgbouncer-exporter with its defaults...", file=sys.stderr,
                  flush=True)
            try:
                scrape.measure_pair([ours(target, daemon, tmp),
                                     scrape.pgbouncer_spec(target, scrape.free_port())],
                                    tmp, 5, 1)
                notes.append("prometheus-pgbouncer-exporter with its defaults: ran (unexpected "
                             "on PgBouncer 1.18; compare its numbers with care)")
            except scrape.BenchError as exc:
                last = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
                crash = next((ln for ln in reversed(last) if "Error" in ln), last[-1])
                notes.append("prometheus-pgbouncer-exporter 1.7 with its defaults fails on "
                             f"PgBouncer 1.18: `{crash}` (it reads SHOW STATS' total_requests, "
                             "a column PgBouncer 1.8 replaced); no like-for-like comparison "
                             "exists for it")
            print("measuring dbgauge vs prometheus-pgbouncer-exporter "
                  f"--database {PGBOUNCER_FILTER_DB}...", file=sys.stderr, flush=True)
            try:
                us, peer = scrape.measure_pair([ours(target, daemon, tmp),
                                                pgbouncer_filtered(target)],
                                               tmp, args.scrapes, args.warmup)
                rows.append((f"pgbouncer (peer filtered to --database {PGBOUNCER_FILTER_DB})",
                             us, peer))
            except scrape.BenchError as exc:
                notes.append(f"prometheus-pgbouncer-exporter --database {PGBOUNCER_FILTER_DB} "
                             f"failed too: {str(exc).splitlines()[-1].strip()}")
        else:
            notes.append(f"{scrape.PGBOUNCER} is not installed: pgbouncer pair skipped")
    print(report(rows, notes, args))
    if args.json:
        args.json.write_text(json.dumps({
            "settings": {"scrapes": args.scrapes, "warmup": args.warmup,
                         "sandbox_dir": str(args.sandbox_dir), "method": scrape.FAIRNESS,
                         "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            "pairs": [{"pair": label, "dbgauge": us.as_dict(), "peer": peer.as_dict()}
                      for label, us, peer in rows],
            "notes": notes}, indent=2) + "\n")
        print(f"\nraw numbers written to {args.json}")
    return 0


def report(rows: list[tuple[str, scrape.Result, scrape.Result]], notes: list[str],
           args: argparse.Namespace) -> str:
    lines = [f"# PostgreSQL/PgBouncer scrape cost: {args.scrapes} scrapes after {args.warmup} "
             "warm-up, alternating within each pair", "", table(rows), "",
             f"Method: {scrape.FAIRNESS} Latency: request to last byte, fresh loopback "
             "connection, text format, no gzip. CPU: utime+stime delta / scrapes (tick "
             f"{1000 // scrape.CLK_TCK} ms). RSS: VmRSS after the run. series: sample lines, "
             "runtime self-metrics included. Ratios are peer/dbgauge: above 1 means dbgauge "
             "is cheaper.", ""]
    for _, us, peer in rows:
        for r in (us, peer):
            lines.append(f"- {r.exporter} on {r.target}: {r.collectors}; {r.self_series} of "
                         f"{r.series} series are runtime/process self-metrics"
                         + "".join(f"; WARNING {w}" for w in r.warnings))
    lines += [f"- {n}" for n in notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--sandbox-dir", type=Path, default=Path(".sandbox"))
    p.add_argument("--scrapes", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--json", type=Path, metavar="FILE")
    args = p.parse_args(argv)
    if args.scrapes < 1 or args.warmup < 0:
        p.error("--scrapes must be >= 1 and --warmup >= 0")
    try:
        with scrape.sigterm_as_exit():
            return run(args)
    except scrape.BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
