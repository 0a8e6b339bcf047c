"""The daemon under faults, against the real sandbox: sustained concurrent scraping (memory,
file descriptors, database connections), servers killed and restarted mid-scrape, targets
that stall mid-query, SIGHUP with a broken config under load, SIGTERM mid-scrape.

Every test runs its own `dbgauge serve` (a subprocess) and restores the sandbox in finally.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dbgauge.toolkit import sandbox as sb
from tests.helpers import parse_metrics, value, wait_for
from tests.helpers.daemon import Daemon, config_file, target_entry
from tests.helpers.servers import Sandbox, admin, replica_caught_up, run

pytestmark = pytest.mark.integration

# The sandbox config has one target per sandbox instance, named after it.
TARGETS = sb.INSTANCES
HEADER = "X-Prometheus-Scrape-Timeout-Seconds"


# --------------------------------------------------------------------------- helpers

@dataclass(frozen=True)
class Scrape:
    path: str
    status: int
    elapsed: float
    up: dict[str, float]
    body: str = field(repr=False)


def scrape(d: Daemon, path: str = "/metrics", timeout: float = 5.0) -> Scrape:
    """One scrape as Prometheus does it (timeout header), timed."""
    started = time.monotonic()
    req = urllib.request.Request(d.url + path, headers={HEADER: str(timeout)})
    try:
        with urllib.request.urlopen(req, timeout=timeout + 10) as resp:
            status, body = int(resp.status), resp.read().decode()
    except urllib.error.HTTPError as exc:
        status, body = int(exc.code), exc.read().decode()
    elapsed = time.monotonic() - started
    up: dict[str, float] = {}
    if status == 200:
        # Only the dbgauge_up lines: a full parse costs the client more than the scrape (and
        # a multi-line regex over the body, tried at every character, nearly as much).
        lines = "\n".join(line for line in body.split("\n") if line.startswith("dbgauge_up{"))
        for (_name, labels), v in parse_metrics(lines).items():
            up[dict(labels)["target"]] = v
    return Scrape(path, status, elapsed, up, body)


def proc_stats(pid: int) -> dict[str, int]:
    """RSS (kB), open fds and threads of a process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {"rss_kb": int(fields["VmRSS"].split()[0]), "threads": int(fields["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def _pg_admin(sandbox: Sandbox, name: str = "pg-primary") -> psycopg.Connection[Any]:
    return psycopg.connect(sandbox.admin_dsn(name, "postgres"), autocommit=True,
                           connect_timeout=5)


def db_sessions(sandbox: Sandbox) -> dict[str, int]:
    """Sessions of the monitoring user `dbgauge`, as each server counts them."""
    out = {}
    for name in (n for n in TARGETS if n.startswith("mariadb")):
        rows = run(sandbox, name, "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST "
                                  "WHERE USER = 'dbgauge'")
        out[name] = int(rows[0]["n"])
    for name in (n for n in TARGETS if n.startswith("pg-")):
        with _pg_admin(sandbox, name) as conn:
            row = conn.execute("SELECT count(*) FROM pg_stat_activity "
                               "WHERE usename = 'dbgauge'").fetchone()
            assert row is not None
            out[name] = int(row[0])
    with _pgbouncer_admin(sandbox) as conn:
        cur = conn.cursor()
        cur.execute("SHOW CLIENTS")
        assert cur.description is not None
        cols = [c.name for c in cur.description]
        users = [dict(zip(cols, row, strict=True))["user"] for row in cur.fetchall()]
        out["pgbouncer"] = users.count("dbgauge")
    return out






class Scrapers:
    """Background clients scraping until stopped; every answer is recorded."""

    def __init__(self, d: Daemon, paths: list[str], timeout: float) -> None:
        self.results: list[Scrape] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._loop, args=(d, p, timeout), daemon=True)
                         for p in paths]

    def _loop(self, d: Daemon, path: str, timeout: float) -> None:
        while not self._stop.is_set():
            try:
                result = scrape(d, path, timeout)
            except Exception as exc:  # recorded, asserted on by the test
                with self._lock:
                    self.errors.append(f"{path}: {type(exc).__name__}: {exc}")
                time.sleep(0.1)
                continue
            with self._lock:
                self.results.append(result)
            time.sleep(0.05)

    def __enter__(self) -> Scrapers:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(30)


@contextmanager
def daemon_for(sandbox: Sandbox, tmp_path: Path, targets: list[dict[str, Any]] | None = None,
               **daemon_cfg: object) -> Iterator[Daemon]:
    d = Daemon(config_file(sandbox, tmp_path / "c.yaml", targets, **daemon_cfg), tmp_path / "log")
    try:
        yield d
    finally:
        d.stop()


def _healthy(d: Daemon) -> bool | None:
    """All targets up and both replications running, as the daemon sees them."""
    m = d.metrics(scrape_timeout=5)
    ok = all(value(m, "dbgauge_up", target=t) == 1 for t in TARGETS) \
        and value(m, "dbgauge_mysql_replica_io_running", target="mariadb-replica") == 1 \
        and value(m, "dbgauge_mysql_replica_sql_running", target="mariadb-replica") == 1 \
        and value(m, "dbgauge_postgres_replication_wal_receiver_status", target="pg-standby",
                  status="streaming") == 1
    return True if ok else None


# --------------------------------------------------------------------------- load

@pytest.mark.slow
def test_2000_scrapes_from_4_clients_keep_memory_fds_and_connections_flat(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """Client 0 scrapes /metrics (all targets), clients 1-3 /probe each target in turn: the
    per-target lock sees /metrics and /probe collide all the time."""
    paths = [["/metrics"]] + [[f"/probe?target={t}" for t in TARGETS[i:] + TARGETS[:i]]
                              for i in range(3)]
    with daemon_for(sandbox, tmp_path) as d:
        wait_for(lambda: _healthy(d), timeout=30)

        def client(index: int, count: int) -> list[Scrape]:
            return [scrape(d, paths[index][n % len(paths[index])], 5.0) for n in range(count)]

        with ThreadPoolExecutor(4) as pool:  # warm-up: connections, caches, thread stacks
            warm = [r for f in [pool.submit(client, i, 50) for i in range(4)] for r in f.result()]
        assert all(r.status == 200 for r in warm)
        before, sessions_before = proc_stats(d.proc.pid), db_sessions(sandbox)
        peak = dict(before)
        peak_sessions = dict(sessions_before)
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.5):
                for k, v in proc_stats(d.proc.pid).items():
                    peak[k] = max(peak[k], v)
                for k, v in db_sessions(sandbox).items():
                    peak_sessions[k] = max(peak_sessions[k], v)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        started = time.monotonic()
        try:
            with ThreadPoolExecutor(4) as pool:
                results = [r for f in [pool.submit(client, i, 500) for i in range(4)]
                           for r in f.result()]
        finally:
            done.set()
            sampler.join(10)
        wall = time.monotonic() - started
        after, sessions_after = proc_stats(d.proc.pid), db_sessions(sandbox)

    assert len(results) == 2000
    assert all(r.status == 200 for r in results)
    down = [(r.path, t) for r in results for t, v in r.up.items() if v != 1]
    assert not down, f"{len(down)} target scrapes down under load, e.g. {down[:5]}"
    slowest = max(r.elapsed for r in results)
    assert slowest < 5.0, f"slowest scrape {slowest:.2f}s"
    growth_mb = (after["rss_kb"] - before["rss_kb"]) / 1024
    report = (f"2000 scrapes in {wall:.1f}s; RSS {before['rss_kb'] / 1024:.1f} -> "
              f"{after['rss_kb'] / 1024:.1f} MiB (peak {peak['rss_kb'] / 1024:.1f}); fds "
              f"{before['fds']} -> {after['fds']} (peak {peak['fds']}); threads "
              f"{before['threads']} -> {after['threads']} (peak {peak['threads']}); "
              f"sessions {sessions_before} -> {sessions_after} (peak {peak_sessions})")
    print(report)
    assert growth_mb < 10, report
    # 4 clients: at most a handful of HTTP connections and handler threads above idle
    assert after["fds"] <= before["fds"] + 8 and peak["fds"] <= before["fds"] + 16, report
    assert peak["threads"] <= before["threads"] + 16, report
    # one persistent connection per target: the servers see no more sessions than before
    for server, count in sessions_before.items():
        assert sessions_after[server] <= count and peak_sessions[server] <= count, report


# --------------------------------------------------------------------------- kill/restart

@pytest.mark.slow
def test_each_server_killed_and_restarted_while_scraping(sandbox: Sandbox,
                                                        tmp_path: Path) -> None:
    with daemon_for(sandbox, tmp_path) as d:
        wait_for(lambda: _healthy(d), timeout=30)
        paths = ["/metrics", "/metrics", *[f"/probe?target={t}" for t in TARGETS]]
        stopped: str | None = None
        try:
            with Scrapers(d, paths, timeout=3.0) as load:
                for name in sorted(TARGETS, key=lambda n: "primary" in n):  # replicas first
                    sb.stop_instance(sandbox.directory, name)
                    stopped = name
                    m = scrape(d, timeout=3.0)
                    assert m.status == 200 and m.up[name] == 0, (name, m.up)
                    # the other servers are unaffected (a standby keeps answering while its
                    # primary is away; PgBouncer's console does too)
                    assert all(v == 1 for t, v in m.up.items() if t != name), (name, m.up)
                    sb.start_instance(sandbox.directory, name)
                    stopped = None
                    # up on the very first scrape after the server is back
                    m = scrape(d, timeout=3.0)
                    assert m.up[name] == 1, (name, m.up, d.log_text()[-2000:])
                    probe = scrape(d, f"/probe?target={name}", timeout=3.0)
                    assert probe.up == {name: 1.0}, probe.body[-500:]
        finally:
            if stopped is not None:
                sb.start_instance(sandbox.directory, stopped)
        assert not load.errors, load.errors[:5]
        assert d.proc.poll() is None
        assert all(r.status == 200 for r in load.results)
        slowest = max(r.elapsed for r in load.results)
        assert slowest < 3.0 + 1.0, f"a scrape hung: {slowest:.2f}s"
        assert len(load.results) > 50
        wait_for(lambda: _healthy(d), timeout=60, interval=0.5)  # leave the sandbox healthy
    log = d.log_text()
    assert "Traceback" not in log, log[-3000:]
    for name in TARGETS:
        assert f"target {name} is down" in log
    replica_caught_up(sandbox)


def test_restart_between_two_scrapes_is_not_reported_down(sandbox: Sandbox,
                                                           tmp_path: Path) -> None:
    """A kept connection that died while nobody scraped (server restarted, idle timeout)
    is replaced within the scrape: `up` stays right, not one scrape late."""
    names = ["mariadb-replica", "pgbouncer"]
    with daemon_for(sandbox, tmp_path, [target_entry(sandbox, n) for n in names]) as d:
        assert scrape(d).up == dict.fromkeys(names, 1.0)
        for name in names:
            sb.stop_instance(sandbox.directory, name)
            sb.start_instance(sandbox.directory, name)
        m = scrape(d)
        assert m.up == dict.fromkeys(names, 1.0), d.log_text()[-2000:]
    for name in names:
        assert f"target {name}: kept connection was lost" in d.log_text()
        assert f"target {name} is down" not in d.log_text()
    replica_caught_up(sandbox)


# --------------------------------------------------------------------------- stalls

@contextmanager
def table_locked_on_replica(sandbox: Sandbox) -> Iterator[None]:
    """LOCK TABLES dbgauge.heartbeat WRITE on the replica: the heartbeat collector's read
    waits for it (so does the SQL thread's heartbeat update, until the unlock)."""
    conn = admin(sandbox, "mariadb-replica")
    try:
        conn.cursor().execute("LOCK TABLES dbgauge.heartbeat WRITE")
        yield
    finally:
        conn.cursor().execute("UNLOCK TABLES")
        conn.close()


@contextmanager
def pgbouncer_pool_exhausted(sandbox: Sandbox) -> Iterator[None]:
    """Both server connections of dbgauge's app_tiny pool busy in pg_sleep through
    PgBouncer: any further query of that pool queues (cl_waiting)."""
    port = sandbox.state.port("pgbouncer")
    dsn = f"postgresql://dbgauge@127.0.0.1:{port}/app_tiny"
    sleepers = [psycopg.connect(dsn, password=sandbox.state.dbgauge_password, autocommit=True,
                                prepare_threshold=None) for _ in range(2)]
    threads = [threading.Thread(target=_sleep, args=(c,), daemon=True) for c in sleepers]
    for t in threads:
        t.start()
    try:
        def both_sleeping() -> bool | None:
            with _pg_admin(sandbox) as conn:
                row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = "
                                   "'dbgauge' AND query LIKE 'SELECT pg_sleep(%'").fetchone()
            return True if row is not None and row[0] >= 2 else None

        wait_for(both_sleeping, timeout=10)
        yield
    finally:
        with _pg_admin(sandbox) as conn:
            conn.execute("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = "
                         "'dbgauge' AND query LIKE 'SELECT pg_sleep(%'")
        for t in threads:
            t.join(10)
        for c in sleepers:
            c.close()


