"""Monitoring-plugin conventions of `dbgauge check` against the real sandbox: -t/--timeout
on a server that stops answering (SIGSTOP, before and in the middle of a query), range
thresholds with -w/-c, perfdata and -v levels, run as a monitoring system runs them."""

from __future__ import annotations

import subprocess
import time
from contextlib import closing

import pytest

from tests.helpers import DBGAUGE, REPO, wait_for
from tests.helpers.daemon import cfg, check, heartbeat
from tests.helpers.servers import Sandbox, admin, pg_admin, stopped

pytestmark = pytest.mark.integration


def test_timeout_on_a_stopped_server_names_it(sandbox: Sandbox) -> None:
    target = cfg(sandbox, "--target", "mariadb-replica")
    with stopped(sandbox, "mariadb-replica"):  # stopped before: the handshake never ends
        started = time.monotonic()
        got = check("replication", *target, "-t", "2")
        took = time.monotonic() - started
    assert got.code == 3, got.out + got.err
    assert got.out == ("REPLICATION UNKNOWN - mariadb-replica: did not answer within 2 s "
                       "(-t/--timeout)\nUNKNOWN mariadb-replica [no-answer] did not answer "
                       "within 2 s (-t/--timeout)\n")
    assert took < 5, took  # before the 5 s connect timeout: the -t bound ended it
    assert check("replication", *target).code == 0


def test_one_stopped_server_leaves_the_others_results(sandbox: Sandbox) -> None:
    """Every configured target, one of them frozen: it is named as not answering, the
    five others' readings are printed, and the state is the worst of all (UNKNOWN for the
    silent one, as none of the others is CRITICAL)."""
    with stopped(sandbox, "pg-standby"):
        got = check("connections", *cfg(sandbox), "-t", "3", "-v")
        doc = check("connections", *cfg(sandbox), "-t", "3", "--format", "json").json()
    assert got.code == 3, got.out + got.err
    assert got.first.startswith("CONNECTIONS UNKNOWN - pg-standby: did not answer within 3 s "
                                "(-t/--timeout); "), got.out
    lines = got.out.splitlines()
    assert "UNKNOWN pg-standby [no-answer] did not answer within 3 s (-t/--timeout)" in lines
    answered = ("mariadb-primary", "mariadb-replica", "pg-primary", "pgbouncer",
                "pg-subscriber")
    for name in answered:
        assert f"{name}: " in got.first and f"'{name}:connections_percent'=" in got.first
        assert any(line.startswith(f"node {name}: OK, ") and "connections in use" in line
                   for line in lines), (name, got.out)
    assert "node pg-standby: UNKNOWN, did not answer within 3 s (-t/--timeout)" in lines
    assert doc["status"] == "UNKNOWN"
    assert [(f["node"], f["kind"]) for f in doc["findings"]] == [  # type: ignore[index]
        ("pg-standby", "no-answer")]
    assert {label.partition(":")[0] for label in doc["perfdata"]} == set(answered)  # type: ignore[union-attr]


def test_split_brain_compares_the_nodes_that_answer(sandbox: Sandbox) -> None:
    """A frozen node costs split-brain only itself: its connect round has a part of -t,
    so the others are still read twice and compared (no finding but the silent one)."""
    with stopped(sandbox, "pg-standby"):
        got = check("split-brain", *cfg(sandbox), "-t", "6", "--format", "json")
    doc = got.json()
    assert got.code == 3 and doc["status"] == "UNKNOWN", got.out
    assert [(f["node"], f["kind"], f["detail"]) for f in doc["findings"]] == [  # type: ignore[index]
        ("pg-standby", "no-answer", "did not answer within 6 s (-t/--timeout)")]
    assert doc["perfdata"]["nodes"]["value"] == 6  # type: ignore[index]


