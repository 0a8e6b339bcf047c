"""dbgauge's check_postgres actions beside Debian's `check_postgres` (2.25) on the same
sandbox server, the same thresholds written each tool's way: the states agree.

Conditions are made once (a disabled trigger, a table analyzed by autovacuum's absence,
the levels either side of what both tools just measured), then every pair of commands
runs in parallel: a few seconds for the whole module. Levels are never set at the value
itself: check_postgres alerts at `>=` a level, monitoring-plugin ranges (dbgauge) above
it -- a documented difference that only shows on equality.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass

import pytest
from psycopg import sql

from dbgauge.toolkit.sandbox.binaries import pg_binaries
from dbgauge.toolkit.sandbox.layout import Layout
from tests.helpers import REPO, wait_for
from tests.helpers.daemon import DBGAUGE
from tests.helpers.pgstats import flush
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

CHECK_POSTGRES = "/usr/bin/check_postgres"
# check_postgres' `checkpoint` runs pg_controldata on the data directory. The sandbox's
# builds of other majors carry none, and Debian's 15 reads the control file of 13 to 17
# (one layout) but not 18's (a CRC mismatch: "Failed to run pg_controldata - probably the
# wrong version"): there the action is left out (the matrix battery tests dbgauge's
# checkpoint check on 18 on its own).
DEBIAN_BINDIR = "/usr/lib/postgresql/15/bin"
DEBIAN_CONTROLDATA_READS = range(13, 18)


def controldata_env(major: int) -> dict[str, str] | None:
    """What check_postgres needs to run a pg_controldata that reads `major`'s data
    directory (PGBINDIR, and a relocated build's library path); None when none here can."""
    own = pg_binaries(major)
    if own.has("pg_controldata"):
        return own.env({"PGBINDIR": str(own.bin)})
    return {"PGBINDIR": DEBIAN_BINDIR} if major in DEBIAN_CONTROLDATA_READS else None
STATES = {0: "OK", 1: "WARNING", 2: "CRITICAL", 3: "UNKNOWN"}


@dataclass(frozen=True)
class Case:
    """One condition: check_postgres' action and options, dbgauge's check and options,
    and the state both must report."""

    action: str
    theirs: Sequence[str]
    check: str
    ours: Sequence[str]
    state: str
    theirs_state: str = ""  # a documented deliberate difference: check_postgres' state


def _same(action: str, check: str, levels: Sequence[str], state: str) -> Case:
    return Case(action, levels, check, levels, state)


def _cases(datadir: str, checkpoint: bool) -> list[Case]:
    kb, gb = ("-w", "1kB", "-c", "1GB"), ("-w", "1GB", "-c", "2GB")
    cases = [_same("database_size", "database-size", gb, "OK"),
             _same("database_size", "database-size", kb, "WARNING"),
             _same("database_size", "database-size", ("-w", "1kB", "-c", "2kB"), "CRITICAL"),
             _same("relation_size", "relation-size", gb, "OK"),
             _same("relation_size", "relation-size", ("-c", "10kB"), "CRITICAL"),
             _same("index_size", "index-size", kb, "WARNING"),
             _same("table_size", "table-size", ("-w", "1kB", "-c", "2kB"), "CRITICAL")]
    # one table by name, a schema filter, and a filter that matches nothing (UNKNOWN)
    cases += [
        Case("table_size", ("--include=cpp_trig", *kb), "table-size",
             ("--include", "cpp_trig", *kb), "WARNING"),
        Case("relation_size", ("--exclude=pg_catalog.,pg_toast.,information_schema.",
                               "-w", "1GB"), "relation-size",
             ("--exclude", "pg_catalog.,pg_toast.,information_schema.", "-w", "1GB"), "OK"),
        Case("database_size", ("--include=~^nosuchdb", "-w", "1kB"), "database-size",
             ("--include", "~^nosuchdb", "-w", "1kB"), "UNKNOWN"),
        # check_postgres' defaults 90% and 95% are dbgauge's
        Case("autovac_freeze", (), "autovac-freeze", (), "OK"),
        _same("autovac_freeze", "autovac-freeze", ("-w", "0%", "-c", "95%"), "WARNING"),
        _same("autovac_freeze", "autovac-freeze", ("-c", "0%"), "CRITICAL"),
    ]
    # worse when lower; the rollbacks made every ratio read here less than 100%
    for name in ("hitratio", "commitratio"):
        cases += [_same(name, name, ("-w", "2%", "-c", "1%"), "OK"),
                  _same(name, name, ("-w", "100%", "-c", "1%"), "WARNING")]
    cases += [
        _same("wal_files", "wal-files", ("-w", "1000", "-c", "2000"), "OK"),
        # check_postgres takes positive counts only; a sandbox holds 2 segments or more
        _same("wal_files", "wal-files", ("-w", "1", "-c", "2000"), "WARNING"),
        _same("wal_files", "wal-files", ("-c", "1"), "CRITICAL"),
        # one trigger is disabled, in the database app: check_postgres' default (>= 1) is
        # dbgauge's (> 0); --dbname covers the databases named
        Case("disabled_triggers", (), "disabled-triggers", (), "CRITICAL"),
        Case("disabled_triggers", ("-w", "2", "-c", "3"), "disabled-triggers",
             ("-w", "1", "-c", "2"), "OK"),
        Case("disabled_triggers", ("--dbname=postgres",), "disabled-triggers",
             ("--dbname", "postgres"), "OK"),
        Case("prepared_txns", (), "prepared-txns", (), "OK"),  # none prepared
        # never autovacuumed: nothing to judge
        Case("last_autovacuum", ("--include=cpp_never",), "last-autovacuum",
             ("--include", "cpp_never"), "UNKNOWN"),
        # analyzed by the setup just now; never vacuumed
        Case("last_analyze", ("--include=cpp_bloat", "-w", "1d"), "last-analyze",
             ("--include", "cpp_bloat", "-w", "1d"), "OK"),
        Case("last_analyze", ("--include=cpp_bloat", "-w", "1", "-c", "1d"), "last-analyze",
             ("--include", "cpp_bloat", "-w", "1", "-c", "1d"), "WARNING"),
        Case("last_vacuum", ("--include=cpp_bloat",), "last-vacuum",
             ("--include", "cpp_bloat"), "UNKNOWN"),
    ]
    if checkpoint:
        cases += [
            Case("checkpoint", (f"--datadir={datadir}", "-w", "1000d"), "checkpoint",
                 ("-w", "1000d"), "OK"),
            Case("checkpoint", (f"--datadir={datadir}", "-w", "0"), "checkpoint",
                 ("-w", "0"), "WARNING"),
        ]
    bloat = ("--include=cpp_bloat",)
    cases += [
        Case("bloat", (*bloat, "-w", "1GB"), "bloat", ("--include", "cpp_bloat", "-w", "1GB"),
             "OK"),
        Case("bloat", (*bloat, "-w", "100kB", "-c", "1GB"), "bloat",
             ("--include", "cpp_bloat", "-w", "100kB", "-c", "1GB"), "WARNING"),
        Case("bloat", (*bloat, "-c", "100kB"), "bloat", ("--include", "cpp_bloat", "-c", "100kB"),
             "CRITICAL"),
        # the same bloat in a table the role may not read: pg_stats hides its widths, and
        # check_postgres calls it not bloated; dbgauge says it could not tell
        Case("bloat", ("--include=cpp_hidden", "-c", "100kB"), "bloat",
             ("--include", "cpp_hidden", "-c", "100kB"), "UNKNOWN", theirs_state="OK"),
    ]
    for result, state in (("3", "OK"), ("5.5", "WARNING"), ("7", "CRITICAL")):
        cases.append(Case("custom_query", (f"--query=SELECT {result} AS result", "-w", "5",
                                           "-c", "6"), "custom-query",
                          ("--query", f"SELECT {result} AS result", "-w", "5", "-c", "6"),
                          state))
    return cases


def _run(argv: Sequence[str], env: dict[str, str]) -> tuple[str, str]:
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, env=env,
                          cwd=REPO, check=False)
    return STATES.get(proc.returncode, f"exit {proc.returncode}"), proc.stdout.strip()


