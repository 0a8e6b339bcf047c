"""check_postgres' threshold forms and actions beyond plain ranges, beside Debian's
`check_postgres` (2.25) on the same sandbox conditions: bloat's percentages and
`and`/`or` joins (tables and indexes judged each on its own), custom_query's --valtype
(string, time, size) and --reverse, and replicate_row -- check_postgres UPDATEs a test
table of the test's making, dbgauge writes its token to its own heartbeat table -- with
the standby's replay running, then paused (pg_wal_replay_pause()).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing, contextmanager
from typing import Any

import psycopg
import pytest

from tests.helpers import wait_for
from tests.helpers.daemon import DBGAUGE
from tests.helpers.servers import Sandbox, pg_admin
from tests.integration.test_check_postgres_parity import CHECK_POSTGRES, Case, _run

pytestmark = pytest.mark.integration


def _env(sandbox: Sandbox) -> dict[str, str]:
    return {**os.environ, "PGPASSWORD": sandbox.state.dbgauge_password,
            "PGCONNECT_TIMEOUT": "5"}


def _theirs(sandbox: Sandbox, *args: str) -> list[str]:
    return [CHECK_POSTGRES, "-H", "127.0.0.1", "-p", str(sandbox.state.port("pg-primary")),
            "-u", "dbgauge", f"--dbname={sandbox.state.postgres.database}", *args]


def _ours(sandbox: Sandbox, check: str, *args: str, target: str = "pg-primary") -> list[str]:
    return [*DBGAUGE, "check", check, "--config", str(sandbox.config), "--target", target,
            "-t", "30", *args]


def _compare(sandbox: Sandbox, cases: Sequence[Case]) -> None:
    env = _env(sandbox)
    with ThreadPoolExecutor(4) as pool:
        theirs = list(pool.map(lambda c: _run(_theirs(sandbox, f"--action={c.action}",
                                                      *c.theirs), env), cases))
        ours = list(pool.map(lambda c: _run(_ours(sandbox, c.check, *c.ours), env), cases))
    wrong = [f"{c.action} {' '.join(c.theirs)}: check_postgres {t[0]} ({t[1][:200]}), "
             f"dbgauge {o[0]} ({o[1][:200]}), expected {c.state}"
             for c, t, o in zip(cases, theirs, ours, strict=True)
             if (t[0], o[0]) != (c.theirs_state or c.state, c.state)]
    assert not wrong, "\n".join(wrong)


def _bloat(include: str, level: str, state: str, option: str = "-w") -> Case:
    return Case("bloat", (f"--include={include}", option, level), "bloat",
                ("--include", include, option, level), state)


def test_bloat_forms_agree_with_check_postgres(sandbox: Sandbox) -> None:
    """cpf_bloat: 9 rows in 10 deleted, pages kept (about 980%, 1.3 MB wasted; its index
    about 410%). cpf_ibloat: the same rows deleted from the end and vacuumed away, so the
    table is tight and only its index is bloated -- judged on its own, as there."""
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS public.cpf_bloat (i int PRIMARY KEY, t text) "
                     "WITH (autovacuum_enabled = false)")
        conn.execute("INSERT INTO public.cpf_bloat SELECT g, repeat('x', 40) "
                     "FROM generate_series(1, 20000) g")
        conn.execute("DELETE FROM public.cpf_bloat WHERE i % 10 <> 0")
        conn.execute("CREATE TABLE IF NOT EXISTS public.cpf_ibloat (i int PRIMARY KEY, t text) "
                     "WITH (autovacuum_enabled = false)")
        conn.execute("INSERT INTO public.cpf_ibloat SELECT g, repeat('x', 40) "
                     "FROM generate_series(1, 20000) g")
        conn.execute("DELETE FROM public.cpf_ibloat WHERE i > 2000")
        conn.execute("VACUUM public.cpf_ibloat")
        conn.execute("ANALYZE public.cpf_bloat, public.cpf_ibloat")
        conn.execute("GRANT SELECT ON public.cpf_bloat, public.cpf_ibloat TO dbgauge")
        try:
            cases = [
                _bloat("cpf_bloat", "1000%", "OK"),
                _bloat("cpf_bloat", "500%", "WARNING"),
                _bloat("cpf_bloat", "500%", "CRITICAL", "-c"),
                _bloat("cpf_bloat", "100 k and 500%", "WARNING"),
                _bloat("cpf_bloat", "1 G and 500%", "OK", "-c"),
                _bloat("cpf_bloat", "1 G or 500%", "CRITICAL", "-c"),
                _bloat("cpf_bloat", "500% && 100 M", "OK"),
                _bloat("cpf_bloat", "100 M || 500%", "WARNING"),
                Case("bloat", ("--include=cpf_bloat", "-w", "1 G or 500%", "-c", "5 G and 50%"),
                     "bloat", ("--include", "cpf_bloat", "-w", "1 G or 500%", "-c",
                               "5 G and 50%"), "WARNING"),
                # the table is tight: only its index alerts
                _bloat("cpf_ibloat", "300%", "CRITICAL", "-c"),
                _bloat("cpf_ibloat", "2000%", "OK", "-c"),
            ]
            _compare(sandbox, cases)
            _, out = _run(_ours(sandbox, "bloat", "--include", "cpf_ibloat", "-c",
                                    "300%"), _env(sandbox))
            assert "index cpf_ibloat_pkey:" in out and "table public.cpf_ibloat:" not in out
            # per-object perfdata as check_postgres labels it: schema.table, the index name
            assert "'pg-primary:public.cpf_ibloat:wasted_bytes'=" in out
            assert "'pg-primary:cpf_ibloat_pkey:wasted_bytes'=" in out
            bad, said = _run(_ours(sandbox, "bloat", "-w", "1 G and 2 G"), _env(sandbox))
            assert bad == "UNKNOWN" and "join a size and a percentage" in said
        finally:
            conn.execute("DROP TABLE IF EXISTS public.cpf_bloat, public.cpf_ibloat")


def _query(result: str, *args: str, state: str, theirs_state: str = "") -> Case:
    query = f"SELECT {result} AS result"
    return Case("custom_query", (f"--query={query}", *args), "custom-query",
                ("--query", query, *args), state, theirs_state)


def test_custom_query_valtypes_agree_with_check_postgres(sandbox: Sandbox) -> None:
    string = ("--valtype=string", "-w", "degraded", "-c", "down")
    _compare(sandbox, [
        _query("'ok'", *string, state="OK"),
        _query("'degraded'", *string, state="WARNING"),
        _query("'down'", *string, state="CRITICAL"),
        _query("'up'", "--valtype=string", "--reverse", "-c", "up", state="OK"),
        _query("'down'", "--valtype=string", "--reverse", "-c", "up", state="CRITICAL"),
        _query("200", "--valtype=time", "-w", "5 minutes", "-c", "1 hour", state="OK"),
        _query("400", "--valtype=time", "-w", "5 minutes", "-c", "1 hour", state="WARNING"),
        _query("3221225472", "--valtype=size", "-w", "1 GB", "-c", "2 GB", state="CRITICAL"),
        _query("3", "--reverse", "-w", "10", "-c", "5", state="CRITICAL"),
        _query("7", "--reverse", "-w", "10", "-c", "5", state="WARNING"),
    ])


def test_custom_query_strings_on_mariadb(sandbox: Sandbox) -> None:
    """MySQL-family targets take the same forms through the same read-only path."""
    env = _env(sandbox)
    for result, state in (("'ok'", "OK"), ("'degraded'", "WARNING"), ("'down'", "CRITICAL")):
        got, out = _run(_ours(sandbox, "custom-query", "--query",
                              f"SELECT {result} AS result", "--valtype", "string", "-w",
                              "degraded", "-c", "down", target="mariadb-primary"), env)
        assert got == state, out
    got, out = _run(_ours(sandbox, "custom-query", "--query", "SELECT 'x' AS result", "--valtype",
                          "integer", "-w", "5m", target="mariadb-primary"), env)
    assert got == "UNKNOWN" and "not a time" in out, out


@contextmanager
def _replay_paused(sandbox: Sandbox) -> Iterator[psycopg.Connection[Any]]:
    with closing(pg_admin(sandbox, "pg-standby")) as standby:
        standby.execute("SELECT pg_wal_replay_pause()")
        try:
            # 14+ tells a requested pause from a done one; 13 pauses before it answers
            state = ("SELECT pg_get_wal_replay_pause_state() = 'paused'"
                     if sandbox.state.pg_version >= 14 else "SELECT pg_is_wal_replay_paused()")
            wait_for(lambda: standby.execute(state).fetchone()[0],
                     what="the standby's replay to pause")
            yield standby
        finally:
            standby.execute("SELECT pg_wal_replay_resume()")


def _token(conn: psycopg.Connection[Any]) -> Any:
    row = conn.execute("SELECT ts FROM dbgauge.heartbeat WHERE node_name = "
                       "'dbgauge replicate-row'").fetchone()
    return row[0] if row else None


def test_replicate_row_agrees_with_check_postgres(sandbox: Sandbox) -> None:
    """check_postgres toggles a column of the test's own table; dbgauge writes only its
    token in dbgauge.heartbeat. Replay running: OK; paused: CRITICAL past -c, WARNING past
    a lone -w; the token arriving between the levels: WARNING (dbgauge waits for -c where
    check_postgres stops at -w)."""
    env = _env(sandbox)
    port2 = str(sandbox.state.port("pg-standby"))
    database = sandbox.state.postgres.database

    def theirs(*levels: str) -> list[str]:
        return _theirs(sandbox, "--action=replicate_row", "--host=127.0.0.1", f"--port={port2}",
                       f"--dbname={database}", "--repinfo=cpf_rep,id,1,v,a,b", *levels)

    def ours(*levels: str) -> list[str]:
        return _ours(sandbox, "replicate-row", *levels, target="pg-primary,pg-standby")

    with closing(pg_admin(sandbox, "pg-primary")) as primary:
        primary.execute("CREATE TABLE IF NOT EXISTS public.cpf_rep (id int PRIMARY KEY, v text)")
        primary.execute("INSERT INTO public.cpf_rep VALUES (1, 'a') ON CONFLICT DO NOTHING")
        primary.execute("GRANT SELECT, UPDATE ON public.cpf_rep TO dbgauge")
        try:
            with closing(pg_admin(sandbox, "pg-standby")) as standby:
                wait_for(lambda: standby.execute("SELECT to_regclass('public.cpf_rep')")
                         .fetchone()[0], what="cpf_rep on the standby")
            for argv, state in ((theirs("-c", "5"), "OK"), (ours("-c", "5"), "OK")):
                got, out = _run(argv, env)
                assert got == state, out
            assert "'pg-standby:replicate_seconds'=" in _run(ours("-w", "5"), env)[1]
            for levels, state in ((("-c", "2"), "CRITICAL"), (("-w", "1"), "WARNING")):
                with _replay_paused(sandbox):
                    for argv in (theirs(*levels), ours(*levels)):
                        got, out = _run(argv, env)
                        assert got == state, f"{levels}: {out}"
                _caught_up(sandbox, primary)  # check_postgres starts from equal values
            _arrives_between_levels(sandbox, primary, ours("-w", "1", "-c", "20"), env)
        finally:
            primary.execute("DROP TABLE IF EXISTS public.cpf_rep")


def _caught_up(sandbox: Sandbox, primary: psycopg.Connection[Any]) -> None:
    wanted = primary.execute("SELECT v FROM public.cpf_rep WHERE id = 1").fetchone()
    with closing(pg_admin(sandbox, "pg-standby")) as standby:
        wait_for(lambda: standby.execute("SELECT v FROM public.cpf_rep WHERE id = 1")
                 .fetchone() == wanted, what="the standby to replay the row")


def _arrives_between_levels(sandbox: Sandbox, primary: psycopg.Connection[Any],
                            argv: list[str], env: dict[str, str]) -> None:
    before = _token(primary)
    got: list[tuple[str, str]] = []
    with _replay_paused(sandbox):
        runner = threading.Thread(target=lambda: got.append(_run(argv, env)))
        runner.start()
        # the token written, and older than -w, before the replay resumes
        wait_for(lambda: primary.execute(
            "SELECT ts <> %s AND clock_timestamp() - ts > interval '1.5 s' FROM dbgauge.heartbeat "
            "WHERE node_name = 'dbgauge replicate-row'", (before,)).fetchone()[0],
            what="dbgauge's token to be written and 1.5 s old")
    runner.join(60)
    assert got and got[0][0] == "WARNING", got


def test_replicate_row_never_writes_where_it_must_not(sandbox: Sandbox) -> None:
    """A primary whose sessions are read-only by default is refused (UNKNOWN, nothing
    written); a standby alone is never written to; --repinfo is refused, saying why."""
    env = _env(sandbox)
    with closing(pg_admin(sandbox, "pg-primary")) as primary:
        _run(_ours(sandbox, "replicate-row", "-c", "5", target="pg-primary,pg-standby"), env)
        before = _token(primary)
        database = sandbox.state.postgres.database
        primary.execute(f'ALTER ROLE dbgauge IN DATABASE "{database}" '
                        "SET default_transaction_read_only = on")
        try:
            got, out = _run(_ours(sandbox, "replicate-row", "-c", "5",
                                  target="pg-primary,pg-standby"), env)
        finally:
            primary.execute(f'ALTER ROLE dbgauge IN DATABASE "{database}" '
                            "RESET default_transaction_read_only")
        assert got == "UNKNOWN" and "refusing to write" in out, out
        assert _token(primary) == before
    got, out = _run(_ours(sandbox, "replicate-row", "-c", "5", target="pg-standby"), env)
    assert got == "UNKNOWN" and "no primary with a standby" in out, out
    got, out = _run(_ours(sandbox, "replicate-row", "-c", "5", "--repinfo", "t,id,1,v,a,b",
                          target="pg-primary,pg-standby"), env)
    assert got == "UNKNOWN" and "does not write to user tables" in out, out
