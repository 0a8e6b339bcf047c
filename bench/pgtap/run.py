"""Compare `dbgauge pgtap run` with pg_prove on the same pgTAP suites.

Both run every file of one corpus against the demo sandbox's PostgreSQL, at -j 1 and -j 4,
several times, alternating which runner goes first. Reported: wall time (median, min, max),
CPU of the runner and its psql children, and the per-file verdicts, which must agree
between the two runners and between -j 1 and -j 4 (the script exits 1 if they do not).

Usage: python bench/pgtap/run.py [--sandbox-dir .sandbox] [--copies 4] [--reps 5]
                                 [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from dbgauge.toolkit.pgtap.psql import find_psql  # noqa: E402 - after the path set-up

DATABASE = "dbgauge_bench_pgtap"
SUITES = REPO / "tests" / "fixtures" / "pgtap" / "suites"
# pg_prove stops the whole run at a "Bail out!" (TAP::Harness does), so per-file verdicts
# after it would not exist; that file's verdict parity is covered by the integration tests.
LEFT_OUT = {"bailout.sql"}
OUR_VERDICT = re.compile(r"^(\S+) \.+ (ok|FAILED)\b", re.MULTILINE)
PROVE_SUMMARY = re.compile(r"^(\S+)\s+\(Wstat: (\d+)[^)]*Failed: (\d+)\)", re.MULTILINE)


PROVE_DIRECT = "pg_prove --psql-bin"
RUNNERS = ("pg_prove", PROVE_DIRECT, "dbgauge")


class BenchError(Exception):
    """A failure that makes the numbers meaningless."""


@dataclass
class Series:
    runner: str
    jobs: int
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    verdicts: list[dict[str, str]] = field(default_factory=list)


def psql(port: int, user: str, password: str, db: str, *args: str) -> str:
    env = {**os.environ, "PGPASSWORD": password}
    proc = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                           "-p", str(port), "-U", user, "-d", db, *args],
                          env=env, capture_output=True, text=True, check=False, timeout=120)
    if proc.returncode != 0:
        raise BenchError(f"psql {' '.join(args)[:60]}: {proc.stderr.strip()}")
    return proc.stdout


def dbgauge_argv() -> list[str]:
    entry = Path(sys.executable).with_name("dbgauge")
    return [str(entry)] if entry.exists() else [sys.executable, "-m", "dbgauge"]


def build_corpus(root: Path, copies: int, generated: str) -> list[str]:
    """`copies` copies of: the fixture suites (minus LEFT_OUT), dbgauge's own suites with
    the DDL they include, and a generated schema test. Returns the relative file names."""
    for n in range(1, copies + 1):
        base = root / f"copy{n}"
        shutil.copytree(SUITES, base / "suites",
                        ignore=shutil.ignore_patterns(*LEFT_OUT))
        shutil.copytree(REPO / "sql" / "tests", base / "sql" / "tests")
        shutil.copytree(REPO / "sql" / "schema" / "postgres",
                        base / "sql" / "schema" / "postgres")
        (base / "generated").mkdir()
        (base / "generated" / "schema_test.sql").write_text(generated)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.suffix in (".sql", ".pg") and "schema" not in p.parent.parts)


def test_paths(root: Path) -> list[str]:
    """What both runners are pointed at: the test directories, never the included DDL."""
    return sorted(f"{copy.name}/{sub}" for copy in root.iterdir()
                  for sub in ("suites", "sql/tests", "generated"))


def prove_verdicts(output: str, files: list[str]) -> dict[str, str]:
    """TAP::Harness's summary lists the files with trouble; a TODO-passed note alone is
    not a failure."""
    failed = {name for name, wstat, nfailed in PROVE_SUMMARY.findall(output)
              if wstat != "0" or nfailed != "0"}
    for block in re.split(r"\n(?=\S)", output.split("Test Summary Report", 1)[-1]):
        if "Parse errors:" in block or "No plan found" in block:
            failed.add(block.split()[0])
    return {f: ("FAILED" if f in failed else "ok") for f in files}


def our_verdicts(output: str) -> dict[str, str]:
    return dict(OUR_VERDICT.findall(output))


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          check=False, timeout=600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise BenchError(f"{argv[0]} exited {proc.returncode}: {proc.stderr.strip()[-400:]}")
    return wall, cpu, proc.stdout + "\n" + proc.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox-dir", type=Path, default=REPO / ".sandbox")
    parser.add_argument("--copies", type=int, default=4, help="copies of the suite set")
    parser.add_argument("--reps", type=int, default=5, help="measured runs per series")
    parser.add_argument("--json", type=Path, help="write every number here")
    args = parser.parse_args()
    # Run dbgauge as an installed copy runs: from bytecode (pip compiles it at install; a
    # checkout under PYTHONDONTWRITEBYTECODE=1 would recompile every module on every run).
    subprocess.run([sys.executable, "-m", "compileall", "-q", "toolkit", "checks",
                    "collectors"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    if shutil.which("pg_prove") is None:
        raise BenchError("pg_prove not found: apt-get install "
                         "libtap-parser-sourcehandler-pgtap-perl")
    state = json.loads((args.sandbox_dir / "sandbox.json").read_text())
    port = int(state["instances"]["pg-primary"]["port"])
    user, password = state["postgres"]["admin_user"], state["postgres"]["admin_password"]

    drop = f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"
    psql(port, user, password, "postgres", "-c", drop, "-c", f"CREATE DATABASE {DATABASE}")
    try:
        psql(port, user, password, DATABASE, "-c", "CREATE EXTENSION pgtap",
             "-f", str(HERE / "schema.sql"))
        dsn = f"postgresql://{user}@127.0.0.1:{port}/{DATABASE}"
        env = {**os.environ, "DBGAUGE_PGTAP_DSN": dsn, "PGPASSWORD": password}
        gen = subprocess.run([*dbgauge_argv(), "pgtap", "generate", "--schema", "shop"],
                             env=env, capture_output=True, text=True, check=False)
        if gen.returncode != 0:
            raise BenchError(f"dbgauge pgtap generate failed: {gen.stderr.strip()}")
        with tempfile.TemporaryDirectory(prefix="dbgauge-bench-pgtap-") as tmp:
            root = Path(tmp)
            files = build_corpus(root, args.copies, gen.stdout)
            dirs = test_paths(root)
            common = ["--set", f"expected_db={DATABASE}"]
            prove = ["pg_prove", "-h", "127.0.0.1", "-p", str(port), "-U", user,
                     "-d", DATABASE, "--ext", ".sql", "--ext", ".pg", "-r", *common]
            ours = [*dbgauge_argv(), "pgtap", "run", *common]
            # The psql dbgauge runs (through Debian's pg_wrapper to the binary), handed to
            # pg_prove too: a reference series showing what is the runner's own cost.
            direct_psql = find_psql(None)
            series = {(r, j): Series(r, j) for r in RUNNERS for j in (1, 4)}
            argv = {("pg_prove", j): [*prove, "-j", str(j), *dirs] for j in (1, 4)}
            argv |= {(PROVE_DIRECT, j): [*prove, "--psql-bin", direct_psql, "-j", str(j), *dirs]
                     for j in (1, 4)}
            argv |= {("dbgauge", j): [*ours, "-j", str(j), *dirs] for j in (1, 4)}
            for key in argv:  # warm-up: caches, connections, page cache
                timed(argv[key], root, env)
            for rep in range(args.reps):
                for jobs in (1, 4):
                    order = list(RUNNERS[rep % len(RUNNERS):] + RUNNERS[:rep % len(RUNNERS)])
                    for runner in order:
                        wall, cpu, out = timed(argv[(runner, jobs)], root, env)
                        s = series[(runner, jobs)]
                        s.walls.append(wall)
                        s.cpus.append(cpu)
                        s.verdicts.append(our_verdicts(out) if runner == "dbgauge"
                                          else prove_verdicts(out, files))
    finally:
        psql(port, user, password, "postgres", "-c", drop)

    return report(series, files, args)


def report(series: dict[tuple[str, int], Series], files: list[str],
           args: argparse.Namespace) -> int:
    reference = series[("pg_prove", 1)].verdicts[0]
    problems: list[str] = []
    for s in series.values():
        for i, verdicts in enumerate(s.verdicts):
            if set(verdicts) != set(files):
                odd = sorted(set(files) ^ set(verdicts))[:3]
                problems.append(f"{s.runner} -j {s.jobs} run {i + 1}: file lists differ: {odd}")
            for name in files:
                if verdicts.get(name) != reference.get(name):
                    problems.append(f"{s.runner} -j {s.jobs} run {i + 1}: {name} "
                                    f"{verdicts.get(name)} vs pg_prove -j 1 {reference[name]}")
    failed = sum(1 for v in reference.values() if v == "FAILED")
    print(f"corpus: {len(files)} files ({args.copies} copies of the suite set), "
          f"{failed} failing by design; {args.reps} measured runs per series after one warm-up\n")
    print("| runner | -j | median wall s | min s | max s | CPU s/run (runner + psql) |")
    print("|---|---|---|---|---|---|")
    for (runner, jobs), s in series.items():
        print(f"| {runner} | {jobs} | {statistics.median(s.walls):.2f} | {min(s.walls):.2f} | "
              f"{max(s.walls):.2f} | {statistics.median(s.cpus):.2f} |")
    for peer in ("pg_prove", PROVE_DIRECT):
        for jobs in (1, 4):
            ratio = (statistics.median(series[(peer, jobs)].walls)
                     / statistics.median(series[("dbgauge", jobs)].walls))
            print(f"\n-j {jobs}: {peer} / dbgauge median wall = {ratio:.2f} "
                  f"({'dbgauge faster' if ratio > 1 else 'dbgauge slower'})", end="")
    print()
    if problems:
        print(f"\nVERDICTS DISAGREE ({len(problems)}):")
        for p in problems[:20]:
            print(f"  {p}")
    else:
        print(f"\nverdicts: all {len(files)} files agree across every series "
              f"({', '.join(RUNNERS)}; -j1/-j4) in every run ({len(files) - failed} ok, "
              f"{failed} failed)")
    if args.json:
        args.json.write_text(json.dumps({
            "files": files, "reference_verdicts": reference, "problems": problems,
            "series": [{"runner": s.runner, "jobs": s.jobs, "walls": s.walls, "cpus": s.cpus}
                       for s in series.values()]}, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"bench/pgtap: {exc}", file=sys.stderr)
        sys.exit(2)