def close_tiny_pool(sandbox: Sandbox) -> None:
    """PgBouncer keeps released server connections for server_idle_timeout (10 min):
    close app_tiny's now, so later tests find the tiny pool empty, as they expect it."""
    with _pgbouncer_admin(sandbox) as conn:
        conn.execute("RECONNECT app_tiny")
    wait_for(lambda: _tiny_servers(sandbox) == 0, timeout=15,
             what="app_tiny's server connections to close")


def _pgbouncer_admin(sandbox: Sandbox) -> psycopg.Connection[Any]:
    return psycopg.connect(sandbox.admin_dsn("pgbouncer"), autocommit=True,
                           prepare_threshold=None)


def _tiny_servers(sandbox: Sandbox) -> int:
    with _pgbouncer_admin(sandbox) as conn:
        cur = conn.cursor()
        cur.execute("SHOW SERVERS")
        assert cur.description is not None
        cols = [c.name for c in cur.description]
        return sum(1 for row in cur.fetchall()
                   if dict(zip(cols, row, strict=True))["database"] == "app_tiny")


def _sleep(conn: psycopg.Connection[Any]) -> None:
    try:
        conn.execute("SELECT pg_sleep(30)")
    except psycopg.Error:
        pass  # cancelled by the fixture's cleanup


