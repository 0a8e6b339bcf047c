"""`dbgauge checksum` against pt-table-checksum and the floor query (issue 5).

On the sandbox's MariaDB primary and replica, a sysbench-shaped table (id INT PK, k INT,
c CHAR(120), pad CHAR(60), KEY k_1 (k)) of --rows rows is created, replicated, and compared
--runs times by, in rotating order:

- floor: one `SELECT COUNT(*), BIT_XOR(CRC32(CONCAT_WS('#', id, k, c, pad)))` over the whole
  table on the primary (what a checksum of one copy costs at least);
- floor x2: the same query on the primary and the replica at once (what any comparison that
  reads both copies with that hash costs at least on this machine: both servers share its
  cores and its disk);
- dbgauge direct: `dbgauge checksum --method direct`, as the monitoring user, defaults (a
  table this size gets the whole-table CHECKSUM TABLE pre-check first);
- dbgauge replicated: `dbgauge checksum --method replicated`, as the sandbox admin (it sets
  the session binlog_format), defaults (the same pre-check);
- dbgauge direct/replicated, chunk walk: the same with `--whole-table-time 0`, so every chunk
  is checksummed as on a table under writes (the cost of each method's mechanism itself);
- pt-table-checksum (Debian percona-toolkit) with its default settings plus exactly
  `--recursion-method=hosts` (the replica connects from 127.0.0.1 with an ephemeral port,
  so discovery through the processlist would look for it on port 3306),
  `--no-check-binlog-format` (the sandbox replica logs in ROW format: pt refuses to run
  otherwise; dbgauge has the same limitation with sub-replicas), and `--no-version-check`
  (no network access), `--databases`/`--tables` for the table. It logs in as the sandbox
  admin through a temporary option file (F=...).

Two buffer-pool setups (--buffer-pool, default both):

- sandbox: the servers as the sandbox runs them (innodb_buffer_pool_size 128M, O_DIRECT):
  a 1M-row table (~240 MB) does not fit, so every full scan reads it from disk;
- resident: innodb_buffer_pool_size raised on both servers for the run (and restored
  afterwards) until the table fits, and warmed: every contender then reads memory, as on a
  production server whose buffer pool holds its hot tables.

Times are wall-clock times of whole processes for the tools (start-up included) and of the
query for the floors. dbgauge runs from bytecode, as an installed copy does (the script
compiles it first: a checkout run under PYTHONDONTWRITEBYTECODE=1 would otherwise recompile
its modules on every start). Every run must report no difference and every row. Afterwards
the table, pt's `percona` schema and dbgauge's chunk rows are removed (whatever existed
before is kept).

Usage: python bench/checksum.py [--sandbox-dir .sandbox] [--rows 1000000] [--runs 3]
                                [--buffer-pool both|sandbox|resident] [--json FILE]
                                [--keep-table]
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dbgauge.toolkit import sandbox as sb  # noqa: E402 - after the path set-up

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


WHOLE_TABLE_RUNS: dict[str, list[bool]] = {}  # per contender: did the pre-check decide?


def dbgauge(state: sb.SandboxState, method: str, rows: int, tmp: Path, name: str,
            *extra: str) -> Callable[[], None]:
    if method == "direct":
        user, secret = sb.MONITOR_USER, state.dbgauge_password_file
    else:
        user, secret = state.mariadb.admin_user, state.directory / "secrets/mariadb-admin.password"
    dsn = "mysql://{}@127.0.0.1:{}/"
    cmd = [sys.executable, "-m", "dbgauge", "checksum",
           "--source", dsn.format(user, state.port("mariadb-primary")),
           "--replica", dsn.format(user, state.port("mariadb-replica")),
           "--password-file", str(secret), "--tables", f"{DB}.{TABLE}", "--method", method,
           "--format", "json", "--state-file", str(tmp / f"{method}.state"), *extra]
    def run() -> None:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False,
                              cwd=REPO)
        if proc.returncode != 0:
            raise SystemExit(f"dbgauge {method} exited {proc.returncode}: {proc.stderr}"
                             f"{proc.stdout[-2000:]}")
        table = json.loads(proc.stdout)["tables"][0]
        if table["rows"] != rows:
            raise SystemExit(f"dbgauge {method} counted {table['rows']} rows, not {rows}")
        if extra and table["whole_table"]:
            raise SystemExit(f"dbgauge {method} {extra} used the whole-table pre-check")
        WHOLE_TABLE_RUNS.setdefault(name, []).append(bool(table["whole_table"]))
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


def buffer_pool(state: sb.SandboxState, sizes: dict[str, int] | None) -> dict[str, int]:
    """Set innodb_buffer_pool_size per server (None: leave them); returns what they were.
    MariaDB resizes online, in the background: wait until it says it has finished."""
    before: dict[str, int] = {}
    for name in ("mariadb-primary", "mariadb-replica"):
        with closing(connect(state, name)) as conn, conn.cursor() as cur:
            before[name] = int(one(conn, "SELECT @@innodb_buffer_pool_size")[0])
            if sizes is None or sizes[name] == before[name]:
                continue
            cur.execute("SET GLOBAL innodb_buffer_pool_size = %s", (sizes[name],))
            deadline = time.monotonic() + 120
            while True:
                status = one(conn, "SHOW STATUS LIKE 'Innodb_buffer_pool_resize_status'")
                text = str(status[1]) if status else ""
                done = not text or "Completed" in text
                if done and int(one(conn, "SELECT @@innodb_buffer_pool_size")[0]) == sizes[name]:
                    break
                if time.monotonic() > deadline:
                    raise SystemExit(f"{name}: the buffer pool resize did not finish: {text}")
                time.sleep(0.2)
    return before


def measure(names: list[str], contenders: dict[str, Callable[[], None]], runs: int,
            label: str) -> dict[str, list[float]]:
    contenders["floor x2 (primary + replica at once)"]()  # warm both servers alike
    times: dict[str, list[float]] = {name: [] for name in names}
    for run in range(runs):
        order = names[run % len(names):] + names[:run % len(names)]
        for name in order:
            times[name].append(timed(contenders[name]))
            print(f"{label} run {run + 1}: {name}: {times[name][-1]:.2f} s", file=sys.stderr)
    return times


def table_of(times: dict[str, list[float]], names: list[str]) -> list[list[Any]]:
    """Markdown rows, and the goals with their verdicts."""
    med = {name: statistics.median(values) for name, values in times.items()}
    print("| contender | median s | min s | vs floor | pt / this |")
    print("|---|---|---|---|---|")
    for name in names:
        ratio = med["pt-table-checksum"] / med[name]
        print(f"| {name} | {med[name]:.2f} | {min(times[name]):.2f} | "
              f"{med[name] / med['floor (primary)']:.2f}x | {ratio:.2f}x |")
    floor_1, ptime = med["floor (primary)"], med["pt-table-checksum"]
    goals: list[list[Any]] = []
    for suffix in ("", WALK):
        direct, replicated = med["dbgauge direct" + suffix], med["dbgauge replicated" + suffix]
        goals += [  # issue 16's (it replaced issue 5's "5x faster than pt-table-checksum")
            [f"clean direct{suffix} within 1.2x the floor", direct <= 1.2 * floor_1,
             f"{direct / floor_1:.2f}x"],
            [f"replicated{suffix} 2x faster than pt-table-checksum", ptime >= 2 * replicated,
             f"{ptime / replicated:.2f}x"],
        ]
    print()
    for goal, met, value in goals:
        print(f"- {goal}: {'met' if met else 'MISSED'} ({value})")
    return goals


WALK = ", chunk walk"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sandbox-dir", type=Path, default=Path(".sandbox"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--buffer-pool", choices=["both", "sandbox", "resident"],
                        default="both")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep-table", action="store_true",
                        help="keep the table (and reuse one of the same size next time)")
    args = parser.parse_args()
    if shutil.which("pt-table-checksum") is None:
        raise SystemExit("pt-table-checksum is missing: apt-get install percona-toolkit")
    subprocess.run([sys.executable, "-m", "compileall", "-q", "toolkit", "checks",
                    "collectors"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
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
    with closing(connect(state, "mariadb-primary")) as conn, conn.cursor() as cur:
        # a table just loaded has no statistics yet: its size would read as 0, and the
        # resident set-up would keep the sandbox's buffer pool
        cur.execute(f"ANALYZE TABLE {DB}.{TABLE}")
        cur.fetchall()
        cur.execute("SELECT data_length + index_length FROM information_schema.tables "
                    "WHERE table_schema = %s AND table_name = %s", (DB, TABLE))
        size = int(cur.fetchone()[0])
    tmp = Path(tempfile.mkdtemp(prefix="dbgauge-bench-"))
    setups = ["sandbox", "resident"] if args.buffer_pool == "both" else [args.buffer_pool]
    original = buffer_pool(state, None)
    results: dict[str, dict[str, list[float]]] = {}
    whole_runs: dict[str, dict[str, list[bool]]] = {}
    try:
        contenders: dict[str, Callable[[], None]] = {
            "floor (primary)": floor(state, ("mariadb-primary",)),
            "floor x2 (primary + replica at once)": floor(state, ("mariadb-primary",
                                                                  "mariadb-replica")),
            "dbgauge direct": dbgauge(state, "direct", args.rows, tmp, "dbgauge direct"),
            "dbgauge replicated": dbgauge(state, "replicated", args.rows, tmp,
                                          "dbgauge replicated"),
            "dbgauge direct" + WALK: dbgauge(state, "direct", args.rows, tmp, "direct walk",
                                             "--whole-table-time", "0"),
            "dbgauge replicated" + WALK: dbgauge(state, "replicated", args.rows, tmp,
                                                 "replicated walk", "--whole-table-time", "0"),
            "pt-table-checksum": pt(state, args.rows, tmp),
        }
        names = list(contenders)
        # resident: a pool of twice the table (in 128 MiB units) holds it with room to spare
        resident = (2 * size // (128 << 20) + 1) * (128 << 20)
        for setup in setups:
            buffer_pool(state, original if setup == "sandbox" else
                        {name: max(value, resident) for name, value in original.items()})
            WHOLE_TABLE_RUNS.clear()
            results[setup] = measure(names, contenders, args.runs, setup)
            whole_runs[setup] = {k: list(v) for k, v in WHOLE_TABLE_RUNS.items()}
    finally:
        buffer_pool(state, original)
        cleanup(state, had_percona, bool(had_checksums), args.keep_table)
        shutil.rmtree(tmp, ignore_errors=True)
    pools = ", ".join(f"{n} {v >> 20} MiB" for n, v in original.items())
    print(f"\n{args.rows} rows ({size >> 20} MiB of data and indexes), {args.runs} runs "
          f"(median, min in s); {version}; table load {load:.0f} s; {os.cpu_count()} CPUs; "
          f"sandbox buffer pools: {pools}")
    report: dict[str, Any] = {"rows": args.rows, "runs": args.runs, "pt_version": version,
                              "pt_flags": PT_FLAGS, "setups": {}}
    for setup, times in results.items():
        print(f"\n### buffer pool: {setup}\n")
        goals = table_of(times, names)
        for name in ("dbgauge direct", "dbgauge replicated"):
            used = whole_runs[setup].get(name, [])
            print(f"- {name} (defaults) settled the table with the whole-table pre-check in "
                  f"{sum(used)} of {len(used)} runs")
        report["setups"][setup] = {"times": times, "goals": goals,
                                   "whole_table_runs": whole_runs[setup]}
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
