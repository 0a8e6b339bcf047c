"""Stalled targets at scale: how long a scrape of N targets that accept TCP and never
answer takes against its timeout, and what the daemon holds (threads, descriptors, RSS)
after each scrape.

One local listener (tests/helpers/stalled.py) accepts every connection and never sends a
byte; the config names it N times, alternating PostgreSQL and MySQL targets. Each scrape
is a `/metrics` with `X-Prometheus-Scrape-Timeout-Seconds: --timeout`, sent as soon as the
previous one answered (the worst case: the previous scrape's connects may still be pending).
No sandbox needed. Not part of `make test`. Usage:
    .venv/bin/python bench/stalled.py [--targets 2000] [--scrapes 10] [--timeout 5]
        [--offset 0.5] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.helpers.stalled import StalledListener  # noqa: E402 - after the path set-up


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_state(pid: int) -> dict[str, int]:
    """Threads, open descriptors and RSS (KiB) of the daemon, from /proc."""
    rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text()
               .splitlines() if line.startswith("VmRSS:"))
    return {"threads": len(os.listdir(f"/proc/{pid}/task")),
            "fds": len(os.listdir(f"/proc/{pid}/fd")), "rss_kib": rss}


def config_text(port: int, targets: int, offset: float) -> str:
    lines = ["daemon:", f"  scrape_timeout_offset: {offset}", "targets:"]
    for i in range(targets):
        kind, dsn = ("postgres", f"postgresql://dbgauge@127.0.0.1:{port}/postgres") \
            if i % 2 == 0 else ("mysql", f"mysql://dbgauge@127.0.0.1:{port}/")
        lines += [f"  - name: stalled-{i}", f"    kind: {kind}", f"    dsn: {dsn}",
                  "    password_env: STALLED_PASSWORD"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", type=int, default=2000)
    ap.add_argument("--scrapes", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--offset", type=float, default=0.5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rows: list[dict[str, float]] = []
    with StalledListener() as listener, tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "dbgauge.yaml"
        config.write_text(config_text(listener.port, args.targets, args.offset))
        port = free_port()
        log = (Path(tmp) / "daemon.log").open("wb")
        proc = subprocess.Popen([sys.executable, "-m", "dbgauge", "serve", "--config",
                                 str(config), "--listen", f"127.0.0.1:{port}"], cwd=REPO,
                                stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "STALLED_PASSWORD": "x"})
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)
            print(f"{args.targets} stalled targets, {args.timeout} s scrape timeout; "
                  f"idle daemon: {proc_state(proc.pid)}")
            for n in range(args.scrapes):
                req = urllib.request.Request(
                    f"http://127.0.0.1:{port}/metrics",
                    headers={"X-Prometheus-Scrape-Timeout-Seconds": str(args.timeout)})
                t0 = time.monotonic()
                with urllib.request.urlopen(req, timeout=120) as resp:
                    body = resp.read().decode()
                took = time.monotonic() - t0
                down = len(re.findall(r"^dbgauge_up\{.*\} 0\.0$", body, re.M))
                row = {"scrape": n + 1, "seconds": round(took, 2), **proc_state(proc.pid),
                       "listener_open": listener.open}
                rows.append(row)
                print(json.dumps(row), f"(down: {down})", flush=True)
        finally:
            proc.terminate()
            proc.wait(30)
            log.close()
    times = [r["seconds"] for r in rows]
    print(f"answer time: min {min(times):.2f} s, max {max(times):.2f} s "
          f"(timeout {args.timeout} s); threads max {max(r['threads'] for r in rows)}, "
          f"fds max {max(r['fds'] for r in rows)}, "
          f"RSS max {max(r['rss_kib'] for r in rows) / 1024:.1f} MiB")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