STALLS: dict[str, tuple[Callable[[Sandbox], Any], Callable[[Sandbox], dict[str, Any]]]] = {
    "mysql-table-lock": (
        table_locked_on_replica,
        lambda s: {**target_entry(s, "mariadb-replica"), "name": "stalled",
                   "lock_timeout": "5s", "query_timeout": "10s"}),
    "pgbouncer-pg-sleep": (
        pgbouncer_pool_exhausted,
        lambda s: {**target_entry(s, "pg-primary"), "name": "stalled",
                   "dsn": f"postgresql://dbgauge@127.0.0.1:{s.state.port('pgbouncer')}/app_tiny"}),
}


@pytest.mark.parametrize("stall", sorted(STALLS))
def test_stalled_target_ends_at_its_deadline_and_does_not_block_the_next_scrape(
        sandbox: Sandbox, tmp_path: Path, stall: str) -> None:
    stalling, target = STALLS[stall]
    targets = [target(sandbox), target_entry(sandbox, "pg-primary"),
               target_entry(sandbox, "pgbouncer")]
    try:
        _stall_and_recover(sandbox, tmp_path, stall, stalling, targets)
    finally:
        close_tiny_pool(sandbox)
    # the aborted statements do not linger: sessions drop back once the stall is gone
    wait_for(lambda: _sessions_settled(sandbox), timeout=20, interval=0.5)
    replica_caught_up(sandbox)


