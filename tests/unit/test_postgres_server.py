"""postgres_server on rows captured from the sandbox's PostgreSQL 15: sizes, wraparound ages,
the freeze limits, and NULLs."""

from __future__ import annotations

from dbgauge.app import registry
from dbgauge.collectors.postgres_server import parse_server
from tests.helpers import as_dict, value
from tests.helpers.captured import json_rows

REGISTRY = registry()
P = "dbgauge_postgres_"
# captured from the sandbox's PostgreSQL 15 by capture_coverage.py (in that fixture folder)
CAPTURED, PG15 = "postgres-15/coverage-", "PostgreSQL 15"


def test_server_rows() -> None:
    facts = parse_server(json_rows(CAPTURED + "server_databases.json", PG15),
                         json_rows(CAPTURED + "server_info.json", PG15)[0])
    m = as_dict("postgres_server", REGISTRY["postgres_server"].samples(facts))
    assert (value(m, P + "database_size_bytes", database="app") or 0) > 1_000_000
    assert value(m, P + "database_size_bytes", database="template0") is None  # no connections
    assert value(m, P + "database_xid_age", database="template0") is not None
    assert value(m, P + "autovacuum_freeze_max_age") == 200_000_000
    assert (value(m, P + "start_time_seconds") or 0) > 1.7e9


def test_server_nulls_give_no_samples() -> None:
    facts = parse_server([{"datname": "gone", "size_bytes": None, "xid_age": None,
                           "mxid_age": None}], {"start_time": None})
    assert list(REGISTRY["postgres_server"].samples(facts)) == []
