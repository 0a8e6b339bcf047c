"""The upstream mixins' alerts, recording rules and dashboards work unchanged on dbgauge.

Two real Prometheus servers (Debian's 2.x) scrape the same sandbox servers, every second:
one scrapes the peers (Debian's mysqld_exporter 0.14 and postgres_exporter 0.11), the other
scrapes `dbgauge serve --compat mysqld_exporter,postgres_exporter` through /probe, relabelled
as docs/compat.md documents. Every query of mysqld-mixin and postgres_mixin
(tests/fixtures/mixins, with their source and commit) is evaluated on both: a query that
returns data on the peer must return data on dbgauge, and every metric a query names that the
peer has, dbgauge has. (A query that is empty on the peer too -- an alert whose condition does
not hold, a family of a collector the peer does not run by default -- proves nothing here;
the per-dialect tests compare families and values.)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import wait_for
from tests.helpers.daemon import Daemon, config_file
from tests.helpers.mixins import MIXINS, Query, queries, rule_files
from tests.helpers.peers import mysqld_exporter, postgres_exporter
from tests.helpers.prometheus import Prometheus, prometheus
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

MYSQL = ("mariadb-primary", "mariadb-replica")
POSTGRES = ("pg-primary", "pg-standby")
TIMING = {"scrape_interval": "1s", "scrape_timeout": "1s"}
# Queries (by mixin and source) that return data on the peer and not yet on dbgauge, and why.
KNOWN_GAPS: dict[str, str] = {}


def _static_job(name: str, targets: list[str]) -> dict[str, Any]:
    return {"job_name": name, **TIMING, "static_configs": [{"targets": targets}]}


def _probe_job(name: str, targets: tuple[str, ...], daemon: Daemon) -> dict[str, Any]:
    return {"job_name": name, **TIMING, "metrics_path": "/probe",
            "static_configs": [{"targets": list(targets)}],
            "relabel_configs": [
                {"source_labels": ["__address__"], "target_label": "__param_target"},
                {"source_labels": ["__param_target"], "target_label": "instance"},
                {"target_label": "__address__", "replacement": f"127.0.0.1:{daemon.port}"}]}


def _config(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    rules = [str(p) for p in rule_files("mysqld-mixin")]
    return {"global": {"evaluation_interval": "1s", **TIMING}, "rule_files": rules,
            "scrape_configs": jobs}


def _scraped(prom: Prometheus, jobs: int) -> bool:
    """Every target of every job has been scraped at least five times, up."""
    counts = prom.query("count_over_time(up[1m])")
    ups = prom.query("up")
    return (len({dict(k)["job"] for k in counts}) == jobs and len(counts) == len(ups)
            and all(v >= 5 for v in counts.values()) and all(v == 1 for v in ups.values()))


@pytest.fixture(scope="module")
def servers(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Prometheus, Prometheus]]:
    d = tmp_path_factory.mktemp("mixins")
    with ExitStack() as stack:
        mysql = [stack.enter_context(mysqld_exporter(
            sandbox, name, d, ["--collect.info_schema.processlist"])) for name in MYSQL]
        pg = [stack.enter_context(postgres_exporter(sandbox, name)) for name in POSTGRES]
        daemon = Daemon(config_file(sandbox, d / "dbgauge.yaml",
                                    compat=["mysqld_exporter", "postgres_exporter"]),
                        d / "serve.log")
        stack.callback(daemon.stop)
        peer = stack.enter_context(prometheus(d / "peer", _config([
            _static_job("mysql", [f"127.0.0.1:{p.port}" for p in mysql]),
            _static_job("postgres", [f"127.0.0.1:{p.port}" for p in pg])])))
        ours = stack.enter_context(prometheus(d / "ours", _config([
            _probe_job("mysql", MYSQL, daemon), _probe_job("postgres", POSTGRES, daemon)])))
        for prom in (peer, ours):
            wait_for(lambda prom=prom: _scraped(prom, 2), timeout=60,  # type: ignore[misc]
                     what=f"{prom.url} to scrape every target five times")
        yield peer, ours


def _key(query: Query) -> str:
    return f"{query.mixin}: {query.source}"


@pytest.mark.parametrize("mixin", ["mysqld-mixin", "postgres_mixin"])
def test_every_query_with_data_on_the_peer_has_data_on_dbgauge(
        servers: tuple[Prometheus, Prometheus], mixin: str) -> None:
    peer, ours = servers
    checked, gaps = 0, {}
    for query in queries(mixin):
        if not peer.query(query.expr):
            continue
        checked += 1
        if not ours.query(query.expr):
            gaps[_key(query)] = query.expr
    expected = {k for k in KNOWN_GAPS if k.startswith(mixin)}
    assert checked >= 10, f"only {checked} of {mixin}'s queries have data on the peer"
    assert set(gaps) == expected, (
        f"{len(gaps)} of {checked} queries with data on the peer have none on dbgauge:\n"
        + "\n".join(f"  {k}: {v}" for k, v in sorted(gaps.items())))


@pytest.mark.parametrize("mixin", ["mysqld-mixin", "postgres_mixin"])
def test_every_metric_the_mixin_names_that_the_peer_has_dbgauge_has(
        servers: tuple[Prometheus, Prometheus], mixin: str) -> None:
    peer, ours = servers
    names = sorted(set().union(*(q.metrics() for q in queries(mixin))))
    on_peer = [n for n in names if peer.query(f'count({{__name__="{n}"}})')]
    missing = [n for n in on_peer if not ours.query(f'count({{__name__="{n}"}})')]
    assert len(on_peer) >= 10
    assert not missing, f"{len(missing)} of {len(on_peer)} metrics: {missing}"


def test_the_fixtures_say_where_they_came_from() -> None:
    provenance = (MIXINS / "PROVENANCE.md").read_text()
    for mixin in ("mysqld-mixin", "postgres_mixin"):
        assert mixin in provenance
        assert queries(mixin), mixin
    assert Path(MIXINS / "postgres_mixin" / "alerts.json").exists()
