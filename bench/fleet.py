"""A fleet on one daemon: 100 configured targets (1,000 with --names 200) scraped every 15 s.

The sandbox's five servers (MariaDB primary and replica, PostgreSQL primary and standby,
PgBouncer) are each configured under 20 names, so one `dbgauge serve` holds 100 targets,
100 persistent connections and 100 runners. A Prometheus-like client scrapes them:

- `probe` mode (default): one scrape loop per target on `/probe?target=NAME`, every
  --interval seconds, the loops spread evenly over the interval as Prometheus spreads its
  targets; this is the multi-target deployment of docs/deploy.md.
- `metrics` mode: one `/metrics` scrape of all 100 targets every --interval seconds.

At 1,000 targets the sandbox servers need room for 200 connections each: the sandbox
runs MariaDB with max_connections 1000, PostgreSQL with 300 and PgBouncer with
max_client_conn 1000. The end of the run reports the database connections the daemon
holds per server (from /proc: established sockets to each server's port).

Every scrape sends `X-Prometheus-Scrape-Timeout-Seconds: --timeout`. A missed deadline is
a scrape that did not answer 200 within the timeout, or that reported any target down
(`dbgauge_up 0`: a target the daemon could not finish in time is reported down). The
daemon's CPU time (utime+stime from /proc) and RSS are sampled during the run.

Not part of `make test` (it runs --duration seconds of wall time). Usage:
    .venv/bin/python bench/fleet.py [--sandbox-dir .sandbox] [--mode probe|metrics]
        [--names 20] [--interval 15] [--duration 300] [--timeout 10] [--json FILE]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

SERVERS = ("mariadb-primary", "mariadb-replica", "pg-primary", "pg-standby", "pgbouncer")
UP = re.compile(r'^dbgauge_up\{[^}]*target="([^"]+)"[^}]*\} (\S+)$', re.M)
TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Sample:
    """One scrape as the client saw it."""

    path: str
    started: float
    seconds: float
    status: int
    down: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def missed(self) -> bool:
        return self.status != 200 or bool(self.down) or self.error is not None


def fleet_config(sandbox_dir: Path, names: int) -> dict[str, Any]:
    """The sandbox config with each of the five servers repeated under `names` names."""
    base = yaml.safe_load((sandbox_dir / "dbgauge.yaml").read_text())
    by_name = {t["name"]: t for t in base["targets"]}
    missing = [s for s in SERVERS if s not in by_name]
    if missing:
        raise SystemExit(f"fleet: {sandbox_dir}/dbgauge.yaml lacks {missing}: "
                         "run `dbgauge sandbox up` first")
    targets = []
    for server in SERVERS:
        for i in range(names):
            t = dict(by_name[server], name=f"{server}-{i:02d}")
            if "heartbeat" in t:  # one writer per server is enough; the copies read
                t["heartbeat"] = t["heartbeat"] if i == 0 else {"mode": "read"}
            targets.append(t)
    return {"daemon": {"log_format": "json", "log_level": "warning"}, "targets": targets}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def proc_status(pid: int) -> dict[str, int]:
    status = dict(line.split(":", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {"rss_kb": int(status["VmRSS"].split()[0]), "threads": int(status["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def connections_held(pid: int, ports: dict[int, str]) -> dict[str, int]:
    """Established TCP connections the daemon holds, by sandbox server (its port)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    held = dict.fromkeys(ports.values(), 0)
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if fields[3] == "01" and fields[9] in inodes and remote_port in ports:
                held[ports[remote_port]] += 1
    return held


def server_ports(config: dict[str, Any]) -> dict[int, str]:
    """Sandbox server port -> server name, from the targets' DSNs."""
    out: dict[int, str] = {}
    for target in config["targets"]:
        port = urlsplit(target["dsn"]).port
        if port is not None:
            out[port] = target["name"].rsplit("-", 1)[0]
    return out


def scrape(port: int, path: str, timeout: float) -> Sample:
    started = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout + 5)
    try:
        conn.request("GET", path, headers={"X-Prometheus-Scrape-Timeout-Seconds": str(timeout)})
        resp = conn.getresponse()
        body = resp.read().decode()
        seconds = time.monotonic() - started
        down = [t for t, v in UP.findall(body) if float(v) != 1.0]
        status = resp.status if seconds <= timeout else 599  # answered, but too late
        return Sample(path, started, seconds, status, down)
    except OSError as exc:
        return Sample(path, started, time.monotonic() - started, 0, error=str(exc))
    finally:
        conn.close()


