"""`--compat mysqld_exporter` beside Debian's mysqld_exporter 0.14 with its default
collectors (global_status, global_variables, slave_status, info_schema.innodb_cmp,
info_schema.innodb_cmpmem, info_schema.query_response_time), on the MariaDB primary (Query
Response Time plugin on) and on the replica (slave status).

Every family the peer exports must be dbgauge's too, with the peer's type, label names and
series, and each value between two readings of the peer taken around dbgauge's scrape
(tests/helpers/peers.py), but for:

- NOT_OURS: the few families dbgauge does not export, each with why;
- NO_VALUES: families whose values are the exporters' own (durations, scrape counts):
  type, labels and series are compared, values are not;
- CONNECTION_GAUGES: status gauges that count the exporters' own connections, compared
  within a tolerance: mysqld_exporter opens a connection per scrape and closes it after,
  dbgauge keeps one, so around the peer's readings one more connection is open
  (Threads_connected one higher, Memory_used higher by its buffers) and after it one
  more thread is cached (Threads_cached);
- a gauge that moved back and forth between the peer's readings (a background flush
  changes Innodb_buffer_pool_pages_dirty): the three readings are taken again, up to
  ROUNDS times, and a family fails only when it differed in every round.

dbgauge must not export a family of the default scrapers' names that the peer does not
have, but for UPSTREAM_ONLY (upstream's newer families), nor a series the peer does not
have. (dbgauge's default collectors also give families of optional scrapers, such as
info_schema.innodb_metrics: tests/integration/test_compat_mysqld_more.py compares those.)
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from dbgauge.app import registry
from dbgauge.collectors.dialects import _mysqld_slave, _mysqld_status
from dbgauge.collectors.dialects.mysqld_exporter import (
    DURATION,
    LAST_SCRAPE_ERROR,
    QUERY_RESPONSE_TIME,
    SCRAPE_ERRORS,
    SCRAPERS,
    SCRAPES,
    UP,
)
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily
from dbgauge.toolkit.exporter.scrape import TargetRunner
from dbgauge.toolkit.render.prometheus import encode
from tests.helpers import wait_for
from tests.helpers.daemon import target_config
from tests.helpers.peers import MYSQLD_NOT_PRODUCED as NOT_OURS
from tests.helpers.peers import Family, Peer, compare, mysqld_exporter, parse
from tests.helpers.servers import Sandbox, replicating, run

pytestmark = pytest.mark.integration

PRIMARY, REPLICA = "mariadb-primary", "mariadb-replica"
ROUNDS = 4
# The families of the default scrapers (global_status, global_variables, slave_status,
# query_response_time) and of the exporter itself, as the dialect declares them.
DEFAULT_SCRAPERS = PeerFamilies(
    *_mysqld_status.DECLARED, *_mysqld_slave.DECLARED,
    *(PeerFamily(spec) for spec in (UP, QUERY_RESPONSE_TIME, LAST_SCRAPE_ERROR, SCRAPES,
                                    SCRAPE_ERRORS, DURATION)))
NO_VALUES: Mapping[str, str] = {
    "mysql_exporter_collector_duration_seconds": "how long each program's scrapers took",
    "mysql_exporter_scrapes_total": "each exporter counts its own scrapes (dbgauge's count "
                                    "is checked against its runner below)",
}
# family -> how far dbgauge's value may be outside the peer's two readings
CONNECTION_GAUGES: Mapping[str, float] = {
    "mysql_global_status_threads_connected": 1,
    "mysql_global_status_threads_cached": 1,
    "mysql_global_status_memory_used": 2**20,  # one connection's buffers, with room
}
# Families upstream exports that Debian's 0.14 does not (dbgauge speaks both)
UPSTREAM_ONLY = frozenset({"mysql_slave_status_gtid_io_pos", "mysql_slave_status_gtid_slave_pos"})



class Scraping:
    """dbgauge's scrapes of one target with `--compat mysqld_exporter`, through the
    daemon's own TargetRunner (its persistent connection, every default collector)."""

    def __init__(self, sandbox: Sandbox, name: str) -> None:
        cfg = target_config(sandbox, name, compat=["mysqld_exporter"])
        reg = registry()
        self.specs = reg.specs()
        self.runner = TargetRunner(cfg, reg.for_target(cfg), reg.dialects_for(cfg))
        self.count = 0

    def __call__(self) -> dict[str, Family]:
        result = self.runner.scrape(time.monotonic() + 15)
        assert result.up, result.error
        self.count += 1
        return parse(encode([result], specs=self.specs)[0].decode(), drop_labels=("sandbox",))


