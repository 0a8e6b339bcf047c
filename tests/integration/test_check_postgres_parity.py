"""dbgauge's check_postgres actions beside Debian's `check_postgres` (2.25) on the same
sandbox server, the same thresholds written each tool's way: the states agree.

Conditions are made once (a disabled trigger, a table analyzed by autovacuum's absence,
the levels either side of what both tools just measured), then every pair of commands
runs in parallel: a few seconds for the whole module. Levels are never set at the value
itself: check_postgres alerts at `>=` a level, monitoring-plugin ranges (dbgauge) above
it -- a documented difference that only shows on equality (lock-count keeps check_postgres'
`>=`). A second set of conditions is held open while its pairs run: locks held and
awaited, client sessions, a transaction idle and a statement waiting, sequences in a
database of their own (`_sessions_held`).
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from dataclasses import dataclass

import psycopg
import pytest
from psycopg import sql

from dbgauge.toolkit.sandbox.binaries import pg_binaries
from dbgauge.toolkit.sandbox.layout import Layout
from dbgauge.toolkit.sandbox.model import ADMIN_USER, TINY_POOL_DATABASE
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
    # WAL held back by the slot made before the set-up wrote its tables (a few MB)
    slot = ("--include=cpp_slot",)
    cases += [
        Case("replication_slots", (*slot, "-w", "1GB"), "replication-slots",
             ("--include", "cpp_slot", "-w", "1GB"), "OK"),
        Case("replication_slots", (*slot, "-w", "1kB", "-c", "1GB"), "replication-slots",
             ("--include", "cpp_slot", "-w", "1kB", "-c", "1GB"), "WARNING"),
        Case("replication_slots", (*slot, "-c", "1kB"), "replication-slots",
             ("--include", "cpp_slot", "-c", "1kB"), "CRITICAL"),
        Case("replication_slots", ("--include=nosuchslot", "-c", "1kB"), "replication-slots",
             ("--include", "nosuchslot", "-c", "1kB"), "UNKNOWN"),
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
        # a slot reserving WAL from now on: what the tables below write, it holds back
        conn.execute("SELECT pg_create_physical_replication_slot('cpp_slot', true) WHERE NOT "
                     "EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = 'cpp_slot')")
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
            conn.execute("SELECT pg_drop_replication_slot('cpp_slot')")
    wrong = [f"{c.action} {' '.join(c.theirs)}: check_postgres {t[0]} ({t[1][:160]}), "
             f"dbgauge {o[0]} ({o[1][:160]}), expected {c.state}"
             for c, t, o in zip(cases, got_theirs, got_ours, strict=True)
             if (t[0], o[0]) != (c.theirs_state or c.state, c.state)]
    assert not wrong, "\n".join(wrong)
    # per-object perfdata: one item per database, labelled by it, as check_postgres does
    sizes = got_ours[0][1]
    assert re.search(rf"'pg-primary:{database}:database_size_bytes'=\d+B", sizes), sizes


def test_settings_checksum_sees_a_changed_setting_as_check_postgres(sandbox: Sandbox) -> None:
    """Each tool's baseline (`-c 0`: UNKNOWN, printing it) is the same checksum, so
    check_postgres' baseline carries over; then a setting changed by ALTER SYSTEM and a
    reload: both CRITICAL against it."""
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
    assert base_ours == base_theirs
    assert _run([*theirs, "-c", base_theirs], env)[0] == "OK"
    assert _run([*ours, "-c", base_theirs], env)[0] == "OK"
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


def _session_cases(admin: str) -> list[Case]:
    """The conditions `_sessions_held` makes: 120 tables locked and one ExclusiveLock
    awaited (lock-count); about 15 client sessions (connections); `admin`'s session idle
    in transaction and its statement waiting (the user filters); in the database cpp_seq a
    sequence 84.6 % used, a cycling one at 99 % and a disabled trigger."""
    many = ("-w", "total=1000;waiting=5", "-c", "total=2000")
    cases = [_same("locks", "lock-count", many, "OK"),
             # check_postgres' defaults total=100/150: 120 locks and more warn
             Case("locks", (), "lock-count", (), "WARNING"),
             _same("locks", "lock-count", ("-w", "waiting=1;exclusive=2", "-c", "total=1000"),
                   "WARNING"),
             _same("locks", "lock-count", ("-c", "120"), "CRITICAL"),
             _same("locks", "lock-count", ("-w", "total=1000", "-c", "exclusive=2"),
                   "CRITICAL"),
             # -c alone: no warning, in both (the default total=100 would warn)
             _same("locks", "lock-count", ("-c", "total=1000"), "OK")]
    cases += [_same("backends", "connections", ("-w", "100", "-c", "200"), "OK"),
              _same("backends", "connections", ("-w", "8", "-c", "200"), "WARNING"),
              _same("backends", "connections", ("-c", "8"), "CRITICAL"),
              _same("backends", "connections", ("-w", "2%", "-c", "90%"), "WARNING"),
              _same("backends", "connections", ("-w", "2%"), "WARNING"),
              _same("backends", "connections", ("-w", "-10", "-c", "-5"), "OK"),
              _same("backends", "connections", ("-w", "-290", "-c", "-5"), "WARNING"),
              _same("backends", "connections", ("-c", "-290"), "CRITICAL")]
    mine, others = (f"--includeuser={admin}",), ("--excludeuser", f"{admin},nosuchuser")
    ours_mine = ("--includeuser", admin)
    for action, check in (("txn_idle", "txn-idle"), ("txn_time", "txn-time"),
                          ("query_time", "query-time")):
        cases += [Case(action, (*mine, "-w", "1", "-c", "1h"), check,
                       (*ours_mine, "-w", "1", "-c", "1h"), "WARNING"),
                  Case(action, (f"--excludeuser={admin},nosuchuser", "-w", "1", "-c", "1h"),
                       check, (*others, "-w", "1", "-c", "1h"), "OK")]
    # check_postgres' count forms: `admin`'s one session idle in transaction (for 1 s and
    # more, as the -w 1 cases above)
    cases += [Case("txn_idle", (*mine, "-w", "+1"), "txn-idle", (*ours_mine, "-w", "+1"),
                   "WARNING"),
              Case("txn_idle", (*mine, "-w", "+2"), "txn-idle", (*ours_mine, "-w", "+2"), "OK"),
              Case("txn_idle", (*mine, "-c", "1 for 1 second"), "txn-idle",
                   (*ours_mine, "-c", "1 for 1 second"), "CRITICAL"),
              Case("txn_idle", (*mine, "-c", "2 for 1 second"), "txn-idle",
                   (*ours_mine, "-c", "2 for 1 second"), "OK")]
    # owners: the databases and relations of a user (cpp_l1 holds a row: 8 kB)
    cases += [Case("database_size", (*mine, "-w", "1kB"), "database-size",
                   (*ours_mine, "-w", "1kB"), "WARNING"),
              Case("relation_size", (*mine, "-c", "1kB"), "relation-size",
                   (*ours_mine, "-c", "1kB"), "CRITICAL"),
              Case("relation_size", (*mine, "-w", "1GB"), "relation-size",
                   (*ours_mine, "-w", "1GB"), "OK"),
              # nothing left to judge: check_postgres says OK, dbgauge that it could not tell
              Case("database_size", ("--includeuser=nosuchuser", "-w", "1kB"),
                   "database-size", ("--includeuser", "nosuchuser", "-w", "1kB"), "UNKNOWN",
                   theirs_state="OK")]
    db, ours_db = ("--dbname=cpp_seq",), ("--dbname", "cpp_seq")
    skip = (*db, "--skipcycled")
    cases += [  # 84.6 %: check_postgres rounds it to 85 and alerts at 85; dbgauge does not
        Case("sequence", (*skip, "-w", "85%", "-c", "95%"), "sequence",
             (*ours_db, "-w", "85", "-c", "95"), "OK", theirs_state="WARNING"),
        Case("sequence", (*skip, "-w", "85%", "-c", "95%"), "sequence",
             (*ours_db, "-w", "84.5", "-c", "95"), "WARNING"),
        Case("sequence", (*skip, "-w", "90%", "-c", "95%"), "sequence",
             (*ours_db, "-w", "90", "-c", "95"), "OK"),
        Case("sequence", (*skip, "-c", "80%"), "sequence", (*ours_db, "-c", "80"),
             "CRITICAL"),
        # the cycling sequence at 99 %: check_postgres counts it unless --skipcycled
        Case("sequence", (*db, "-w", "90%", "-c", "95%"), "sequence",
             (*ours_db, "-w", "90", "-c", "95"), "OK", theirs_state="CRITICAL"),
        # one disabled trigger; -c alone sets no warning (the default 0 would warn)
        Case("disabled_triggers", (*db, "-c", "5"), "disabled-triggers",
             (*ours_db, "-c", "5"), "OK")]
    return cases


@contextmanager
def _sessions_held(sandbox: Sandbox) -> Iterator[None]:
    """The conditions of `_session_cases`, undone afterwards."""
    with closing(pg_admin(sandbox, "pg-primary")) as setup:
        setup.execute("DROP DATABASE IF EXISTS cpp_seq")
        setup.execute("CREATE DATABASE cpp_seq")
    with closing(pg_admin(sandbox, "pg-primary", dbname="cpp_seq")) as seq:
        seq.execute("CREATE SEQUENCE cpp_s84 MINVALUE 1 MAXVALUE 1000")
        seq.execute("SELECT setval('cpp_s84', 846)")  # check_postgres: 846/1000 = 85 %
        seq.execute("CREATE SEQUENCE cpp_cycle MINVALUE 1 MAXVALUE 100 CYCLE")
        seq.execute("SELECT setval('cpp_cycle', 99)")
        seq.execute("GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO dbgauge")
        seq.execute("CREATE TABLE cpp_t (i int)")
        seq.execute("CREATE FUNCTION cpp_noop() RETURNS trigger LANGUAGE plpgsql "
                    "AS $$BEGIN RETURN NEW; END$$")
        seq.execute("CREATE TRIGGER cpp_off BEFORE INSERT ON cpp_t FOR EACH ROW "
                    "EXECUTE FUNCTION cpp_noop()")
        seq.execute("ALTER TABLE cpp_t DISABLE TRIGGER cpp_off")
    holder = psycopg.connect(sandbox.admin_dsn("pg-primary"))
    waiter = psycopg.connect(sandbox.admin_dsn("pg-primary"))
    idle = [psycopg.connect(sandbox.admin_dsn("pg-primary"), autocommit=True)
            for _ in range(10)]
    thread = threading.Thread(target=lambda: _ignore_errors(
        lambda: waiter.execute("LOCK TABLE cpp_l0 IN EXCLUSIVE MODE")), daemon=True)
    try:
        for i in range(120):
            holder.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} (i int)").format(
                sql.Identifier(f"cpp_l{i}")))
        holder.execute("INSERT INTO cpp_l1 VALUES (1)")
        holder.commit()
        holder.execute("LOCK TABLE cpp_l0 IN EXCLUSIVE MODE")
        for i in range(1, 120):
            holder.execute(sql.SQL("LOCK TABLE {} IN ACCESS SHARE MODE").format(
                sql.Identifier(f"cpp_l{i}")))
        thread.start()
        with closing(pg_admin(sandbox, "pg-primary")) as watch:
            wait_for(lambda: watch.execute(
                "SELECT count(*) = 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                "WHERE NOT l.granted AND c.relname = 'cpp_l0' AND now() - ("
                "SELECT max(state_change) FROM pg_stat_activity WHERE pid = %s) > "
                "interval '3 s'", (holder.info.backend_pid,)).fetchone()[0],
                what="the lock wait and the idle transaction to be 3 s old")
        yield
    finally:
        holder.rollback()
        thread.join(30)
        waiter.rollback()
        with closing(holder), closing(waiter):
            holder.execute("DROP TABLE IF EXISTS " + ", ".join(f"cpp_l{i}" for i in range(120)))
            holder.commit()
        for conn in idle:
            conn.close()
        with closing(pg_admin(sandbox, "pg-primary")) as setup:
            setup.execute("DROP DATABASE IF EXISTS cpp_seq WITH (FORCE)")


def _ignore_errors(work: Callable[[], object]) -> None:
    try:
        work()
    except psycopg.Error:  # the test's end may close the waiting session first
        pass


def test_locks_sessions_and_sequences_agree_with_check_postgres(sandbox: Sandbox) -> None:
    """lock-count (lock specs, >=, the defaults), connections (counts, %, slots left),
    --includeuser/--excludeuser (sessions' users, databases' and relations' owners),
    sequence (rounding, cycling) and a level given alone, beside check_postgres on the
    same conditions."""
    port = sandbox.state.port("pg-primary")
    database = sandbox.state.postgres.database
    env = {**os.environ, "PGPASSWORD": sandbox.state.dbgauge_password,
           "PGCONNECT_TIMEOUT": "5"}
    cases = _session_cases(ADMIN_USER)
    theirs = [[CHECK_POSTGRES, f"--action={c.action}", "-H", "127.0.0.1", "-p", str(port),
               "-u", "dbgauge", *(() if any(a.startswith("--dbname") for a in c.theirs)
                                  else (f"--dbname={database}",)), *c.theirs] for c in cases]
    ours = [[*DBGAUGE, "check", c.check, "--config", str(sandbox.config),
             "--target", "pg-primary", "-t", "30", *c.ours] for c in cases]
    with _sessions_held(sandbox), ThreadPoolExecutor(4) as pool:
        got_theirs = list(pool.map(lambda a: _run(a, env), theirs))
        got_ours = list(pool.map(lambda a: _run(a, env), ours))
    wrong = [f"{c.action} {' '.join(c.theirs)}: check_postgres {t[0]} ({t[1][:200]}), "
             f"dbgauge {o[0]} ({o[1][:200]}), expected {c.state}"
             for c, t, o in zip(cases, got_theirs, got_ours, strict=True)
             if (t[0], o[0]) != (c.theirs_state or c.state, c.state)]
    assert not wrong, "\n".join(wrong)
    # lock-count's perfdata: per database and type, as check_postgres' `app.waiting=1;5`
    lock_theirs, lock_ours = got_theirs[2][1], got_ours[2][1]
    assert re.search(rf"\b{database}\.waiting=1;1\b", lock_theirs), lock_theirs
    assert re.search(rf"'pg-primary:{database}:waiting_locks'=1;@1:", lock_ours), lock_ours
    assert re.search(rf"'pg-primary:{database}:exclusive_locks'=2;@2:", lock_ours), lock_ours


def _pool_column(sandbox: Sandbox, database: str, column: str) -> int:
    """SHOW POOLS' `column` of `database`'s pool, as PgBouncer's admin console says it."""
    with closing(psycopg.connect(sandbox.admin_dsn("pgbouncer", "pgbouncer"),
                                 autocommit=True, prepare_threshold=None)) as admin:
        cur = admin.execute("SHOW POOLS")
        names = [d.name for d in cur.description or ()]
        rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    return sum(int(r[column]) for r in rows if r["database"] == database)


def test_pgbouncer_pool_columns_agree_with_check_postgres(sandbox: Sandbox) -> None:
    """check_postgres' pgb_pool_* actions beside `check pgbouncer-pool --stat`, with three
    clients of the small pool connected: levels either side of the count both tools read
    (check_postgres alerts at a level, dbgauge above it: its `-w N` is dbgauge's N-1)."""
    dsn = sandbox.admin_dsn("pgbouncer", TINY_POOL_DATABASE)
    clients = [psycopg.connect(dsn, prepare_threshold=None, connect_timeout=5)
               for _ in range(3)]
    try:
        active = wait_for(lambda: _pool_column(sandbox, TINY_POOL_DATABASE, "cl_active")
                          or None, what="the small pool's clients in SHOW POOLS")
        only = ("--include", TINY_POOL_DATABASE)
        cases = [
            Case("pgb_pool_cl_active", (f"--include={TINY_POOL_DATABASE}", "-w",
                                        str(active + 1)),
                 "pgbouncer-pool", (*only, "--stat", "cl_active", "-w", str(active)), "OK"),
            Case("pgb_pool_cl_active", (f"--include={TINY_POOL_DATABASE}", "-w", str(active)),
                 "pgbouncer-pool", (*only, "--stat", "cl_active", "-w", str(active - 1)),
                 "WARNING"),
            Case("pgb_pool_cl_active", (f"--include={TINY_POOL_DATABASE}", "-c", str(active)),
                 "pgbouncer-pool", (*only, "--stat", "cl_active", "-c", str(active - 1)),
                 "CRITICAL"),
            Case("pgb_pool_sv_login", (f"--include={TINY_POOL_DATABASE}", "-w", "1"),
                 "pgbouncer-pool", (*only, "--stat", "sv_login", "-w", "0"), "OK"),
            Case("pgb_pool_maxwait", (f"--include={TINY_POOL_DATABASE}", "-w", "5"),
                 "pgbouncer-pool", (*only, "--stat", "maxwait", "-w", "4"), "OK"),
        ]
        env = {**os.environ, "PGPASSWORD": sandbox.state.dbgauge_password}
        port = str(sandbox.state.port("pgbouncer"))
        theirs = [[CHECK_POSTGRES, f"--action={c.action}", "-H", "127.0.0.1", "-p", port,
                   "-u", "dbgauge", "--dbname=pgbouncer", *c.theirs] for c in cases]
        ours = [[*DBGAUGE, "check", c.check, "--config", str(sandbox.config),
                 "--target", "pgbouncer", "-t", "30", *c.ours] for c in cases]
        with ThreadPoolExecutor(4) as pool:
            got_theirs = list(pool.map(lambda a: _run(a, env), theirs))
            got_ours = list(pool.map(lambda a: _run(a, env), ours))
    finally:
        for conn in clients:
            conn.close()
    wrong = [f"{c.action} {' '.join(c.theirs)}: check_postgres {t[0]} ({t[1][:200]}), "
             f"dbgauge {o[0]} ({o[1][:200]}), expected {c.state}"
             for c, t, o in zip(cases, got_theirs, got_ours, strict=True)
             if (t[0], o[0]) != (c.state, c.state)]
    assert not wrong, "\n".join(wrong)
    assert f"'pgbouncer:{TINY_POOL_DATABASE}:cl_active'={active}" in got_ours[0][1]


def catalog_identifier(sandbox: Sandbox) -> int:
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        row = conn.execute("SELECT system_identifier FROM pg_control_system()").fetchone()
    assert row is not None
    return int(row[0])


def _value_after(text: str, word: str) -> str:
    found = re.search(rf"{word}:? ([\w.]*\w)", text)
    assert found, text
    return found.group(1)


def test_expected_values_agree_with_check_postgres(sandbox: Sandbox) -> None:
    """version, cluster_id, pgbouncer_checksum and query_runtime beside check_postgres:
    the value each reads is dbgauge's (the same checksum and identifier, so a baseline
    carries over), and the states agree; check_postgres' misreading of a two-digit minor
    (15.20 as 15.2) is the one documented difference."""
    controldata = controldata_env(sandbox.state.pg_version)
    env = {**os.environ, **(controldata or {}), "PGPASSWORD": sandbox.state.dbgauge_password}
    pg, bouncer = str(sandbox.state.port("pg-primary")), str(sandbox.state.port("pgbouncer"))
    database = sandbox.state.postgres.database

    def theirs(action: str, port: str, dbname: str, *more: str) -> tuple[str, str]:
        return _run([CHECK_POSTGRES, f"--action={action}", "-H", "127.0.0.1", "-p", port,
                     "-u", "dbgauge", f"--dbname={dbname}", *more], env)

    def ours(check: str, target: str, *more: str) -> tuple[str, str]:
        return _run([*DBGAUGE, "check", check, "--config", str(sandbox.config), "--target",
                     target, "-t", "30", *more], env)

    # the baselines each tool prints (UNKNOWN: nothing to compare with yet); check_postgres
    # reads the identifier with pg_controldata, which no build here has for every major
    # (controldata_env): there, dbgauge's is the catalog's
    datadir = str(Layout(sandbox.directory.resolve()).datadir("pg-primary"))
    own_ident = ours("cluster-id", "pg-primary")
    assert own_ident[0] == "UNKNOWN"
    if controldata is not None:
        ident = _run([CHECK_POSTGRES, "--action=cluster_id", f"--datadir={datadir}", "-c",
                      "0"], env)
        assert ident[0] == "UNKNOWN"
        assert _value_after(ident[1], "cluster_id") == _value_after(own_ident[1], "identifier")
    else:
        ident = ("UNKNOWN", "cluster_id: " + str(catalog_identifier(sandbox)))
        assert _value_after(ident[1], "cluster_id") == _value_after(own_ident[1], "identifier")
    checksum, own_checksum = (theirs("pgbouncer_checksum", bouncer, "pgbouncer", "-c", "0"),
                              ours("pgbouncer-checksum", "pgbouncer"))
    assert checksum[0] == own_checksum[0] == "UNKNOWN"
    value = _value_after(checksum[1], "checksum")
    assert value == _value_after(own_checksum[1], "checksum")
    version = sandbox.state.pg_version
    full = _value_after(ours("version", "pg-primary", "-c", str(version))[1], "version")
    wrong = [f"{what}: check_postgres {t[0]}, dbgauge {o[0]}, expected {state}"
             for what, t, o, state in [
                 *([] if controldata is None else [
                     ("cluster_id -c ID", _run([CHECK_POSTGRES, "--action=cluster_id",
                                               f"--datadir={datadir}", "-c",
                                               _value_after(ident[1], "cluster_id")], env),
                      ours("cluster-id", "pg-primary", "-c",
                           _value_after(ident[1], "cluster_id")), "OK"),
                     ("cluster_id -w 1", _run([CHECK_POSTGRES, "--action=cluster_id",
                                              f"--datadir={datadir}", "-w", "1"], env),
                      ours("cluster-id", "pg-primary", "-w", "1"), "WARNING")]),
                 ("pgbouncer_checksum -c it", theirs("pgbouncer_checksum", bouncer,
                                                     "pgbouncer", "-c", value),
                  ours("pgbouncer-checksum", "pgbouncer", "-c", value), "OK"),
                 ("pgbouncer_checksum -c other", theirs("pgbouncer_checksum", bouncer,
                                                        "pgbouncer", "-c", "0" * 31 + "1"),
                  ours("pgbouncer-checksum", "pgbouncer", "-c", "0" * 31 + "1"), "CRITICAL"),
                 ("version -c full", theirs("version", pg, database, "-c", full),
                  ours("version", "pg-primary", "-c", full), "OK"),
                 ("version -w 12", theirs("version", pg, database, "-w", "12"),
                  ours("version", "pg-primary", "-w", "12"), "WARNING"),
                 ("query_runtime -w 60", theirs("query_runtime", pg, database,
                                                "--queryname=pg_class", "-w", "60"),
                  ours("query-runtime", "pg-primary", "--queryname", "pg_class", "-w", "60"),
                  "OK"),
             ] if (t[0], o[0]) != (state, state)]
    assert not wrong, "\n".join(wrong)
    # the major alone: dbgauge says OK; check_postgres misreads a two-digit minor
    major_theirs = theirs("version", pg, database, "-w", str(version))
    assert ours("version", "pg-primary", "-w", str(version))[0] == "OK"
    minor = full.split(".")[1] if "." in full else ""
    assert major_theirs[0] == ("WARNING" if len(minor) == 2 else "OK"), major_theirs


@pytest.mark.parametrize("offset, state", [("+0s", "OK"), ("+3.5s", "WARNING"),
                                           ("+10s", "CRITICAL")])
def test_time_sync_agrees_with_check_postgres(sandbox: Sandbox, offset: str,
                                              state: str) -> None:
    """timesync beside time-sync, this host's clock skewed by faketime (both tools run
    under it): the default levels 2 and 5 seconds, the same state."""
    env = {**os.environ, "PGPASSWORD": sandbox.state.dbgauge_password}
    skewed = ["faketime", "-f", offset]
    theirs = _run([*skewed, CHECK_POSTGRES, "--action=timesync", "-H", "127.0.0.1", "-p",
                   str(sandbox.state.port("pg-primary")), "-u", "dbgauge",
                   f"--dbname={sandbox.state.postgres.database}"], env)
    ours = _run([*skewed, *DBGAUGE, "check", "time-sync", "--config", str(sandbox.config),
                 "--target", "pg-primary,mariadb-primary"], env)
    assert (theirs[0], ours[0]) == (state, state), (theirs, ours)


PGAGENT_JOB = [
    "INSERT INTO pgagent.pga_job (jobid, jobjclid, jobname) VALUES (9001, 1, 'nightly')",
    "INSERT INTO pgagent.pga_jobstep (jstid, jstjobid, jstname, jstkind, jstcode, jstdbname) "
    "VALUES (9001, 9001, 'load', 's', 'SELECT 1', 'app')",
    "INSERT INTO pgagent.pga_joblog (jlgid, jlgjobid, jlgstatus, jlgstart, jlgduration) "
    "VALUES (9001, 9001, 'f', now() - interval '30 minutes', interval '5 seconds')",
    "INSERT INTO pgagent.pga_jobsteplog (jslid, jsljlgid, jsljstid, jslstatus, jslresult, "
    "jslstart, jslduration, jsloutput) VALUES (9001, 9001, 9001, 'f', -1, "
    "now() - interval '30 minutes', interval '5 seconds', 'ERROR: relation x does not exist')",
]


def test_pgagent_jobs_agree_with_check_postgres(sandbox: Sandbox) -> None:
    """A pgAgent job whose SQL step failed 30 minutes ago, in a database with pgAgent's
    extension: inside the -c window CRITICAL, inside -w only WARNING, outside both OK; a
    database without the schema is UNKNOWN in both."""
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute("DROP DATABASE IF EXISTS cpp_pga WITH (FORCE)")
        conn.execute("CREATE DATABASE cpp_pga")
    try:
        with closing(pg_admin(sandbox, "pg-primary", dbname="cpp_pga")) as db:
            db.execute("CREATE EXTENSION pgagent")
            for statement in PGAGENT_JOB:
                db.execute(statement)
            db.execute("GRANT USAGE ON SCHEMA pgagent TO dbgauge")
            db.execute("GRANT SELECT ON ALL TABLES IN SCHEMA pgagent TO dbgauge")
        env = {**os.environ, "PGPASSWORD": sandbox.state.dbgauge_password}
        port = str(sandbox.state.port("pg-primary"))
        cases = [(("-c", "1h"), "CRITICAL"), (("-w", "1h", "-c", "10m"), "WARNING"),
                 (("-c", "10m"), "OK")]
        wrong = []
        for levels, state in cases:
            theirs = _run([CHECK_POSTGRES, "--action=pgagent_jobs", "-H", "127.0.0.1", "-p",
                           port, "-u", "dbgauge", "--dbname=cpp_pga", *levels], env)
            ours = _run([*DBGAUGE, "check", "pgagent-jobs", "--config", str(sandbox.config),
                         "--target", "pg-primary", "--dbname", "cpp_pga", *levels], env)
            if (theirs[0], ours[0]) != (state, state):
                wrong.append(f"{levels}: check_postgres {theirs}, dbgauge {ours}, "
                             f"expected {state}")
        assert not wrong, "\n".join(wrong)
        ours = _run([*DBGAUGE, "check", "pgagent-jobs", "--config", str(sandbox.config),
                     "--target", "pg-primary", "-c", "1h"], env)
        assert ours[0] == "UNKNOWN" and "no pgagent schema" in ours[1], ours
    finally:
        with closing(pg_admin(sandbox, "pg-primary")) as conn:
            conn.execute("DROP DATABASE IF EXISTS cpp_pga WITH (FORCE)")