class Load:
    """Scrape loops like Prometheus': fixed interval, each loop at its own offset."""

    def __init__(self, port: int, paths: list[str], interval: float, timeout: float,
                 until: float) -> None:
        self.samples: list[Sample] = []
        self._lock = threading.Lock()
        start = time.monotonic()
        self._threads = [
            threading.Thread(target=self._loop, daemon=True,
                             args=(port, p, start + interval * i / len(paths), interval,
                                   timeout, until))
            for i, p in enumerate(paths)]

    def _loop(self, port: int, path: str, first: float, interval: float, timeout: float,
              until: float) -> None:
        at = first
        while at < until:
            time.sleep(max(0.0, at - time.monotonic()))
            sample = scrape(port, path, timeout)
            with self._lock:
                self.samples.append(sample)
            at += interval

    def run(self) -> list[Sample]:
        for t in self._threads:
            t.start()
        for t in self._threads:
            t.join()
        return sorted(self.samples, key=lambda s: s.started)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox-dir", type=Path, default=Path(".sandbox"))
    parser.add_argument("--mode", choices=("probe", "metrics"), default="probe")
    parser.add_argument("--names", type=int, default=20, help="names per sandbox server")
    parser.add_argument("--interval", type=float, default=15.0)
    parser.add_argument("--duration", type=float, default=300.0)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=20.0,
                        help="seconds of scraping before measuring (connections opened)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    config = fleet_config(args.sandbox_dir, args.names)
    names = [t["name"] for t in config["targets"]]
    with tempfile.TemporaryDirectory(prefix="dbgauge-fleet-") as tmp:
        cfg = Path(tmp) / "fleet.yaml"
        cfg.write_text(yaml.safe_dump(config))
        port = free_port()
        log = Path(tmp) / "serve.log"
        with log.open("wb") as out:
            proc = subprocess.Popen([sys.executable, "-m", "dbgauge", "serve", "--config",
                                     str(cfg), "--listen", f"127.0.0.1:{port}"],
                                    stdout=out, stderr=subprocess.STDOUT)
        try:
            for _ in range(100):
                try:
                    if scrape(port, "/healthz", 2).status == 200:
                        break
                except OSError:
                    pass
                time.sleep(0.1)
            paths = [f"/probe?target={n}" for n in names] if args.mode == "probe" \
                else ["/metrics"]
            # warm-up: every target connected and scraped once or more
            Load(port, paths, min(args.interval, args.warmup), args.timeout,
                 time.monotonic() + args.warmup).run()
            cpu0, wall0 = cpu_seconds(proc.pid), time.monotonic()
            before = proc_status(proc.pid)
            peaks = dict(before)
            done = threading.Event()

            def sample_proc() -> None:
                while not done.wait(1.0):
                    for k, v in proc_status(proc.pid).items():
                        peaks[k] = max(peaks[k], v)

            sampler = threading.Thread(target=sample_proc, daemon=True)
            sampler.start()
            samples = Load(port, paths, args.interval, args.timeout,
                           time.monotonic() + args.duration).run()
            done.set()
            sampler.join()
            cpu, wall = cpu_seconds(proc.pid) - cpu0, time.monotonic() - wall0
            after = proc_status(proc.pid)
            held = connections_held(proc.pid, server_ports(config))
        finally:
            proc.terminate()
            proc.wait(30)
        log_text = log.read_text(errors="replace")

    durations = [s.seconds for s in samples]
    missed = [s for s in samples if s.missed]
    target_scrapes = len(samples) * (1 if args.mode == "probe" else len(names))
    result = {
        "mode": args.mode, "targets": len(names), "interval_s": args.interval,
        "duration_s": round(wall, 1), "timeout_s": args.timeout, "scrapes": len(samples),
        "target_scrapes": target_scrapes, "missed_deadlines": len(missed),
        "missed_examples": [{"path": s.path, "seconds": round(s.seconds, 3),
                             "status": s.status, "down": s.down[:5], "error": s.error}
                            for s in missed[:10]],
        "latency_ms": {"p50": round(1000 * statistics.median(durations), 1),
                       "p95": round(1000 * pct(durations, 0.95), 1),
                       "p99": round(1000 * pct(durations, 0.99), 1),
                       "max": round(1000 * max(durations), 1)},
        "cpu_seconds": round(cpu, 2), "cpu_percent_of_one_core": round(100 * cpu / wall, 1),
        "cpu_ms_per_target_scrape": round(1000 * cpu / max(1, target_scrapes), 2),
        "rss_mib": {"start": round(before["rss_kb"] / 1024, 1),
                    "peak": round(peaks["rss_kb"] / 1024, 1),
                    "end": round(after["rss_kb"] / 1024, 1)},
        "threads": {"start": before["threads"], "peak": peaks["threads"]},
        "fds": {"start": before["fds"], "peak": peaks["fds"]},
        "db_connections_held": held,
        "deadline_log_lines": log_text.count("did not answer in time"),
        "cores": os.cpu_count(),
    }
    print(f"fleet: {len(names)} targets, {args.mode} every {args.interval:g}s for "
          f"{wall:.0f}s ({len(samples)} scrapes, {target_scrapes} target scrapes)")
    print("| mode | targets | scrapes | missed deadlines | p50 / p95 / max ms | "
          "CPU s (% of a core) | CPU ms per target scrape | RSS MiB start / peak / end |")
    print("|---|---|---|---|---|---|---|---|")
    lat, rss = result["latency_ms"], result["rss_mib"]
    print(f"| {args.mode} | {len(names)} | {len(samples)} | {len(missed)} | "
          f"{lat['p50']} / {lat['p95']} / {lat['max']} | {result['cpu_seconds']} "
          f"({result['cpu_percent_of_one_core']}%) | {result['cpu_ms_per_target_scrape']} | "
          f"{rss['start']} / {rss['peak']} / {rss['end']} |")
    print("database connections held at the end: "
          + ", ".join(f"{name} {count}" for name, count in held.items())
          + f" (total {sum(held.values())}); threads peak {peaks['threads']}")
    for example in result["missed_examples"]:
        print(f"  missed: {example}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