def _stall_and_recover(sandbox: Sandbox, tmp_path: Path, stall: str,
                       stalling: Callable[[Sandbox], Any], targets: list[dict[str, Any]]
                       ) -> None:
    with daemon_for(sandbox, tmp_path, targets) as d:
        assert scrape(d).up == {"stalled": 1, "pg-primary": 1, "pgbouncer": 1}
        with stalling(sandbox):
            for _ in range(3):  # each scrape ends at its own deadline, none waits for another
                m = scrape(d, timeout=2.0)  # deadline: 2 s - 0.5 s offset
                assert m.status == 200
                assert m.up == {"stalled": 0, "pg-primary": 1, "pgbouncer": 1}, m.up
                # the stall lasts until the test lifts it and the target's own query_timeout
                # (5 s) is far off: an answer before that was cut by the scrape deadline
                assert m.elapsed < 5.0, f"{stall}: scrape took {m.elapsed:.2f}s"
            # /probe of a healthy target is not held up by the stalled one
            fast = scrape(d, "/probe?target=pg-primary", timeout=2.0)
            assert fast.up == {"pg-primary": 1}
        m = wait_for(lambda: (lambda s: s if s.up.get("stalled") == 1 else None)(scrape(d)),
                 timeout=15)
        assert m.up == {"stalled": 1, "pg-primary": 1, "pgbouncer": 1}
    log = d.log_text()
    assert "target stalled did not answer in time: scrape deadline exceeded" in log, log[-2000:]
    assert "Traceback" not in log


