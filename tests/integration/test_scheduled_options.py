"""The daemon's `checks:` entries with `options:` judge the sandbox as `dbgauge check`
does with the same options on its command line: each entry below is run as the daemon
runs it (its job, from the config), and its state per target is the command's, in OK
and in alerting states."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbgauge.app import check_jobs, load_config
from tests.helpers.daemon import Outcome, cfg, check, target_entry
from tests.helpers.servers import Sandbox, pg_admin

pytestmark = pytest.mark.integration

TABLE = "sched_opts_big"
TARGETS = ("pg-primary", "pgbouncer", "mariadb-primary")


@pytest.fixture(scope="module")
def big_table(sandbox: Sandbox) -> Iterator[int]:
    """A table on pg-primary's app database; its size in bytes."""
    with pg_admin(sandbox, "pg-primary") as conn:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")
        conn.execute(f"CREATE TABLE {TABLE} AS SELECT g AS id, repeat('x', 200) AS v "  # noqa: S608
                     "FROM generate_series(1, 2000) g")
        size = conn.execute("SELECT pg_table_size(%s)", (TABLE,)).fetchone()
        assert size is not None
        try:
            yield int(size[0])
        finally:
            conn.execute(f"DROP TABLE IF EXISTS {TABLE}")


# (entry, the same on the command line, the state both must give)
def _cases(size: int, major: str) -> list[tuple[dict[str, Any], list[str], int]]:
    pg, bouncer, maria = (["--target", t] for t in TARGETS)
    return [
        # half and four times its size: its free space map may come meanwhile
        ({"check": "table-size", "targets": ["pg-primary"], "warning": size // 2,
          "options": {"include": [TABLE]}},
         [*pg, "--include", TABLE, "-w", str(size // 2)], 1),
        ({"check": "table-size", "targets": ["pg-primary"], "warning": size * 4,
          "options": {"include": TABLE}},
         [*pg, "--include", TABLE, "-w", str(size * 4)], 0),
        ({"check": "table-size", "targets": ["pg-primary"], "critical": 1,
          "options": {"include": TABLE, "exclude": f"{TABLE},pg_catalog."}},
         [*pg, "--include", TABLE, "--exclude", f"{TABLE},pg_catalog.", "-c", "1"], 2),
        ({"check": "custom-query", "targets": ["pg-primary"], "warning": 3, "critical": 10,
          "options": {"query": "SELECT 5 AS result", "valtype": "integer"}},
         [*pg, "-q", "SELECT 5 AS result", "--valtype", "integer", "-w", "3", "-c", "10"], 1),
        ({"check": "custom-query", "targets": ["mariadb-primary"], "warning": 3,
          "options": {"query": "SELECT 5 AS result", "reverse": True}},
         [*maria, "-q", "SELECT 5 AS result", "--reverse", "-w", "3"], 0),
        ({"check": "pgbouncer-pool", "targets": ["pgbouncer"], "critical": 0,
          "options": {"stat": "sv_login"}},
         [*bouncer, "--stat", "sv_login", "-c", "0"], 0),
        ({"check": "pgbouncer-pool", "targets": ["pgbouncer"], "warning": 0,
          "options": {"stat": "cl_active", "include": ["nosuchdb"]}},
         [*bouncer, "--stat", "cl_active", "--include", "nosuchdb", "-w", "0"], 3),
        ({"check": "lock-count", "targets": ["pg-primary"], "critical": "total=1"},
         [*pg, "-c", "total=1"], 2),
        ({"check": "version", "targets": ["pg-primary"], "critical": major},
         [*pg, "-c", major], 0),
        ({"check": "version", "targets": ["pg-primary"], "critical": "9.6"},
         [*pg, "-c", "9.6"], 2),
        ({"check": "connection", "targets": ["pg-primary"],
          "options": {"query": "SELECT 7", "query-warning": 5, "queryname": "seven"}},
         [*pg, "-q", "SELECT 7", "-W", "5", "--queryname", "seven"], 1),
        ({"check": "sequence", "targets": ["pg-primary"], "options": {"dbname": ["app"]}},
         [*pg, "--dbname", "app"], 0),
    ]


def test_entries_with_options_judge_as_the_command_line_does(
        sandbox: Sandbox, big_table: int, tmp_path: Path) -> None:
    with pg_admin(sandbox, "pg-primary") as conn:
        row = conn.execute("SHOW server_version").fetchone()
    assert row is not None
    major = str(row[0]).split(".")[0]
    cases = _cases(big_table, major)
    config = tmp_path / "dbgauge.yaml"
    config.write_text(yaml.safe_dump({
        "targets": [target_entry(sandbox, name) for name in TARGETS],
        "checks": [entry for entry, _, _ in cases]}))
    jobs = check_jobs(load_config(config))
    seen = []
    for job, (entry, args, state) in zip(jobs, cases, strict=True):
        statuses = {s.labels["target"]: s.value for s in job.run()
                    if s.name == "dbgauge_check_status"}
        command: Outcome = check(entry["check"], *cfg(sandbox), *args)
        seen.append((entry["check"], statuses, command.code, command.first))
        assert command.code == state, (entry, command.out, command.err)
        assert max(statuses.values()) == state, (entry, statuses, command.first)
    statuses_of = {e["check"]: statuses for (e, _, _), (_, statuses, _, _) in zip(
        cases, seen, strict=True)}
    # --dbname's node per database, named as the command line names it
    assert set(statuses_of["sequence"]) == {"pg-primary/app"}, seen
