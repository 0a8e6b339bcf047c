"""mysqld_exporter's perf_schema.memory_events against Debian's mysqld_exporter 0.14 itself,
on mariadb-primary (MariaDB 10.5+ has performance_schema's memory instruments, as MySQL 8
does), beside `dbgauge collect --compat mysqld_exporter` with mysql_perf_schema_memory.

Every family the peer exports must match: name, type, labels and every series; the byte
counters each between two peer readings. Bytes in use move both ways with every
connection, the scrapes' own included, so that gauge is compared by series, and dbgauge's
own reading is checked instead: in use = allocated - freed, per instrument. A family fails
only if it fails in each of three rounds. promtool finds nothing in dbgauge's output of
these families that it does not find in the peer's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.daemon import collect_text, one_target_config
from tests.helpers.peers import compare_rounds, mysqld_exporter
from tests.helpers.servers import Sandbox
from tests.integration.test_compat_promtool import _lint, _only

pytestmark = pytest.mark.integration

OFF = ("--no-collect.global_status", "--no-collect.global_variables",
       "--no-collect.slave_status", "--no-collect.info_schema.query_response_time",
       "--no-collect.info_schema.innodb_cmp", "--no-collect.info_schema.innodb_cmpmem")
P = "mysql_perf_schema_memory_events_"


def _collect(sandbox: Sandbox, path: Path) -> str:
    return collect_text(one_target_config(
        sandbox, path, "mariadb-primary", collectors=["mysql_perf_schema_memory"],
        compat=["mysqld_exporter"],
        collector_options={"mysql_perf_schema_memory": {"limit": 100_000}}), "mariadb-primary")


def test_every_memory_events_family_matches_the_peer(sandbox: Sandbox, tmp_path: Path) -> None:
    with mysqld_exporter(sandbox, "mariadb-primary", tmp_path,
                         ("--collect.perf_schema.memory_events", *OFF)) as peer:
        got = compare_rounds(
            peer.scrape, lambda: _collect(sandbox, tmp_path / "dbgauge.yaml"),
            lambda before, after: {n for n in before if n.startswith(P)} & set(after),
            values=lambda family: family != P + "used_bytes")
    assert not got.failing, got.report()
    theirs, ours, our_text, text = got.theirs, got.ours, got.our_text, got.peer_text
    assert theirs == {P + "alloc_bytes_total", P + "free_bytes_total", P + "used_bytes"}
    alloc = ours[P + "alloc_bytes_total"].samples
    assert len(alloc) >= 50  # the server's instruments, not a handful
    for (_, labels), allocated in alloc.items():
        freed = ours[P + "free_bytes_total"].samples[(P + "free_bytes_total", labels)]
        used = ours[P + "used_bytes"].samples[(P + "used_bytes", labels)]
        assert used == allocated - freed, (dict(labels), allocated, freed, used)
    assert not any(dict(k)["event_name"].startswith("memory/") for _, k in alloc)
    extra = _lint(_only(our_text, theirs)) - _lint(_only(text, theirs))
    assert not extra, sorted(extra)