def test_a_waiting_scrape_never_aborts_the_one_in_flight(sandbox: Sandbox,
                                                         tmp_path: Path) -> None:
    """Two scrapes of one target: the second (shorter deadline) waits for the first's lock
    and gives up at its own deadline, without aborting the first, which runs to its own."""
    stalled = {**target_entry(sandbox, "mariadb-replica"), "name": "stalled", "lock_timeout": "10s",
               "query_timeout": "10s"}
    with daemon_for(sandbox, tmp_path, [stalled]) as d, table_locked_on_replica(sandbox), \
            ThreadPoolExecutor(2) as pool:
        first = pool.submit(scrape, d, "/probe?target=stalled", 5.0)  # deadline 4.5 s
        wait_for(lambda: _waiting_on_the_lock(sandbox), timeout=10,
                 what="the first scrape to wait on the locked table")
        second = scrape(d, "/probe?target=stalled", 2.0)  # deadline 1.5 s, waits for the lock
        assert second.up == {"stalled": 0}, second
        assert not first.done(), "the first scrape was cut short by the second's deadline"
        result = first.result(10)
        assert result.up == {"stalled": 0}, result
        # it ran to its own deadline (4.5 s), not the second's (1.5 s): so says the
        # exporter's own measure of the target's scrape
        took = value(parse_metrics(result.body), "dbgauge_target_scrape_duration_seconds",
                     target="stalled")
        assert took is not None and took > 3.0, result
    assert "previous scrape of this target is still running" in d.log_text()


def _waiting_on_the_lock(sandbox: Sandbox) -> bool | None:
    rows = run(sandbox, "mariadb-replica",
               "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST "
               "WHERE USER = 'dbgauge' AND STATE LIKE 'Waiting for table%'")
    return True if int(rows[0]["n"]) else None


def _sessions_settled(sandbox: Sandbox) -> bool | None:
    sessions = db_sessions(sandbox)
    # the sandbox's shared daemon (if any) holds one per target, heartbeat writers one more
    return True if max(sessions.values()) <= 4 else None


# --------------------------------------------------------------------------- signals

def test_sighup_with_a_broken_config_under_load_keeps_serving(sandbox: Sandbox,
                                                              tmp_path: Path) -> None:
    with daemon_for(sandbox, tmp_path) as d:
        config = tmp_path / "c.yaml"
        good = config.read_text()
        with Scrapers(d, ["/metrics", "/probe?target=pg-primary"], timeout=5.0) as load:
            wait_for(lambda: len(load.results) >= 2 or None, timeout=30,
                     what="scrapes answered before the reloads")
            config.write_text(good.replace("kind: postgres", "kind: postgress", 1))
            d.proc.send_signal(signal.SIGHUP)
            wait_for(lambda: "reload failed" in d.log_text() or None, timeout=10)
            config.write_text("targets: [")  # not even YAML
            d.proc.send_signal(signal.SIGHUP)
            wait_for(lambda: d.log_text().count("reload failed") >= 2 or None, timeout=10)
            served = len(load.results)  # and it goes on serving after both failed reloads
            wait_for(lambda: len(load.results) >= served + 4 or None, timeout=30,
                     what="scrapes answered after two failed reloads")
        assert not load.errors, load.errors[:3]
        assert all(r.status == 200 and set(r.up.values()) == {1.0} for r in load.results)
        assert scrape(d).up == dict.fromkeys(TARGETS, 1.0)
        config.write_text(good)
        d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: "config reloaded" in d.log_text() or None, timeout=10)
    assert "targets[2].kind" in d.log_text() and "invalid YAML" in d.log_text()


def test_sigterm_mid_scrape_answers_and_exits_cleanly(sandbox: Sandbox, tmp_path: Path) -> None:
    stalled = {**target_entry(sandbox, "mariadb-replica"), "name": "stalled", "lock_timeout": "10s",
               "query_timeout": "10s"}
    targets = [stalled, target_entry(sandbox, "pg-primary")]
    with daemon_for(sandbox, tmp_path, targets) as d, table_locked_on_replica(sandbox):
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(scrape, d, "/metrics", 4.0)
            wait_for(lambda: _waiting_on_the_lock(sandbox), timeout=10,
                     what="the scrape to wait on the locked table")
            assert not pending.done()
            sent = time.monotonic()
            d.proc.send_signal(signal.SIGTERM)
            code = d.proc.wait(15)
            exited = time.monotonic() - sent
            answer = pending.result(10)
        # the scrape in flight was cut short and answered (its stalled target down), and
        # the process exited within a second of SIGTERM, not at the scrape's deadline
        # (3.5 s away); the bound allows for this test's own polling
        assert answer.status == 200 and answer.up == {"stalled": 0, "pg-primary": 1}
        assert code == 0 and exited < 1.5, (code, exited)
        assert answer.elapsed < 3.0, answer
        with pytest.raises(OSError):
            scrape(d, "/healthz", timeout=1.0)  # nothing listens any more
    log = d.log_text()
    assert "received SIGTERM, shutting down" in log and log.rstrip().endswith("stopped"), log
    assert "Traceback" not in log
