"""postgres_settings: the unit parser, setting values in base units, rows captured from the
sandbox's PostgreSQL 15, and the documented allow-list."""

from __future__ import annotations

import re

import pytest

from dbgauge.app import registry
from dbgauge.collectors.postgres_settings import (
    SETTINGS,
    PgSettingsFacts,
    parse_settings,
    parse_unit,
    setting_value,
)
from tests.helpers import REPO, as_dict, value
from tests.helpers.captured import json_rows

REGISTRY = registry()
P = "dbgauge_postgres_"
# captured from the sandbox's PostgreSQL 15 by capture_coverage.py (in that fixture folder)
CAPTURED, PG15 = "postgres-15/coverage-", "PostgreSQL 15"


@pytest.mark.parametrize(("unit", "expected"), [
    (None, (1.0, "")), ("", (1.0, "")), ("B", (1.0, "bytes")), ("kB", (1024.0, "bytes")),
    ("8kB", (8192.0, "bytes")), ("MB", (1048576.0, "bytes")), ("16MB", (16777216.0, "bytes")),
    ("GB", (1024.0 ** 3, "bytes")), ("us", (1e-6, "seconds")), ("ms", (0.001, "seconds")),
    ("s", (1.0, "seconds")), ("min", (60.0, "seconds")), ("h", (3600.0, "seconds")),
    ("d", (86400.0, "seconds")), ("furlong", None), ("8 parsecs", None),
])
def test_parse_unit(unit: str | None, expected: tuple[float, str] | None) -> None:
    assert parse_unit(unit) == expected


@pytest.mark.parametrize(("setting", "vartype", "unit", "expected"), [
    ("4096", "integer", "8kB", (33554432.0, "bytes")),  # shared_buffers 32MB
    ("4096", "integer", "kB", (4194304.0, "bytes")),  # work_mem 4MB
    ("1024", "integer", "MB", (1073741824.0, "bytes")),  # max_wal_size 1GB
    ("300", "integer", "s", (300.0, "seconds")),  # checkpoint_timeout
    ("1000", "integer", "ms", (1.0, "seconds")),  # deadlock_timeout
    ("2", "real", "ms", (0.002, "seconds")),  # autovacuum_vacuum_cost_delay
    ("1", "integer", "min", (60.0, "seconds")),
    ("-1", "integer", "kB", (-1.0, "bytes")),  # autovacuum_work_mem: use maintenance_work_mem
    ("-1", "integer", "ms", (-1.0, "seconds")),  # log_min_duration_statement: off
    ("0.9", "real", None, (0.9, "")), ("50", "integer", None, (50.0, "")),
    ("on", "bool", None, (1.0, "")), ("off", "bool", None, (0.0, "")),
    ("replica", "enum", None, None), ("x", "string", None, None),
    ("", "integer", None, None), ("maybe", "bool", None, None),
    ("12", "integer", "furlong", None),
])
def test_setting_value(setting: str, vartype: str, unit: str | None,
                       expected: tuple[float, str] | None) -> None:
    assert setting_value(setting, vartype, unit) == expected


def test_settings_rows_become_base_unit_families() -> None:
    facts = PgSettingsFacts(parse_settings(json_rows(CAPTURED + "settings.json", PG15)))
    samples = list(REGISTRY["postgres_settings"].samples(facts))
    m = as_dict("postgres_settings", samples)
    assert value(m, P + "settings_shared_buffers_bytes") == 32 * 1024 ** 2
    assert value(m, P + "settings_checkpoint_timeout_seconds") == 300
    assert value(m, P + "settings_autovacuum") == 1
    assert value(m, P + "settings_max_connections") == 50
    spec = next(s.spec for s in samples if s.name == P + "settings_work_mem_bytes")
    assert spec is not None and spec.type == "gauge"
    assert spec.help == ("Server setting work_mem (pg_settings; converted from kB to bytes; "
                         "-1 kept as PostgreSQL's 'disabled' marker).")
    # the captured settings are exactly the allow-listed ones PostgreSQL 15 has
    assert {r["name"] for r in json_rows(CAPTURED + "settings.json", PG15)} <= set(SETTINGS)
    assert len(samples) == len(json_rows(CAPTURED + "settings.json", PG15))


def test_the_allow_list_is_documented() -> None:
    text = (REPO / "docs" / "postgres.md").read_text()
    block = text.split("<!-- settings allow-list -->", 1)[1].split("<!--", 1)[0]
    assert re.findall(r"`([a-z_]+)`", block) == list(SETTINGS)


def test_a_setting_named_like_a_summary_part_gets_value_appended() -> None:
    from dbgauge.collectors.postgres_settings import Setting, setting_spec

    spec = setting_spec(Setting("tcp_keepalives_count", 9, "", "", "integer", 9))
    assert spec.name == P + "settings_tcp_keepalives_count_value"
    assert setting_spec(Setting("commit_siblings", 5, "", "", "integer", 5)).name \
        == P + "settings_commit_siblings"
    # PostgreSQL 17's wal_summary_keep_time: promtool's lint refuses a metric type as a
    # word of a name ("should not include type 'summary'"); summarize_wal is no such word
    spec = setting_spec(Setting("wal_summary_keep_time", 36000.0, "seconds", "min",
                                "integer", 600))
    assert spec.name == P + "settings_wal_summaries_keep_time_seconds"
    assert "wal_summary_keep_time" in spec.help
    assert setting_spec(Setting("summarize_wal", 0, "", "", "bool", 0)).name \
        == P + "settings_summarize_wal"


def test_every_setting_by_default_and_curated_keeps_the_allow_list() -> None:
    from dbgauge.collectors.postgres_settings import SETTINGS
    from tests.helpers.captured import Answers

    rows = json_rows("postgres-15/compat-settings-primary.json", PG15)
    collector = REGISTRY["postgres_settings"]
    every = collector.read(Answers({"settings": rows}))  # type: ignore[arg-type]
    assert len(every.settings) == len(rows) > 240
    curated = collector.configured({"settings": "curated"}).read(
        Answers({"settings": rows}))  # type: ignore[arg-type]
    assert {s.name for s in curated.settings} == {r["name"] for r in rows} & set(SETTINGS)
    with pytest.raises(ValueError, match="use one of all, curated"):
        collector.check_options({"settings": "some"})
