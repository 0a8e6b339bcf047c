"""Type-normalised checksum expressions and their composition (pure; the same expressions
are run against the real servers in tests/integration/test_drift_*.py)."""

from __future__ import annotations

import pytest

from dbgauge.checks.drift.chunks import KeyRange
from dbgauge.checks.drift.normalize import (
    Column,
    chunk_aggregates,
    portable_problem,
    row_hash,
    row_text,
    select_list,
)
from dbgauge.checks.drift.sql import TableQueries, compose
from dbgauge.toolkit.errors import DbgaugeError


def col(name: str, data_type: str, column_type: str | None = None, nullable: bool = False,
        charset: str | None = None) -> Column:
    return Column(name, data_type, column_type or data_type, nullable, charset)


@pytest.mark.parametrize(("flavor", "column", "category"), [
    ("mariadb", col("a", "tinyint", "tinyint(1)"), "bool"),
    ("mariadb", col("a", "tinyint", "tinyint(4)"), "int"),
    ("mysql", col("a", "timestamp"), "timestamptz"),
    ("mysql", col("a", "datetime"), "datetime"),
    ("mysql", col("a", "longblob"), "binary"),
    ("mysql", col("a", "geometry"), "other"),
    ("postgres", col("a", "timestamptz"), "timestamptz"),
    ("postgres", col("a", "bpchar"), "string"),
    ("postgres", col("a", "enum"), "string"),
    ("postgres", col("a", "jsonb"), "json"),
    ("postgres", col("a", "float4"), "float"),
])
def test_categories(flavor: str, column: Column, category: str) -> None:
    assert column.category(flavor) == category


def test_native_row_text_keeps_values_and_flags_nulls() -> None:
    columns = [col("id", "int"), col("name", "varchar", nullable=True),
               col("f", "float", nullable=True)]
    assert row_text("mariadb", columns, False) == (
        "CONCAT_WS('#', `id`, `name`, CAST(`f` AS DOUBLE), CONCAT(ISNULL(`name`), ISNULL(`f`)))")
    assert row_text("postgres", [col("id", "int4"), col("name", "text", nullable=True)],
                    False) == (
        'concat_ws(\'#\', "id"::text, "name"::text, concat(("name" IS NULL)::int))')


def test_portable_row_text_renders_one_canonical_form() -> None:
    mysql = row_text("mariadb", [col("amount", "decimal", "decimal(10,2)"),
                                 col("whole", "decimal", "decimal(10,0)"),
                                 col("seen", "timestamp"), col("b", "blob"),
                                 col("l1", "varchar", charset="latin1")], True)
    assert "TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM `amount`))" in mysql
    assert ", `whole`," in mysql  # no decimals: nothing to trim (100 stays 100)
    assert "DATE_FORMAT(`seen`, '%%Y-%%m-%%d %%H:%%i:%%s.%%f')" in mysql  # run with params
    assert "LOWER(HEX(`b`))" in mysql and "CONVERT(`l1` USING utf8mb4)" in mysql
    pg = row_text("postgres", [col("amount", "numeric"), col("flag", "bool"),
                               col("b", "bytea")], True)
    assert 'trim_scale("amount")::text' in pg and '"flag"::int::text' in pg
    assert "encode(\"b\", 'hex')" in pg


def test_floats_compare_as_exact_mantissa_and_exponent_across_engines() -> None:
    mysql = row_text("mariadb", [col("d", "double")], True)
    pg = row_text("postgres", [col("d", "float8")], True)
    assert "LOG2(ABS(`d`))" in mysql and "'p'" in mysql and "AS SIGNED" in mysql
    assert "ln(abs(\"d\"::float8))" in pg and "::bigint" in pg


def test_portable_problem_names_the_columns() -> None:
    assert portable_problem("postgres", [col("id", "int4"), col("doc", "jsonb")]) is not None
    assert "doc (jsonb)" in (portable_problem("postgres", [col("doc", "jsonb")]) or "")
    assert portable_problem("mysql", [col("id", "int"), col("t", "text")]) is None


