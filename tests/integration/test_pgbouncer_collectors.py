"""The PgBouncer collectors against the sandbox's real PgBouncer (1.18 on Debian 12).

Clients connect through PgBouncer to `app_tiny`, an alias of the app database whose
pool holds only 2 server connections (sandbox.TINY_POOL_SIZE), so a test can exhaust it
without starving other pools. The collectors log in as `dbgauge`, a stats_users member
and not an admin: the least privilege the README documents.
"""

from __future__ import annotations

import subprocess
import threading
from contextlib import closing

import pytest

from dbgauge.app import load_config
from dbgauge.collectors.pgbouncer_stats import parse_stats, stats_samples
from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.db import connect
from dbgauge.toolkit.errors import QueryError
from tests.helpers import DBGAUGE, REPO, Metrics, value, wait_for
from tests.helpers.daemon import collect_direct
from tests.helpers.servers import Sandbox, pgbouncer_clients

pytestmark = pytest.mark.integration

TINY = {"database": sb.TINY_POOL_DATABASE, "user": "sandbox_admin"}
def collect(sandbox: Sandbox, *collectors: str) -> Metrics:
    return collect_direct(sandbox, "pgbouncer", *(collectors or PGB))


PGB = ("pgbouncer_pools", "pgbouncer_stats", "pgbouncer_databases", "pgbouncer_config",
       "pgbouncer_lists", "pgbouncer_clients")










def test_stats_user_is_not_admin_and_every_collector_works(sandbox: Sandbox) -> None:
    with closing(connect(load_config(sandbox.config).target("pgbouncer"))) as conn:
        assert conn.server.version >= (1, 18)
        with pytest.raises(QueryError, match="admin access needed"):
            conn.execute_sql("SHOW FDS")
    m = collect(sandbox)
    assert value(m, "dbgauge_pgbouncer_config_info", pool_mode="transaction") == 1
    assert value(m, "dbgauge_pgbouncer_config_max_client_connections") == 1000
    assert value(m, "dbgauge_pgbouncer_config_default_pool_size") == 10
    assert value(m, "dbgauge_pgbouncer_database_pool_size", database=sb.TINY_POOL_DATABASE) == \
        sb.TINY_POOL_SIZE
    entries = [k for k in m if k[0] == "dbgauge_pgbouncer_database_info"]
    assert value(m, "dbgauge_pgbouncer_list_items", list="databases") == len(entries) >= 4


def test_five_clients_one_in_a_transaction(sandbox: Sandbox) -> None:
    clients_ = "dbgauge_pgbouncer_pool_client_connections"
    servers = "dbgauge_pgbouncer_pool_server_connections"
    with pgbouncer_clients(sandbox, 5) as conns:
        conns[0].execute("SELECT 1")  # not autocommit: BEGIN, the server stays linked
        for conn in conns[1:]:
            conn.execute("SELECT 1")
            conn.commit()
        m = wait_for(lambda: (lambda m: m if value(m, clients_, **TINY, state="active") == 5
                              else None)(collect(sandbox)), what="5 active clients")
        assert value(m, clients_, **TINY, state="waiting") == 0
        assert value(m, servers, **TINY, state="active") == 1
        assert (value(m, servers, **TINY, state="idle") or 0) <= 1
        assert value(m, "dbgauge_pgbouncer_pool_client_maxwait_seconds", **TINY) == 0
        assert value(m, "dbgauge_pgbouncer_database_current_connections",
                     database=sb.TINY_POOL_DATABASE) in (1, 2)
        assert (value(m, "dbgauge_pgbouncer_stats_queries_total",
                      database=sb.TINY_POOL_DATABASE) or 0) >= 5
        assert (value(m, "dbgauge_pgbouncer_list_items", list="used_clients") or 0) >= 6
        conns[0].rollback()


def test_exhausted_pool_makes_clients_wait(sandbox: Sandbox) -> None:
    clients_ = "dbgauge_pgbouncer_pool_client_connections"
    with pgbouncer_clients(sandbox, 5) as conns:
        holders, queued = conns[:sb.TINY_POOL_SIZE], conns[sb.TINY_POOL_SIZE]
        for conn in holders:
            conn.execute("SELECT 1")  # each holds one of the pool's 2 server connections
        thread = threading.Thread(target=lambda: queued.execute("SELECT 1"), daemon=True)
        thread.start()
        try:
            wait_for(lambda: value(collect(sandbox, "pgbouncer_pools"), clients_, **TINY,
                                   state="waiting") == 1, what="cl_waiting to rise")
            m = wait_for(lambda: (lambda m: m if (value(
                m, "dbgauge_pgbouncer_pool_client_maxwait_seconds", **TINY) or 0) >= 1
                else None)(collect(sandbox)), what="a client waiting for a second")
            assert value(m, clients_, **TINY, state="waiting") == 1
            assert value(m, "dbgauge_pgbouncer_pool_server_connections", **TINY,
                         state="active") == sb.TINY_POOL_SIZE
            assert (value(m, "dbgauge_pgbouncer_pool_client_maxwait_seconds", **TINY) or 0) >= 1
            assert value(m, "dbgauge_pgbouncer_database_current_connections",
                         database=sb.TINY_POOL_DATABASE) == sb.TINY_POOL_SIZE
            out = subprocess.run([*DBGAUGE, "collect", "--config", str(sandbox.config),
                                  "pgbouncer"], capture_output=True, text=True, timeout=60,
                                 cwd=REPO, check=True).stdout
            check = subprocess.run(["promtool", "check", "metrics"], input=out,
                                   capture_output=True, text=True, timeout=30, check=False)
            assert check.returncode == 0 and not (check.stdout + check.stderr).strip()
        finally:
            for conn in holders:
                conn.rollback()
            thread.join(15)
        assert not thread.is_alive()
        m = wait_for(lambda: (lambda m: m if value(m, clients_, **TINY, state="waiting") == 0
                              else None)(collect(sandbox, "pgbouncer_pools")),
                     what="the queue to drain")
        assert value(m, "dbgauge_pgbouncer_pool_client_maxwait_seconds", **TINY) == 0


def test_show_stats_and_show_stats_totals_give_the_same_counters(sandbox: Sandbox) -> None:
    """1.18 answers both; dbgauge reads SHOW STATS there and SHOW STATS_TOTALS from 1.23."""
    with pgbouncer_clients(sandbox, 1) as (conn,):
        conn.execute("SELECT 1")
        conn.commit()
    with closing(connect(load_config(sandbox.config).target("pgbouncer"))) as conn:
        via_stats = {(s.name, tuple(s.labels.items())): s.value
                     for s in stats_samples(parse_stats(conn.execute_sql("SHOW STATS")))}
        via_totals = {(s.name, tuple(s.labels.items())): s.value
                      for s in stats_samples(parse_stats(
                          conn.execute_sql("SHOW STATS_TOTALS")))}
    assert via_stats.keys() == via_totals.keys()
    key = ("dbgauge_pgbouncer_stats_queries_total", (("database", sb.TINY_POOL_DATABASE),))
    # counters only grow, and the two statements ran back to back on an idle pooler
    assert 1 <= via_stats[key] <= via_totals[key] <= via_stats[key] + 1
