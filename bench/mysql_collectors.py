"""Scrape cost of dbgauge's MySQL-family collectors vs mysqld_exporter with the closest set.

mysqld_exporter runs with --collect.global_status --collect.info_schema.innodb_metrics
--collect.slave_status --collect.engine_innodb_status --collect.heartbeat (its other
default scrapers switched off); dbgauge runs its default MySQL collectors (mysql_status,
mysql_innodb, mysql_replication, mysql_heartbeat, mysql_lock_waits -- the last has no
mysqld_exporter counterpart, so dbgauge does strictly more work). Both read the same
heartbeat table, kept fresh during the run by a dbgauge HeartbeatWriter in this process
(outside both measured processes). Pairs: mariadb-replica (replication and heartbeat
lag are live there) and mariadb-primary. Measurement is bench/scrape.py's: alternating
sequential scrapes, p50/p95 latency, CPU per scrape, RSS, series; ratios are
peer/dbgauge (above 1: dbgauge is cheaper).

Usage: python bench/mysql_collectors.py [--sandbox-dir .sandbox] [--scrapes 200]
                                        [--warmup 10] [--json FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import scrape  # bench/scrape.py: the shared harness

from dbgauge.app import parse_config
from dbgauge.toolkit.heartbeat import HeartbeatWriter

HEARTBEAT_DB, HEARTBEAT_TABLE = "dbgauge", "heartbeat"
MYSQLD_FLAGS = [
    "--collect.global_status", "--collect.info_schema.innodb_metrics",
    "--collect.slave_status", "--collect.engine_innodb_status", "--collect.heartbeat",
    f"--collect.heartbeat.database={HEARTBEAT_DB}", f"--collect.heartbeat.table={HEARTBEAT_TABLE}",
    "--collect.heartbeat.utc",
    # mysqld_exporter defaults that have no counterpart here
    "--no-collect.global_variables", "--no-collect.info_schema.innodb_cmp",
    "--no-collect.info_schema.innodb_cmpmem", "--no-collect.info_schema.query_response_time",
]
PAIRS = (("mariadb-replica", {"mode": "read"}),
         ("mariadb-primary", {"mode": "read", "source_server_id": 1}))
METHOD = ("dbgauge runs as its own process per pair with a config holding only the target "
          "under test (default MySQL collectors, heartbeat: read), scraped at /metrics; "
          "mysqld_exporter runs with " + " ".join(MYSQLD_FLAGS) + ".")


def dbgauge_collectors(body: str) -> str:
    ran = scrape.label_values(body, "dbgauge_collector_success", "collector")
    return "collectors: " + ", ".join(ran)


def mysqld_collectors(body: str) -> str:
    ran = scrape.label_values(body, "mysql_exporter_collector_duration_seconds", "collector")
    failed = scrape.label_values(body, "mysql_exporter_collector_success", "collector", "0")
    text = "scrapers: " + ", ".join(c for c in ran if c != "connection")
    return text + (f" (failing: {', '.join(failed)})" if failed else "")


def mysqld_spec(target: scrape.Target, tmp: Path) -> scrape.Spec:
    spec = scrape.mysqld_spec(target, tmp, scrape.free_port())
    spec.argv += MYSQLD_FLAGS
    spec.collectors = mysqld_collectors
    return spec


def dbgauge_spec(target: scrape.Target, daemon: dict[str, Any], tmp: Path,
                 heartbeat: dict[str, Any]) -> scrape.Spec:
    entry = {**target.entry, "heartbeat": heartbeat}
    spec = scrape.dbgauge_spec(dataclasses.replace(target, entry=entry), daemon, tmp,
                               scrape.free_port())
    spec.collectors = dbgauge_collectors
    return spec


def start_writer(config: dict[str, Any]) -> HeartbeatWriter:
    """A heartbeat writer on the primary for the whole run (not inside either exporter)."""
    entry = next(t for t in config["targets"] if t["name"] == "mariadb-primary")
    doc = {"targets": [{**entry, "heartbeat": {"mode": "write", "interval": 1.0,
                                              "table": f"{HEARTBEAT_DB}.{HEARTBEAT_TABLE}"}}]}
    writer = HeartbeatWriter(parse_config(json.dumps(doc)).all_targets()[0])
    writer.start()
    return writer


def run(args: argparse.Namespace) -> int:
    config, targets = scrape.load_sandbox(args.sandbox_dir)
    if not shutil.which(scrape.MYSQLD):
        raise scrape.BenchError(f"{scrape.MYSQLD} is not installed (deploy/install-deps)")
    daemon = config.get("daemon") or {}
    writer = start_writer(config)
    pairs: list[list[scrape.Result]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="dbgauge-bench-mysql-") as tmpname:
            tmp = Path(tmpname)
            tmp.chmod(0o700)
            for name, heartbeat in PAIRS:
                target = targets[name]
                ours = dbgauge_spec(target, daemon, tmp, heartbeat)
                peer = mysqld_spec(target, tmp)
                print(f"measuring dbgauge vs mysqld_exporter on {name} ({args.warmup} warm-up "
                      f"+ {args.scrapes} scrapes each)...", file=sys.stderr, flush=True)
                pairs.append(scrape.measure_pair([ours, peer], tmp, args.scrapes, args.warmup))
    finally:
        writer.stop()
    print(report(pairs, args))
    if args.json:
        args.json.write_text(json.dumps({
            "settings": {"scrapes": args.scrapes, "warmup": args.warmup,
                         "sandbox_dir": str(args.sandbox_dir), "method": METHOD},
            "results": [r.as_dict() for p in pairs for r in p],
            "ratios": scrape.ratios_json(pairs)}, indent=2) + "\n")
        print(f"\nraw numbers written to {args.json}")
    return 0


def report(pairs: list[list[scrape.Result]], args: argparse.Namespace) -> str:
    lines = [f"# MySQL collectors: {args.scrapes} sequential scrapes after {args.warmup} "
             "warm-up, alternating within each pair", "", scrape.table(pairs), "",
             f"Method: {METHOD} Latency is request to last byte on a fresh loopback TCP "
             "connection; CPU = utime+stime delta / scrapes; RSS = VmRSS after the run; series "
             "= sample lines per scrape (self-metrics included). Ratios are "
             "peer/dbgauge: above 1 means dbgauge is cheaper.", ""]
    for results in pairs:
        for r in results:
            warnings = "".join(f"; WARNING {w}" for w in r.warnings)
            lines.append(f"- {r.exporter} {r.version} on {r.target}: {r.collectors}; "
                         f"{r.self_series} of {r.series} series are runtime self-metrics"
                         f"{warnings}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = scrape.parse_args(argv)
    try:
        with scrape.sigterm_as_exit():
            return run(args)
    except scrape.BenchError as exc:
        print(f"bench: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