def test_hash_functions_by_pair() -> None:
    assert chunk_aggregates("mariadb", "r", False) == \
        "COUNT(*) AS cnt, COALESCE(BIT_XOR(CRC32(r)), 0) AS crc"
    assert "MD5(r)" in chunk_aggregates("mariadb", "r", True)  # across engines: MD5 sums
    # PostgreSQL pairs: the stable 64-bit text hash, over bytes whatever the collation
    assert 'hashtextextended((r) COLLATE "C", 0)' in chunk_aggregates("postgres", "r", False)
    assert "md5(r)" in chunk_aggregates("postgres", "r", True)  # against MySQL: MD5 sums
    assert row_hash("mysql", "r") == "MD5(r)" and row_hash("postgres", "r") == "md5(r)"
    assert select_list("mysql", [col("f", "float"), col("i", "int")]) == \
        "CAST(`f` AS DOUBLE) AS `f`, `i`"


def _queries(flavor: str = "mariadb", key: tuple[str, ...] = ("id",)) -> TableQueries:
    return TableQueries(flavor, (10, 11), "app", "t", (col("id", "int"), col("v", "int")),
                        key, "PRIMARY" if flavor != "postgres" else None, False)


def test_table_queries_bind_values_and_quote_names() -> None:
    q = _queries()
    sql, params = q.chunk(KeyRange((10,), (20,)))
    assert sql == ("SELECT COUNT(*) AS cnt, COALESCE(BIT_XOR(CRC32(CONCAT_WS('#', `id`, `v`))), "
                   "0) AS crc FROM `app`.`t` FORCE INDEX (`PRIMARY`) WHERE (`id` > %s) AND "
                   "(`id` <= %s)")
    assert params == (10, 20)
    sql, params = q.next_boundary((5,), 999)
    assert sql.endswith("ORDER BY `id` LIMIT 1 OFFSET %s") and params == (5, 999)
    sql, params = q.replicate_chunk(KeyRange(None, (7,)), 3, None, "[7]")
    assert sql.startswith("REPLACE INTO dbgauge.checksums")
    assert params == ("app", "t", 3, "PRIMARY", None, "[7]", 7)
    sql, params = _queries("postgres").split_points(KeyRange(), 50)
    assert "FORCE INDEX" not in sql and 'FROM "app"."t"' in sql and params == (50,)


@pytest.mark.parametrize("flavor", ["mariadb", "postgres"])
def test_chunk_buckets_read_each_bucket_as_a_range_joined_by_union_all(flavor: str) -> None:
    """One statement: a range read per bucket (bucket id, then its bounds), and the open ends
    grouped by `key DIV width` (width, then the bound); every value bound, no comment left."""
    sql, params = _queries(flavor).chunk_buckets(KeyRange(None, (25000,)), 10000, (1, 30000))
    parts = sql.split(" UNION ALL ")
    assert len(parts) == 4 and "--" not in sql and "\n" not in sql
    assert "GROUP BY" in parts[0] and "GROUP BY" not in " ".join(parts[1:])
    assert sql.count("%s") == len(params)
    # below bucket 0 (keys <= -10000), then buckets 0, 1 and 2 (up to the range's 25000)
    assert params == (10000, -10000, 0, -10000, 9999, 1, 9999, 19999, 2, 19999, 25000)


def test_names_outside_the_safe_set_are_refused() -> None:
    with pytest.raises(DbgaugeError, match="not allowed"):
        TableQueries("mysql", (8, 0), "app", "t; DROP", (col("id", "int"),), ("id",), None,
                     False).chunk(KeyRange())


def test_compose_rejects_unfilled_placeholders() -> None:
    with pytest.raises(DbgaugeError, match="unfilled placeholder"):
        compose("mysql", (8, 0), "checksum_chunk", {"aggregates": "1"})