def test_states_agree_with_check_postgres(sandbox: Sandbox) -> None:
    port = sandbox.state.port("pg-primary")
    database = sandbox.state.postgres.database
    controldata = controldata_env(sandbox.state.pg_version)
    env = {**os.environ, **(controldata or {}), "PGPASSWORD": sandbox.state.dbgauge_password,
           "PGCONNECT_TIMEOUT": "5"}
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS public.cpp_trig (i int)")
        conn.execute("INSERT INTO public.cpp_trig SELECT generate_series(1, 2000)")
        conn.execute("CREATE TABLE IF NOT EXISTS public.cpp_never (i int)")
        conn.execute("CREATE OR REPLACE FUNCTION public.cpp_noop() RETURNS trigger "
                     "LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$")
        # (CREATE OR REPLACE TRIGGER is 14+)
        conn.execute("DROP TRIGGER IF EXISTS cpp_off ON public.cpp_trig")
        conn.execute("CREATE TRIGGER cpp_off BEFORE INSERT ON public.cpp_trig "
                     "FOR EACH ROW EXECUTE FUNCTION public.cpp_noop()")
        conn.execute("ALTER TABLE public.cpp_trig DISABLE TRIGGER cpp_off")
        for table in ("cpp_bloat", "cpp_hidden"):  # 9 rows in 10 deleted, pages kept
            name = sql.Identifier("public", table)
            conn.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} (i int, t text) "
                                 "WITH (autovacuum_enabled = false)").format(name))
            conn.execute(sql.SQL("INSERT INTO {} SELECT g, repeat('x', 40) "
                                 "FROM generate_series(1, 20000) g").format(name))
            conn.execute(sql.SQL("DELETE FROM {} WHERE i % 10 <> 0").format(name))
            conn.execute(sql.SQL("ANALYZE {}").format(name))
        conn.execute("GRANT SELECT ON public.cpp_bloat TO dbgauge")
        conn.execute("CHECKPOINT")
        # last-analyze's WARNING at 1 s: the ANALYZE above well past it (check_postgres
        # rounds the age to whole seconds)
        wait_for(lambda: conn.execute(
            "SELECT now() - last_analyze > interval '2 s' FROM pg_stat_user_tables "
            "WHERE relid = 'public.cpp_bloat'::regclass").fetchone()[0],
            what="cpp_bloat's ANALYZE to be 2 s old")
        for _ in range(3):  # a commit ratio below 100% in every database it is read in
            conn.execute("BEGIN")
            conn.execute("ROLLBACK")
        flush(conn)

        def rollbacks_counted() -> bool | None:
            # the counts arrive a moment after the flush; on a fresh sandbox nothing else
            # has rolled back yet
            conn.execute("SELECT pg_stat_clear_snapshot()")
            row = conn.execute("SELECT xact_rollback > 0 FROM pg_stat_database "
                               "WHERE datname = current_database()").fetchone()
            return True if row and row[0] else None

        wait_for(rollbacks_counted, what="the rollbacks in pg_stat_database")
        try:
            datadir = str(Layout(sandbox.directory.resolve()).datadir("pg-primary"))
            cases = _cases(datadir, checkpoint=controldata is not None)
            theirs = [[CHECK_POSTGRES, f"--action={c.action}", "-H", "127.0.0.1",
                       "-p", str(port), "-u", "dbgauge",
                       *(() if any(a.startswith("--dbname") for a in c.theirs)
                         else (f"--dbname={database}",)), *c.theirs]
                      for c in cases]
            ours = [[*DBGAUGE, "check", c.check, "--config", str(sandbox.config),
                     "--target", "pg-primary", "-t", "30", *c.ours] for c in cases]
            with ThreadPoolExecutor(4) as pool:
                got_theirs = list(pool.map(lambda a: _run(a, env), theirs))
                got_ours = list(pool.map(lambda a: _run(a, env), ours))
        finally:
            conn.execute("DROP TABLE IF EXISTS public.cpp_trig, public.cpp_never, "
                         "public.cpp_bloat, public.cpp_hidden")
            conn.execute("DROP FUNCTION IF EXISTS public.cpp_noop()")
    wrong = [f"{c.action} {' '.join(c.theirs)}: check_postgres {t[0]} ({t[1][:160]}), "
             f"dbgauge {o[0]} ({o[1][:160]}), expected {c.state}"
             for c, t, o in zip(cases, got_theirs, got_ours, strict=True)
             if (t[0], o[0]) != (c.theirs_state or c.state, c.state)]
    assert not wrong, "\n".join(wrong)
    # per-object perfdata: one item per database, labelled by it, as check_postgres does
    sizes = got_ours[0][1]
    assert re.search(rf"'pg-primary:{database}:database_size_bytes'=\d+B", sizes), sizes


