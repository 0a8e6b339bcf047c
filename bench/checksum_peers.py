"""`dbgauge checksum` against reladiff, clean and with planted differences (issue 16).

A sysbench-shaped table of --rows rows (bench/checksum.py's) is made on the sandbox's
MariaDB primary and replicated; the same rows are copied into pg-primary's `drift`
database (published FOR ALL TABLES), which pg-subscriber replicates. Four pairs:

- mariadb-primary -> mariadb-replica: dbgauge direct, dbgauge replicated, reladiff;
- mariadb-primary -> pg-primary (across engines): dbgauge direct, reladiff;
- pg-primary -> pg-subscriber (logical replication): dbgauge direct, reladiff;
- pg-primary -> mariadb-replica (across engines, the other way): dbgauge direct, reladiff.

Each pair is timed clean and with --diffs planted differing rows on its second side
(a third changed, a third missing, a third extra; written with replication off, so only
that side has them), --runs times in rotating order. dbgauge runs the chunk walk
(`--whole-table-time 0`: the cost of its mechanism, as on a table under writes);
reladiff 0.6.0 (PyPI, installed into its own venv by this script) runs with every column
compared (`-c %`) and `-j 2` threads per database. Every run must name exactly the planted
keys (both tools), or report none when clean; the plants are removed afterwards.

Printed: a table of medians, `dbgauge planted / dbgauge clean` (the issue's goal: at most
1.25x) and `reladiff / dbgauge` (> 1: dbgauge is faster).

Usage: python bench/checksum_peers.py [--sandbox-dir .sandbox] [--rows 1000000] [--runs 5]
                                      [--diffs 3] [--keep-table] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pymysql
import pymysql.cursors

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checksum import DB, REPO, TABLE, connect, create_table, one

from dbgauge.toolkit import sandbox as sb

VENV = Path("/tmp/dbgauge-bench-reladiff")
PG_DB = "drift"  # published FOR ALL TABLES to pg-subscriber
COLUMNS = ("id", "k", "c", "pad")
_COPY_BATCH = 50_000


def reladiff_bin() -> Path:
    exe = VENV / "bin" / "reladiff"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(VENV / "bin" / "pip"), "install", "-q",
                        "reladiff[mysql,postgresql]==0.6.0"], check=True)
    return exe


def pg(state: sb.SandboxState, name: str) -> psycopg.Connection[Any]:
    return psycopg.connect(host="127.0.0.1", port=state.port(name), dbname=PG_DB,
                           user=state.postgres.admin_user,
                           password=state.postgres.admin_password, autocommit=True)


def drop_postgres_copies(state: sb.SandboxState) -> None:
    """The table's copies on pg-primary, then pg-subscriber once unsubscribed (it is no
    longer published): PostgreSQL refuses to drop a table whose synchronisation is not
    finished."""
    with pg(state, "pg-primary") as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {DB} CASCADE")
    with pg(state, "pg-subscriber") as conn:
        conn.execute("ALTER SUBSCRIPTION drift_sub REFRESH PUBLICATION")
        conn.execute(f"DROP SCHEMA IF EXISTS {DB} CASCADE")


def copy_to_postgres(state: sb.SandboxState, rows: int) -> None:
    """The MariaDB table's rows into pg-primary (and an empty copy of the table on
    pg-subscriber), one COPY per batch: pg-primary's publication is FOR ALL TABLES, and one
    multi-gigabyte transaction would hold the subscription's slot past the sandbox's
    max_slot_wal_keep_size (1GB) and lose it."""
    ddl = (f"CREATE TABLE {DB}.{TABLE} (id integer PRIMARY KEY, k integer NOT NULL DEFAULT 0, "
           "c char(120) NOT NULL DEFAULT '', pad char(60) NOT NULL DEFAULT '')")
    drop_postgres_copies(state)
    for name in ("pg-primary", "pg-subscriber"):
        with pg(state, name) as conn:
            conn.execute(f"CREATE SCHEMA {DB}")
            conn.execute(ddl)
            conn.execute(f"GRANT USAGE ON SCHEMA {DB} TO {sb.MONITOR_USER}")
            conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {DB} TO {sb.MONITOR_USER}")
    with closing(connect(state, "mariadb-primary")) as src, pg(state, "pg-primary") as dst, \
            src.cursor(pymysql.cursors.SSCursor) as cur, dst.cursor() as out:  # streamed
        cur.execute(f"SELECT id, k, c, pad FROM {DB}.{TABLE} ORDER BY id")  # noqa: S608
        while batch := cur.fetchmany(_COPY_BATCH):
            with out.copy(f"COPY {DB}.{TABLE} (id, k, c, pad) FROM STDIN") as copy:
                for row in batch:
                    copy.write_row(row)


def subscribe(state: sb.SandboxState, rows: int) -> None:
    """pg-subscriber copies the table (its initial table synchronisation)."""
    with pg(state, "pg-subscriber") as conn:
        conn.execute("ALTER SUBSCRIPTION drift_sub REFRESH PUBLICATION")
    deadline = time.monotonic() + 1800
    while True:
        with pg(state, "pg-subscriber") as conn:
            got = conn.execute(f"SELECT count(*) FROM {DB}.{TABLE}").fetchone()  # noqa: S608
        if got and got[0] == rows:
            break
        if time.monotonic() > deadline:
            raise SystemExit("pg-subscriber did not copy the table within 30 minutes")
        time.sleep(1)


def count(state: sb.SandboxState, name: str) -> int | None:
    """Rows of the table on a PostgreSQL instance (None: no table)."""
    with pg(state, name) as conn:
        found = conn.execute("SELECT count(*) FROM information_schema.tables WHERE "
                             "table_schema = %s AND table_name = %s", (DB, TABLE)).fetchone()
        if not (found and found[0]):
            return None
        got = conn.execute(f"SELECT count(*) FROM {DB}.{TABLE}").fetchone()  # noqa: S608
        return int(got[0]) if got else None


# -- planted differences: (side, changed ids, missing ids, extra ids)

def plant_keys(rows: int, diffs: int, salt: int) -> tuple[list[int], list[int], list[int]]:
    spread = [1 + (rows * (2 * i + 1) + salt * 7919) // (2 * diffs) % rows
              for i in range(diffs)]
    changed, missing = spread[0::3], spread[1::3]
    extra = [rows + 1000 + salt * 100 + i for i in range(len(spread[2::3]))]
    return changed, missing, extra


def plant(state: sb.SandboxState, side: str, keys: tuple[list[int], list[int], list[int]],
          undo: bool = False) -> None:
    changed, missing, extra = keys
    step = -1 if undo else 1
    if side.startswith("mariadb"):
        with closing(connect(state, side)) as conn, conn.cursor() as cur:
            cur.execute("SET SESSION sql_log_bin = 0")
            _apply(cur, changed, missing, extra, step, state)
    else:
        with pg(state, side) as conn, conn.cursor() as cur:
            _apply(cur, changed, missing, extra, step, state)


def _apply(cur: Any, changed: list[int], missing: list[int], extra: list[int], step: int,
           state: sb.SandboxState) -> None:
    """Both drivers take %s placeholders: one body plants (step 1) or removes (-1)."""
    table = f"{DB}.{TABLE}"
    for key in changed:
        cur.execute(f"UPDATE {table} SET k = k + %s WHERE id = %s", (step, key))  # noqa: S608
    for key in extra:
        if step > 0:
            cur.execute(f"INSERT INTO {table} (id, k, c, pad) VALUES (%s, 1, 'x', 'y')",  # noqa: S608
                        (key,))
        else:
            cur.execute(f"DELETE FROM {table} WHERE id = %s", (key,))  # noqa: S608
    for key in missing:
        if step > 0:
            cur.execute(f"DELETE FROM {table} WHERE id = %s", (key,))  # noqa: S608
        else:  # the row as the MariaDB primary (the origin of every copy) holds it
            with closing(connect(state, "mariadb-primary")) as src:
                row = one(src, f"SELECT id, k, c, pad FROM {table} WHERE id = {key}")  # noqa: S608
            cur.execute(f"INSERT INTO {table} (id, k, c, pad) VALUES (%s, %s, %s, %s)",  # noqa: S608
                        tuple(row))


# -- contenders: each returns the keys it found

def dsn(state: sb.SandboxState, name: str, user: str, password: str | None = None) -> str:
    secret = f":{password}" if password else ""
    if name.startswith("mariadb"):
        return f"mysql://{user}{secret}@127.0.0.1:{state.port(name)}/"
    return f"postgresql://{user}{secret}@127.0.0.1:{state.port(name)}/{PG_DB}"


def dbgauge(state: sb.SandboxState, src: str, dst: str, method: str, tmp: Path
            ) -> Callable[[], set[int]]:
    if method == "replicated":
        user, secret = state.mariadb.admin_user, state.directory / "secrets/mariadb-admin.password"
    else:
        user, secret = sb.MONITOR_USER, state.dbgauge_password_file
    cmd = [sys.executable, "-m", "dbgauge", "checksum",
           "--source", dsn(state, src, user), "--replica", dsn(state, dst, user),
           "--password-file", str(secret), "--tables", f"{DB}.{TABLE}", "--method", method,
           "--whole-table-time", "0", "--format", "json",
           "--state-file", str(tmp / f"{src}-{dst}-{method}.state")]

    def run() -> set[int]:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False,
                              cwd=REPO)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"dbgauge {src}->{dst} {method} exited {proc.returncode}: "
                             f"{proc.stderr}{proc.stdout[-2000:]}")
        table = json.loads(proc.stdout)["tables"][0]
        return {int(d["key"]["id"]) for d in table["differences"]}
    return run


def reladiff(state: sb.SandboxState, src: str, dst: str) -> Callable[[], set[int]]:
    def side(name: str) -> list[str]:
        if name.startswith("mariadb"):
            url = dsn(state, name, state.mariadb.admin_user, state.mariadb.admin_password)
            return [url + DB, TABLE]
        url = dsn(state, name, state.postgres.admin_user, state.postgres.admin_password)
        return [url, f"{DB}.{TABLE}"]
    cmd = [str(reladiff_bin()), *side(src), *side(dst), "-k", "id", "-c", "%", "-j", "2",
           "--json"]

    def run() -> set[int]:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False,
                              env={**os.environ, "COLUMNS": "1000000"})  # no wrapping
        if proc.returncode != 0:
            raise SystemExit(f"reladiff {src}->{dst} exited {proc.returncode}: "
                             f"{proc.stderr[-2000:]}")
        found, text, at = set(), proc.stdout, 0
        decoder = json.JSONDecoder()
        while (at := _skip_space(text, at)) < len(text):  # ["-"|"+", [key, ...]] values
            item, at = decoder.raw_decode(text, at)
            found.add(int(item[1][0]))
        return found
    return run


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


PAIRS = (("mariadb-primary", "mariadb-replica", ("direct", "replicated")),
         ("mariadb-primary", "pg-primary", ("direct",)),
         ("pg-primary", "pg-subscriber", ("direct",)),
         ("pg-primary", "mariadb-replica", ("direct",)))


def measure(contenders: dict[str, Callable[[], set[int]]], expected: set[int], runs: int,
            label: str) -> dict[str, list[float]]:
    names = list(contenders)
    times: dict[str, list[float]] = {n: [] for n in names}
    for n in names:  # warm-up, and the verdicts checked once more
        contenders[n]()
    for run in range(runs):
        for n in names[run % len(names):] + names[:run % len(names)]:
            t0 = time.monotonic()
            found = contenders[n]()
            times[n].append(time.monotonic() - t0)
            if found != expected:
                raise SystemExit(f"{label}: {n} found {sorted(found)}, "
                                 f"planted {sorted(expected)}")
            print(f"{label} run {run + 1}: {n}: {times[n][-1]:.2f} s", file=sys.stderr)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sandbox-dir", type=Path, default=Path(".sandbox"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--diffs", type=int, default=3)
    parser.add_argument("--pairs", default="all", help="comma list of pair numbers (1-4)")
    parser.add_argument("--keep-table", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", "toolkit", "checks",
                    "collectors"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    reladiff_bin()
    state = sb.load_state(args.sandbox_dir)
    with closing(connect(state, "mariadb-primary")) as conn:
        exists = one(conn, "SELECT COUNT(*) FROM information_schema.tables WHERE "  # noqa: S608
                           f"table_schema = '{DB}' AND table_name = '{TABLE}'")[0]
        reuse = bool(exists) and one(conn, f"SELECT COUNT(*) FROM {DB}.{TABLE}")[0] == args.rows  # noqa: S608
    if not reuse:
        create_table(state, args.rows)
    chosen = range(len(PAIRS)) if args.pairs == "all" else \
        [int(p) - 1 for p in args.pairs.split(",")]
    if not (reuse and count(state, "pg-primary") == args.rows):
        copy_to_postgres(state, args.rows)
    if 2 in chosen and count(state, "pg-subscriber") != args.rows:
        subscribe(state, args.rows)
    tmp = Path(f"/tmp/dbgauge-bench-peers-{args.rows}")
    tmp.mkdir(exist_ok=True)
    report: dict[str, Any] = {"rows": args.rows, "runs": args.runs, "diffs": args.diffs,
                              "pairs": {}}
    lines = []
    for index in chosen:
        src, dst, methods = PAIRS[index]
        contenders = {f"dbgauge {m}": dbgauge(state, src, dst, m, tmp) for m in methods}
        contenders["reladiff 0.6.0"] = reladiff(state, src, dst)
        pair = f"{src} -> {dst}"
        clean = measure(contenders, set(), args.runs, f"{pair} clean")
        keys = plant_keys(args.rows, args.diffs, index)
        plant(state, dst, keys)
        try:
            planted = measure(contenders, set(keys[0] + keys[1] + keys[2]), args.runs,
                              f"{pair} planted")
        finally:
            plant(state, dst, keys, undo=True)
        report["pairs"][pair] = {"clean": clean, "planted": planted}
        for name in contenders:
            c, p = statistics.median(clean[name]), statistics.median(planted[name])
            rd_c = statistics.median(clean["reladiff 0.6.0"])
            rd_p = statistics.median(planted["reladiff 0.6.0"])
            lines.append(f"| {pair} | {name} | {c:.2f} | {p:.2f} | {p / c:.2f}x | "
                         f"{rd_c / c:.2f}x | {rd_p / p:.2f}x |")
    print(f"\n{args.rows} rows, {args.diffs} planted differing rows, median of {args.runs} "
          "runs (s)\n")
    print("| pair | contender | clean | planted | planted / clean | reladiff / this, clean "
          "| reladiff / this, planted |")
    print("|---|---|---:|---:|---:|---:|---:|")
    print("\n".join(lines))
    if not args.keep_table:
        with closing(connect(state, "mariadb-primary")) as conn, conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        drop_postgres_copies(state)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
