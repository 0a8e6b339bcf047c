"""mysqld_exporter's perf_schema.eventsstatementssum against Debian's mysqld_exporter 0.14
itself, on mariadb-primary, beside `dbgauge collect --compat mysqld_exporter` with
mysql_statement_totals, both as the monitoring user.

Every statement on the server (the exporters' own included) adds to these sums, so each
value must lie between two peer readings taken around dbgauge's; a family fails only if it
fails in each of three rounds (a digest evicted between readings could lower a sum). A few
statements with errors, warnings, sorts and temporary tables come first so that no family
is compared at 0 alone. promtool finds nothing in dbgauge's output of these families that it
does not find in the peer's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.daemon import collect_text, one_target_config
from tests.helpers.peers import compare_rounds, mysqld_exporter
from tests.helpers.servers import Sandbox, run
from tests.integration.test_compat_promtool import _lint, _only

pytestmark = pytest.mark.integration

OFF = ("--no-collect.global_status", "--no-collect.global_variables",
       "--no-collect.slave_status", "--no-collect.info_schema.query_response_time",
       "--no-collect.info_schema.innodb_cmp", "--no-collect.info_schema.innodb_cmpmem")
P = "mysql_perf_schema_events_statements_sum_"
WORKLOAD = (
    "SELECT seq FROM seq_1_to_50 ORDER BY seq DESC",
    "SELECT seq % 7, COUNT(*) FROM seq_1_to_300 GROUP BY 1 ORDER BY 2",
    "SELECT CAST('x1' AS INT)",  # a warning
)


def _collect(sandbox: Sandbox, path: Path) -> str:
    return collect_text(one_target_config(
        sandbox, path, "mariadb-primary", collectors=["mysql_statement_totals"],
        compat=["mysqld_exporter"]), "mariadb-primary")


def test_every_statements_sum_family_matches_the_peer(sandbox: Sandbox, tmp_path: Path) -> None:
    run(sandbox, "mariadb-primary", *WORKLOAD)
    with mysqld_exporter(sandbox, "mariadb-primary", tmp_path,
                         ("--collect.perf_schema.eventsstatementssum", *OFF)) as peer:
        got = compare_rounds(
            peer.scrape, lambda: _collect(sandbox, tmp_path / "dbgauge.yaml"),
            lambda before, after: {n for n in before if n.startswith(P)} & set(after))
    assert not got.failing, got.report()
    theirs, before, our_text, text = got.theirs, got.before, got.our_text, got.peer_text
    assert len(theirs) == 21, sorted(theirs)
    for family in ("total", "timer_wait", "lock_time", "sort_rows", "warnings",
                   "created_tmp_tables"):
        assert before[P + family].samples[(P + family, frozenset())] > 0, family
    assert before[P + "timer_wait"].type == "counter"
    extra = _lint(_only(our_text, theirs)) - _lint(_only(text, theirs))
    assert not extra, sorted(extra)
