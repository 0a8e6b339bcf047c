"""The captured MySQL/MariaDB fixtures name their provenance, and the loaders in
tests/helpers/captured.py read each client format."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.captured import (
    FIXTURES,
    MYSQL_FIXTURES,
    load,
    selected_columns,
    table_rows,
    tsv_rows,
    vertical_rows,
)


@pytest.mark.parametrize("path", MYSQL_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_names_its_server_and_statement(path: Path) -> None:
    header, text = load(str(path.relative_to(FIXTURES)))
    assert any(h.startswith("Server:") for h in header), f"{path}: no '# Server:' line"
    assert any(h.startswith("Statement:") for h in header), f"{path}: no '# Statement:' line"
    assert text.strip(), f"{path}: empty body"


def test_loaders_read_each_client_format() -> None:
    assert len(MYSQL_FIXTURES) >= 12
    replica = table_rows("mysql-8.0/show_replica_status.txt")
    assert [r["Channel_Name"] for r in replica] == ["master1", "master2"]
    assert replica[0]["SQL_Remaining_Delay"] is None
    slaves = vertical_rows("mariadb-10.11/show_all_slaves_status.txt")
    assert len(slaves) == 1 and slaves[0]["Connection_name"] == ""
    metrics = tsv_rows("mariadb-10.11/innodb_metrics.tsv")
    assert {"name", "type", "count", "comment", "enabled"} <= set(metrics[0])
    assert selected_columns("SELECT DISTINCT a AS b, c\nFROM t") == [("a", "b"), ("c", "c")]