def test_settings_checksum_sees_a_changed_setting_as_check_postgres(sandbox: Sandbox) -> None:
    """Each tool's baseline (`-c 0`: UNKNOWN, printing it), then a setting changed by ALTER
    SYSTEM and a reload: both CRITICAL against their baselines. The two checksums differ
    by design (check_postgres' includes its own session's application_name)."""
    port = sandbox.state.port("pg-primary")
    env = {**os.environ, "PGPASSWORD": sandbox.state.dbgauge_password}
    theirs = [CHECK_POSTGRES, "--action=settings_checksum", "-H", "127.0.0.1", "-p", str(port),
              "-u", "dbgauge", f"--dbname={sandbox.state.postgres.database}"]
    ours = [*DBGAUGE, "check", "settings-checksum", "--config", str(sandbox.config),
            "--target", "pg-primary", "-t", "30"]

    def baseline(argv: list[str]) -> str:
        state, out = _run([*argv, "-c", "0"], env)
        assert state == "UNKNOWN", out
        found = re.search(r"checksum:? ([0-9a-f]{32})", out)
        assert found, out
        return found.group(1)

    base_theirs, base_ours = baseline(theirs), baseline(ours)
    assert _run([*theirs, "-c", base_theirs], env)[0] == "OK"
    assert _run([*ours, "-c", base_ours], env)[0] == "OK"
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        try:
            conn.execute("ALTER SYSTEM SET log_min_duration_statement = 123456")
            conn.execute("SELECT pg_reload_conf()")
            wait_for(lambda: _run([*ours, "-c", base_ours], env)[0] == "CRITICAL",
                     what="the reloaded setting to change dbgauge's checksum")
            assert _run([*theirs, "-c", base_theirs], env)[0] == "CRITICAL"
            assert _run([*ours, "-w", base_ours], env)[0] == "WARNING"
        finally:
            conn.execute("ALTER SYSTEM RESET log_min_duration_statement")
            conn.execute("SELECT pg_reload_conf()")
    wait_for(lambda: _run([*ours, "-c", base_ours], env)[0] == "OK",
             what="the setting reset to restore the checksum")
