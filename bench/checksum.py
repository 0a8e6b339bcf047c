"""`dbgauge checksum` against pt-table-checksum and the floor query (issue 5).

On the sandbox's MariaDB primary and replica, a sysbench-shaped table (id INT PK, k INT,
c CHAR(120), pad CHAR(60), KEY k_1 (k)) of --rows rows is created, replicated, and compared
--runs times by, in rotating order:

- floor: one `SELECT COUNT(*), BIT_XOR(CRC32(CONCAT_WS('#', id, k, c, pad)))` over the whole
  table on the primary (what a checksum of one copy costs at least);
- floor x2: the same query on the primary and the replica at once (what any comparison that
  reads both copies costs at least on this machine: both servers share its cores);
- dbgauge direct: `dbgauge checksum --method direct`, as the monitoring user;
- dbgauge replicated: `dbgauge checksum --method replicated`, as the sandbox admin (it sets
  the session binlog_format);
- pt-table-checksum (Debian percona-toolkit) with its default settings plus exactly
  `--recursion-method=hosts` (the replica connects from 127.0.0.1 with an ephemeral port,
  so discovery through the processlist would look for it on port 3306),
  `--no-check-binlog-format` (the sandbox replica logs in ROW format: pt refuses to run
  otherwise; dbgauge has the same limitation with sub-replicas), and `--no-version-check`
  (no network access), `--databases`/`--tables` for the table. It logs in as the sandbox
  admin through a temporary option file (F=...).

Times are wall-clock times of whole processes for the tools (start-up included) and of the
query for the floors. Every run must report no difference and every row. Afterwards the
table, pt's `percona` schema and dbgauge's chunk rows are removed (whatever existed before
is kept).

Usage: python bench/checksum.py [--sandbox-dir .sandbox] [--rows 1000000] [--runs 3]
                                [--json FILE] [--keep-table]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pymysql

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolkit import sandbox as sb

DB, TABLE = "bench_checksum", "sbtest1"
FLOOR = (f"SELECT COUNT(*), BIT_XOR(CRC32(CONCAT_WS('#', id, k, c, pad))) "  # noqa: S608
         f"FROM {DB}.{TABLE}")
COUNT = f"SELECT COUNT(*) FROM {DB}.{TABLE}"  # noqa: S608 - constants
PT_FLAGS = ["--recursion-method=hosts", "--no-check-binlog-format", "--no-version-check"]
_DIGITS = "LPAD(FLOOR(RAND() * 1e11), 11, '0')"
_BATCH = 100_000


def connect(state: sb.SandboxState, name: str) -> Any:
    return pymysql.connect(host="127.0.0.1", port=state.port(name),
                           user=state.mariadb.admin_user, password=state.mariadb.admin_password,
                           autocommit=True, read_timeout=3600)


def one(conn: Any, query: str) -> Any:
    with conn.cursor() as cur:
        cur.execute(query)
        return cur.fetchone()


def wait_replica(state: sb.SandboxState) -> None:
    with closing(connect(state, "mariadb-primary")) as p, \
            closing(connect(state, "mariadb-replica")) as r:
        pos = one(p, "SELECT @@gtid_binlog_pos")[0]
        with r.cursor() as cur:
            cur.execute("SELECT MASTER_GTID_WAIT(%s, 1800)", (pos,))
            if cur.fetchone()[0] != 0:
                raise SystemExit("the replica did not catch up within 30 minutes")


def create_table(state: sb.SandboxState, rows: int) -> float:
    """sysbench's shape: c is ten 11-digit groups, pad five, joined by '-'."""
    started = time.monotonic()
    c = f"CONCAT_WS('-', {', '.join([_DIGITS] * 10)})"
    pad = f"CONCAT_WS('-', {', '.join([_DIGITS] * 5)})"
    with closing(connect(state, "mariadb-primary")) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS {DB}")
        cur.execute(f"DROP TABLE IF EXISTS {DB}.{TABLE}")
        cur.execute(f"CREATE TABLE {DB}.{TABLE} (id INT NOT NULL PRIMARY KEY, "
                    "k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', "
                    "pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) ENGINE=InnoDB")
        for low in range(1, rows + 1, _BATCH):
            high = min(rows, low + _BATCH - 1)
            cur.execute(f"INSERT INTO {DB}.{TABLE} SELECT seq, FLOOR(RAND() * {rows}), {c}, "  # noqa: S608
                        f"{pad} FROM {DB}.seq_{low}_to_{high}")
    wait_replica(state)
    return time.monotonic() - started