@pytest.fixture
def scraping(sandbox: Sandbox, request: pytest.FixtureRequest) -> Iterator[Scraping]:
    s = Scraping(sandbox, request.param)
    try:
        yield s
    finally:
        s.runner.close()


def readings(peer: Peer, ours: Scraping) -> tuple[dict[str, Family], dict[str, Family],
                                                    dict[str, Family]]:
    """The peer's reading, dbgauge's, the peer's again."""
    before = parse(peer.scrape())
    mine = ours()
    return before, mine, parse(peer.scrape())


def _outside(before: Family, mine: Family, after: Family, slack: float) -> list[str]:
    out = []
    for key, first in before.samples.items():
        value, later = mine.samples.get(key), after.samples.get(key)
        if value is None or later is None:
            continue  # series are compared by `compare`
        if not min(first, later) - slack <= value <= max(first, later) + slack:
            out.append(f"{key[0]} = {value}, the peer's {first} then {later} (slack {slack})")
    return out


def _default(name: str) -> bool:
    """A family of the default scrapers' (or the exporter's own) names."""
    try:
        DEFAULT_SCRAPERS.spec(name)
    except KeyError:
        return False
    return True


def differences(before: dict[str, Family], mine: dict[str, Family],
                after: dict[str, Family]) -> dict[str, list[str]]:
    """What differs, by family: the peer's families but NOT_OURS (compared as
    tests/helpers/peers.py does, CONNECTION_GAUGES within their slack), series dbgauge has
    that the peer has not, and families of the peer's names the peer does not have."""
    theirs = {n for n in before if n.startswith("mysql") and n not in NOT_OURS}
    out: dict[str, list[str]] = {}
    for diff in compare(before, mine, after, theirs - {DURATION.name},
                        values=lambda n: n not in NO_VALUES and n not in CONNECTION_GAUGES):
        out.setdefault(diff.family, []).append(str(diff))
    for name, slack in CONNECTION_GAUGES.items():
        if name in before and name in mine and name in after and \
                (found := _outside(before[name], mine[name], after[name], slack)):
            out.setdefault(name, []).extend(found)
    for name in theirs & set(mine):
        extra = set(mine[name].samples) - set(before[name].samples) - \
            set(after.get(name, before[name]).samples)
        if extra and name != DURATION.name:
            out.setdefault(name, []).append(f"series the peer does not have: {sorted(extra)}")
    made_up = {n for n in mine if n.startswith("mysql") and n not in before
               and n not in after and _default(n)} - UPSTREAM_ONLY
    for name in made_up:
        out.setdefault(name, []).append("dbgauge exports it, the peer does not")
    return out


def assert_match(peer: Peer, ours: Scraping) -> tuple[dict[str, Family], dict[str, Family]]:
    """Readings until every family matched in at least one round (ROUNDS at most);
    returns the last peer and dbgauge readings."""
    failing: dict[str, list[str]] | None = None
    for _ in range(ROUNDS):
        before, mine, after = readings(peer, ours)
        found = differences(before, mine, after)
        failing = found if failing is None else {
            n: found[n] for n in failing if n in found}
        if not failing:
            break
    assert not failing, "\n".join(f"{n}: {w}" for n, whats in sorted(failing.items())
                                  for w in whats)
    missing = {n for n in before if n.startswith("mysql") and n not in mine}
    assert missing <= set(NOT_OURS), missing - set(NOT_OURS)
    return before, mine