def test_timeout_when_the_server_stops_mid_query(sandbox: Sandbox) -> None:
    """The lag check's heartbeat SELECT waits on a table lock; the server is frozen while
    the statement runs, so neither its lock_wait_timeout nor an error can end it."""
    target = cfg(sandbox, "--target", "mariadb-replica")
    with heartbeat(sandbox):
        wait_for(lambda: True if check("lag", *target).code == 0 else None)
    with closing(admin(sandbox, "mariadb-replica", database=None)) as holder:
        holder.cursor().execute("LOCK TABLES dbgauge.heartbeat WRITE")
        proc = subprocess.Popen([*DBGAUGE, "check", "lag", *target, "-t", "3"], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            def waiting() -> bool | None:
                with closing(admin(sandbox, "mariadb-replica", database=None)) as conn:
                    cur = conn.cursor()
                    cur.execute("SELECT COUNT(*) FROM information_schema.processlist "
                                "WHERE user = 'dbgauge' AND state LIKE '%lock%' "
                                "AND info LIKE '%heartbeat%'")
                    return True if cur.fetchone()[0] else None

            wait_for(waiting, timeout=10, interval=0.02,
                     what="the check's heartbeat query to wait on the lock")
            with stopped(sandbox, "mariadb-replica"):
                out, err = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
            holder.cursor().execute("UNLOCK TABLES")
    assert proc.returncode == 3, out + err
    assert out == ("LAG UNKNOWN - mariadb-replica: did not answer within 3 s (-t/--timeout)\n"
                   "UNKNOWN mariadb-replica [no-answer] did not answer within 3 s "
                   "(-t/--timeout)\n")


def test_ranges_perfdata_and_verbosity(sandbox: Sandbox) -> None:
    target = cfg(sandbox, "--target", "pg-primary")
    # '@0%:100%': alert INSIDE 0..100 percent -- any reading is WARNING; '~:100%' never
    got = check("connections", *target, "-w", "@0%:100%", "-c", "~:100%")
    assert got.code == 1, got.out
    assert got.first.startswith("CONNECTIONS WARNING - pg-primary: ")
    assert "(threshold @0%:100%)" in got.first
    assert ";@0:100;~:100;0;100" in got.first  # ranges and min/max of a percentage
    got = check("connections", *target, "-w", "99%:", "-c", "98%:")  # below 98 %: critical
    assert got.code == 2 and "(threshold 98%:)" in got.first, got.out
    got = check("connections", *target, "-w", "90:", "-c", "95:")  # warning could never fire
    assert got.code == 3 and "--warning 90: is less strict than --critical 95:" in got.first
    got = check("connections", *target, "-vv")
    assert got.code == 0
    lines = got.out.splitlines()
    assert lines[1].startswith("node pg-primary: OK, ") and "connections in use" in lines[1]
    assert lines[2] == "thresholds connections_percent: warning 80, critical 95"
    doc = check("connections", *target, "-w", "50%", "--format", "json").json()
    perf = doc["perfdata"]["pg-primary:connections_percent"]  # type: ignore[index]
    assert perf["unit"] == "%" and perf["warn"] == "50" and perf["crit"] == "95"
    assert (perf["min"], perf["max"]) == (0, 100)
    got = check("connections", *target, "-vvv")
    assert got.code == 0 and "DEBUG" in got.err.upper()
    # a time with its unit, as check_postgres writes it: up less than 100 days, over 1 s
    got = check("uptime", *target, "-w", "100d:", "-c", "1s:")
    assert got.code == 1 and "(threshold 8640000:)" in got.first, got.out  # in seconds
    assert ";8640000:;1:" in got.first
    # check_postgres' words, in the CLI: '1000 weeks:' is warning, in seconds
    got = check("uptime", *target, "--warning=1000 weeks:", "--critical", "1 second:")
    assert got.code == 1 and "(threshold 604800000:)" in got.first, got.out
    got = check("uptime", *target, "-w", "10GB:")  # a size on a check of seconds: usage
    assert got.code == 3 and got.first.startswith("UPTIME UNKNOWN - ") and "not a size" in \
        got.first, got.out


def test_connections_take_a_count_or_a_share(sandbox: Sandbox) -> None:
    """check_postgres' `backends -w 200` means 200 connections, `-w 80%` a share: ten
    sessions held open on a server allowing 297 make 11+ connections, under 5 % of the
    limit -- `-w 10` (connections) warns where a percentage reading of 10 would not."""
    target = cfg(sandbox, "--target", "pg-primary")
    held = [pg_admin(sandbox, "pg-primary") for _ in range(10)]
    try:
        doc = check("connections", *target, "--format", "json").json()
        perf = doc["perfdata"]  # type: ignore[index]
        used = perf["pg-primary:connections"]["value"]  # type: ignore[index]
        share = perf["pg-primary:connections_percent"]["value"]  # type: ignore[index]
        assert used >= 11 and share < 10, perf  # what makes the two readings differ
        got = check("connections", *target, "-w", "10", "-c", "200")
        assert got.code == 1, got.out
        assert "WARNING pg-primary [connections] " in got.out, got.out
        assert "(threshold 10)" in got.first
        # count thresholds go with the count's perfdata, the default percentage stays
        assert ";10;200" in got.first.split("'pg-primary:connections'=")[1], got.first
        assert "'pg-primary:connections_percent'=" in got.first
        assert check("connections", *target, "-w", "200").code == 0  # 200 connections
        assert check("connections", *target, "-w", "10%").code == 0  # a share: 10 %
        got = check("connections", *target, "-w", "1%", "-c", "95%")
        assert got.code == 1 and "(threshold 1%)" in got.first, got.out
        got = check("connections", *target, "-c", "5", "-w", "80%")  # units may differ
        assert got.code == 2 and "(threshold 5)" in got.first, got.out
    finally:
        for conn in held:
            conn.close()
    for bad, says in (("250%", "'250%' is not a percentage: a share of a limit is 0 to 100"),
                      ("10%:20", "write % after each of its numbers or after none")):
        got = check("connections", *target, "-w", bad)
        assert got.code == 3 and says in got.first, got.out


def test_wraparound_takes_transactions_or_a_share(sandbox: Sandbox) -> None:
    """check_postgres' `txn_wraparound -c 1_300_000_000` is a transaction count; a bare
    number up to 100 (a percentage missing its %) is refused rather than misread."""
    target = cfg(sandbox, "--target", "pg-primary")
    with closing(pg_admin(sandbox, "pg-primary")) as conn:  # every database ages by 200
        for _ in range(200):
            conn.execute("SELECT txid_current()")
    doc = check("txn-wraparound", *target, "--format", "json").json()
    age = doc["perfdata"]["pg-primary:xid_age"]["value"]  # type: ignore[index]
    assert age > 200, doc
    got = check("txn-wraparound", *target, "-w", "1_300_000_000", "-c", "1_400_000_000")
    assert got.code == 0 and ";1300000000;1400000000" in got.first, got.out
    got = check("txn-wraparound", *target, "-c", f"{age - 1:.0f}")  # a count below the age
    assert got.code == 2 and f"(threshold {age - 1:.0f})" in got.first, got.out
    assert check("txn-wraparound", *target, "-c", "75%").code == 0
    got = check("txn-wraparound", *target, "-c", "75")
    assert got.code == 3, got.out
    assert got.first == ("TXN-WRAPAROUND UNKNOWN - --critical 75: a bare number is a count of "
                         "transactions here (as check_postgres reads it), and 75 transactions "
                         "is no plausible threshold: write 75% for a share of the limit")
    got = check("sequence", *target, "-w", "200")
    assert got.code == 3 and "'200' is not a percentage" in got.first, got.out
    got = check("lag", *target, "-w", "20%")
    assert got.code == 3 and "not a share of a limit: give it without %" in got.first