def timed(fn: Callable[[], None]) -> float:
    started = time.monotonic()
    fn()
    return time.monotonic() - started


def floor(state: sb.SandboxState, names: tuple[str, ...]) -> Callable[[], None]:
    def run() -> None:
        results: dict[str, Any] = {}

        def query(name: str) -> None:
            with closing(connect(state, name)) as conn:
                results[name] = one(conn, FLOOR)

        threads = [threading.Thread(target=query, args=(n,)) for n in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if len({results[n] for n in names}) != 1:
            raise SystemExit(f"the floor query differs between servers: {results}")
    return run


def dbgauge(state: sb.SandboxState, method: str, rows: int, tmp: Path) -> Callable[[], None]:
    if method == "direct":
        user, secret = sb.MONITOR_USER, state.dbgauge_password_file
    else:
        user, secret = state.mariadb.admin_user, state.directory / "secrets/mariadb-admin.password"
    dsn = "mysql://{}@127.0.0.1:{}/"
    cmd = [sys.executable, "-m", "toolkit.cli", "checksum",
           "--source", dsn.format(user, state.port("mariadb-primary")),
           "--replica", dsn.format(user, state.port("mariadb-replica")),
           "--password-file", str(secret), "--tables", f"{DB}.{TABLE}", "--method", method,
           "--format", "json", "--state-file", str(tmp / f"{method}.state")]

    def run() -> None:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False,
                              cwd=Path(__file__).resolve().parent.parent)
        if proc.returncode != 0:
            raise SystemExit(f"dbgauge {method} exited {proc.returncode}: {proc.stderr}"
                             f"{proc.stdout[-2000:]}")
        table = json.loads(proc.stdout)["tables"][0]
        if table["rows"] != rows:
            raise SystemExit(f"dbgauge {method} counted {table['rows']} rows, not {rows}")
    return run


def pt(state: sb.SandboxState, rows: int, tmp: Path) -> Callable[[], None]:
    option_file = tmp / "pt.cnf"
    option_file.write_text(f"[client]\nuser={state.mariadb.admin_user}\n"
                           f"password={state.mariadb.admin_password}\n")
    option_file.chmod(0o600)
    cmd = ["pt-table-checksum",
           f"h=127.0.0.1,P={state.port('mariadb-primary')},F={option_file}",
           f"--databases={DB}", f"--tables={TABLE}", *PT_FLAGS]

    def run() -> None:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
        line = next((ln for ln in proc.stdout.splitlines() if ln.endswith(f"{DB}.{TABLE}")), "")
        fields = line.split()
        # TS ERRORS DIFFS ROWS DIFF_ROWS CHUNKS SKIPPED TIME TABLE
        if proc.returncode != 0 or len(fields) != 9 or fields[1:3] != ["0", "0"] \
                or int(fields[3]) != rows:
            raise SystemExit(f"pt-table-checksum exited {proc.returncode}:\n{proc.stdout}"
                             f"{proc.stderr}")
    return run