def assert_exporter_families(before: dict[str, Family], mine: dict[str, Family],
                             ours: Scraping) -> None:
    """mysql_exporter_*: types and labels as the peer's; a duration for the connection
    and for each scraper whose families dbgauge gives; the scrape count dbgauge's own."""
    for name in (DURATION.name, SCRAPES.name, LAST_SCRAPE_ERROR.name):
        assert mine[name].type == before[name].type, name
        assert mine[name].label_names() == before[name].label_names(), name
    covered = {"connection"} | {f"collect.{s}" for ss in SCRAPERS.values() for s in ss}
    theirs = {dict(ls)["collector"] for _, ls in before[DURATION.name].samples} & covered
    assert {dict(ls)["collector"] for _, ls in mine[DURATION.name].samples} >= theirs
    assert next(iter(mine["mysql_exporter_scrapes_total"].samples.values())) == ours.count
    assert next(iter(mine["mysql_exporter_last_scrape_error"].samples.values())) == 0


@pytest.mark.parametrize("scraping", [PRIMARY, REPLICA], indirect=True)
def test_default_collectors_match_mysqld_exporter(sandbox: Sandbox, tmp_path: Path,
                                                  scraping: Scraping) -> None:
    name = scraping.runner.cfg.name
    with mysqld_exporter(sandbox, name, tmp_path) as peer:
        before, mine = assert_match(peer, scraping)
        assert_exporter_families(before, mine, scraping)
    families = {n for n in before if n.startswith("mysql")}
    # what each server shows: the replica's slave status, the primary's plugin histogram
    must = ({"mysql_slave_status_slave_sql_running", "mysql_slave_status_seconds_behind_master"}
            if name == REPLICA else {"mysql_info_schema_query_response_time_seconds"})
    must |= {"mysql_global_status_commands_total", "mysql_global_status_buffer_pool_pages",
             "mysql_info_schema_innodb_cmp_compress_ops_total",
             "mysql_info_schema_innodb_cmpmem_pages_used_total",
             "mysql_global_variables_max_connections", "mysql_version_info",
             "mysql_transaction_isolation", "mysql_galera_variables_info", "mysql_up"}
    assert must <= families, must - families
    extra = {n for n in mine if n.startswith("mysql") and n not in families}
    print(f"\n{name}: {len(families)} peer families, {len(families - set(NOT_OURS))} matched "
          f"by dbgauge, {len(families & set(NOT_OURS))} in NOT_OURS; beside them "
          f"{len(extra & UPSTREAM_ONLY)} of upstream's and {len(extra - UPSTREAM_ONLY)} of "
          "optional scrapers")


@pytest.mark.parametrize("scraping", [REPLICA], indirect=True)
def test_a_stopped_sql_thread_reads_as_the_peer_reads_it(sandbox: Sandbox, tmp_path: Path,
                                                         scraping: Scraping) -> None:
    """Slave_SQL_Running No is 0, and the NULL Seconds_Behind_Master drops that series in
    both (the peer's known gap: dbgauge's own ..._seconds_behind_source_unknown says 1)."""
    run(sandbox, REPLICA, "STOP SLAVE SQL_THREAD")
    try:
        with mysqld_exporter(sandbox, REPLICA, tmp_path) as peer:
            wait_for(lambda: "mysql_slave_status_seconds_behind_master" not in peer.scrape(),
                     what="the peer to drop Seconds_Behind_Master")
            before, mine = assert_match(peer, scraping)
        running = before["mysql_slave_status_slave_sql_running"].samples
        assert set(running.values()) == {0.0}
        assert "mysql_slave_status_seconds_behind_master" not in mine
        assert set(mine["mysql_slave_status_slave_io_running"].samples.values()) == {1.0}
    finally:
        run(sandbox, REPLICA, "START SLAVE SQL_THREAD")
        wait_for(lambda: replicating(sandbox), timeout=30, what="replication to run again")
