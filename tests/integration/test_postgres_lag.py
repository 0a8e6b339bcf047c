"""PostgreSQL lag is lag: a stalled WAL receiver shows, from the primary and the standby.

The standby's WAL receiver is stopped with SIGSTOP while the primary keeps writing: nothing
arrives, so nothing waits to be replayed and the replay lag alone stays 0 (what dbgauge said
before, while check_postgres' hot_standby_delay went WARNING). The primary sees its standby
silent with WAL waiting; the standby sees its receiver silent longer than a working link
ever is. The timeouts are shortened for the test (and restored): wal_receiver_timeout 10 s
on the standby (silence counts after 10/2 + 5 s), wal_receiver_status_interval 2 s on both
(the primary counts a standby silent after 2 + 5 s).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import closing, contextmanager

import pytest

from tests.helpers import value, wait_for
from tests.helpers.daemon import Outcome, cfg, check, collect_direct
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

SETTINGS = {"pg-primary": {"wal_receiver_status_interval": "2s"},
            "pg-standby": {"wal_receiver_status_interval": "2s", "wal_receiver_timeout": "10s"}}


def _set(sandbox: Sandbox, node: str, reset: bool = False) -> None:
    with closing(pg_admin(sandbox, node)) as conn:
        for name, value in SETTINGS[node].items():
            conn.execute(f"ALTER SYSTEM RESET {name}" if reset
                         else f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")


@contextmanager
def short_timeouts(sandbox: Sandbox) -> Iterator[None]:
    for node in SETTINGS:
        _set(sandbox, node)
    try:
        with closing(pg_admin(sandbox, "pg-standby")) as conn:
            wait_for(lambda: conn.execute("SHOW wal_receiver_timeout").fetchone() == ("10s",),
                     what="the standby to reload its settings")
        yield
    finally:
        for node in SETTINGS:
            _set(sandbox, node, reset=True)


@contextmanager
def stalled_receiver(sandbox: Sandbox) -> Iterator[int]:
    """The standby's WAL receiver stopped (SIGSTOP) until the block ends."""
    with closing(pg_admin(sandbox, "pg-standby")) as conn:
        row = conn.execute("SELECT pid FROM pg_stat_wal_receiver WHERE status = 'streaming'"
                           ).fetchone()
    assert row is not None, "the standby's WAL receiver is not streaming"
    pid = int(row[0])
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGCONT)


def _write(sandbox: Sandbox) -> None:
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS public.lag_probe (at timestamptz)")
        conn.execute("INSERT INTO public.lag_probe VALUES (now())")


def _lag(sandbox: Sandbox, node: str, *args: str) -> Outcome:
    return check("lag", *cfg(sandbox, "--target", node, "-w", "5", "-c", "1000", *args))


def test_a_stalled_wal_receiver_is_lag_on_both_sides(sandbox: Sandbox) -> None:
    with short_timeouts(sandbox):
        for node in ("pg-primary", "pg-standby"):  # before: nothing lags
            wait_for(lambda n=node: _lag(sandbox, n).code == 0, timeout=30,
                     what=f"{node} lag OK before the stall")
        with stalled_receiver(sandbox):
            def primary_sees_it() -> Outcome | None:
                _write(sandbox)  # WAL the standby does not get
                got = _lag(sandbox, "pg-primary")
                return got if got.code == 1 else None
            got = wait_for(primary_sees_it, timeout=40, interval=0.5,
                           what="the primary to see its standby lag")
            assert "standby pg-standby lag" in got.first and "(seen from the primary)" in got.first
            m = collect_direct(sandbox, "pg-primary", "postgres_replication")
            age = value(m, "dbgauge_postgres_replication_standby_reply_age_seconds",
                        application_name="pg-standby")
            assert age is not None and age > 7, age  # beyond 2 s + 5 s: silent
            got = wait_for(lambda: (o := _lag(sandbox, "pg-standby")).code == 1 and o,
                           timeout=40, interval=0.5, what="the standby to see its receiver silent")
            assert "nothing received from upstream for" in got.first, got.out
            got = check("replication", *cfg(sandbox, "--target", "pg-standby"))
            assert got.code == 1 and "[wal-receiver-silent]" in got.out, got.out
        for node in ("pg-primary", "pg-standby"):  # resumed: caught up again
            wait_for(lambda n=node: _lag(sandbox, n).code == 0, timeout=60,
                     what=f"{node} lag OK after the stall")
    with closing(pg_admin(sandbox, "pg-primary")) as conn:
        conn.execute("DROP TABLE IF EXISTS public.lag_probe")