def cleanup(state: sb.SandboxState, had_percona: bool, had_checksums: bool,
            keep_table: bool) -> None:
    with closing(connect(state, "mariadb-primary")) as conn, conn.cursor() as cur:
        if not keep_table:
            cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        if not had_percona:
            cur.execute("DROP DATABASE IF EXISTS percona")
        if not had_checksums:
            cur.execute("DROP TABLE IF EXISTS dbgauge.checksums")
        else:
            cur.execute("DELETE FROM dbgauge.checksums WHERE db = %s", (DB,))
    wait_replica(state)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sandbox-dir", type=Path, default=Path(".sandbox"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep-table", action="store_true",
                        help="keep the table (and reuse one of the same size next time)")
    args = parser.parse_args()
    if shutil.which("pt-table-checksum") is None:
        raise SystemExit("pt-table-checksum is missing: apt-get install percona-toolkit")
    state = sb.load_state(args.sandbox_dir)
    with closing(connect(state, "mariadb-primary")) as conn:
        had_percona = one(conn, "SHOW DATABASES LIKE 'percona'") is not None
        had_checksums = one(conn, "SELECT COUNT(*) FROM information_schema.tables WHERE "
                                  "table_schema = 'dbgauge' AND table_name = 'checksums'")[0] > 0
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM information_schema.tables WHERE "
                        "table_schema = %s AND table_name = %s", (DB, TABLE))
            existing = cur.fetchone()[0]
        reuse = existing and one(conn, COUNT)[0] == args.rows
    version = subprocess.run(["pt-table-checksum", "--version"], capture_output=True,
                             text=True, check=False).stdout.strip()
    load = 0.0 if reuse else create_table(state, args.rows)
    tmp = Path(tempfile.mkdtemp(prefix="dbgauge-bench-"))
    try:
        contenders: dict[str, Callable[[], None]] = {
            "floor (primary)": floor(state, ("mariadb-primary",)),
            "floor x2 (primary + replica at once)": floor(state, ("mariadb-primary",
                                                                  "mariadb-replica")),
            "dbgauge direct": dbgauge(state, "direct", args.rows, tmp),
            "dbgauge replicated": dbgauge(state, "replicated", args.rows, tmp),
            "pt-table-checksum": pt(state, args.rows, tmp),
        }
        contenders["floor x2 (primary + replica at once)"]()  # warm both servers alike
        times: dict[str, list[float]] = {name: [] for name in contenders}
        names = list(contenders)
        for run in range(args.runs):
            order = names[run % len(names):] + names[:run % len(names)]
            for name in order:
                times[name].append(timed(contenders[name]))
                print(f"run {run + 1}: {name}: {times[name][-1]:.2f} s", file=sys.stderr)
    finally:
        cleanup(state, had_percona, bool(had_checksums), args.keep_table)
        shutil.rmtree(tmp, ignore_errors=True)
    med = {name: statistics.median(values) for name, values in times.items()}
    print(f"\n{args.rows} rows, {args.runs} runs (median, min in s); {version}; "
          f"table load {load:.0f} s; {os.cpu_count()} CPUs\n")
    print("| contender | median s | min s | vs floor | pt / this |")
    print("|---|---|---|---|---|")
    for name in names:
        ratio = med["pt-table-checksum"] / med[name]
        print(f"| {name} | {med[name]:.2f} | {min(times[name]):.2f} | "
              f"{med[name] / med['floor (primary)']:.2f}x | {ratio:.2f}x |")
    direct, replicated = med["dbgauge direct"], med["dbgauge replicated"]
    floor_1, ptime = med["floor (primary)"], med["pt-table-checksum"]
    goals = [
        ("direct within 1.5x the floor", direct <= 1.5 * floor_1, f"{direct / floor_1:.2f}x"),
        ("direct 5x faster than pt-table-checksum", ptime >= 5 * direct,
         f"{ptime / direct:.2f}x"),
        ("replicated 2x faster than pt-table-checksum", ptime >= 2 * replicated,
         f"{ptime / replicated:.2f}x"),
    ]
    print()
    for goal, met, value in goals:
        print(f"- {goal}: {'met' if met else 'MISSED'} ({value})")
    if args.json:
        args.json.write_text(json.dumps({"rows": args.rows, "runs": args.runs, "times": times,
                                         "median": med, "pt_version": version,
                                         "pt_flags": PT_FLAGS,
                                         "goals": [[g, m, v] for g, m, v in goals]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
