"""Type-normalised row text and chunk hashes for `dbgauge checksum` (pure: no I/O).

A chunk checksum is only as good as the text each row is reduced to. Two modes:

- **native** (both sides the same engine family): each column as the engine renders it, so
  a float changed in its last bit, a trailing space in a VARCHAR or one byte of a BLOB shows.
  MySQL family hashes with CRC32 and keeps the count and the XOR of the row hashes, as
  pt-table-checksum does (what the floor query costs: a second aggregate, e.g. the SUM,
  measured 10-20 % slower; a chunk that differs passes unnoticed with odds of 1 in 2^32,
  and bisection names rows with MD5). PostgreSQL, which has no CRC32 in SQL, sums a 60-bit
  prefix of MD5 per row.
- **portable** (MySQL family against PostgreSQL): every type is rendered to one canonical
  text on both sides -- integers, decimals without trailing zeros, floats as their exact
  binary mantissa and exponent, timestamps in UTC with microseconds, booleans as 0/1, binary
  as lower-case hex, text in UTF-8 -- and both sides sum the same 60-bit MD5 prefix.

NULL and '' differ in both modes: NULLs are skipped by CONCAT_WS, so a string of 0/1 flags
(one per nullable column, pt-table-checksum's trick) is appended. Column names come from
the catalog and pass `toolkit.sql.quote_ident`; nothing here ever sees user input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dbgauge.toolkit.sql import quote_ident

MYSQL_FAMILY = frozenset({"mysql", "mariadb"})

# Engine base types (MySQL information_schema DATA_TYPE, PostgreSQL pg_type.typname) by
# comparison category.
_MYSQL_TYPES: dict[str, str] = {
    **dict.fromkeys(("tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year"),
                    "int"),
    **dict.fromkeys(("decimal", "numeric"), "decimal"),
    "float": "float",
    **dict.fromkeys(("double", "real", "double precision"), "double"),
    **dict.fromkeys(("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum",
                     "set", "uuid", "inet4", "inet6"), "string"),
    **dict.fromkeys(("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"),
                    "binary"),
    "date": "date",
    "datetime": "datetime",
    "timestamp": "timestamptz",
    "time": "time",
    "json": "json",
}
_POSTGRES_TYPES: dict[str, str] = {
    **dict.fromkeys(("int2", "int4", "int8", "oid"), "int"),
    "numeric": "decimal",
    "float4": "float",
    "float8": "double",
    "bool": "bool",
    **dict.fromkeys(("text", "varchar", "bpchar", "char", "name", "citext", "uuid", "enum"),
                    "string"),
    "bytea": "binary",
    "date": "date",
    "timestamp": "datetime",
    "timestamptz": "timestamptz",
    "time": "time",
    **dict.fromkeys(("json", "jsonb"), "json"),
}
# Categories that compare across engines; anything else is checked natively only.
PORTABLE = frozenset({"int", "decimal", "float", "double", "bool", "string", "binary", "date",
                      "datetime", "timestamptz", "time"})
# Character sets whose bytes are already UTF-8.
_UTF8 = frozenset({"utf8mb4", "utf8mb3", "utf8", "ascii"})
@dataclass(frozen=True)
class Column:
    """One column as the catalog describes it (types lower-case, engine-specific)."""

    name: str
    data_type: str  # MySQL DATA_TYPE / PostgreSQL typname ('enum' for enum types)
    column_type: str  # MySQL COLUMN_TYPE / PostgreSQL format_type(): for messages
    nullable: bool
    charset: str | None = None  # MySQL character set of text columns

    def category(self, flavor: str) -> str:
        table = _MYSQL_TYPES if flavor in MYSQL_FAMILY else _POSTGRES_TYPES
        if flavor in MYSQL_FAMILY and self.data_type == "tinyint" and \
                self.column_type.startswith("tinyint(1)"):
            return "bool"
        return table.get(self.data_type, "other")


def portable_problem(flavor: str, columns: Sequence[Column]) -> str | None:
    """Why these columns cannot be compared across engines, or None."""
    bad = [f"{c.name} ({c.column_type})" for c in columns if c.category(flavor) not in PORTABLE]
    if bad:
        return ("cannot compare across MySQL and PostgreSQL: column(s) " + ", ".join(bad)
                + " have no common text form; exclude the table or compare same-engine copies")
    return None


def _exact_double(d: str, mysql: bool) -> str:
    """A double as `<integer mantissa>p<binary exponent>`: exact and the same in both
    engines. Their shortest round-trip texts are not: when two shortest candidates tie,
    MariaDB prints 15 digits where PostgreSQL prints 17 (-4.30288257071727e16 against
    -4.3028825707172704e+16, one double). Scaling by powers of two is exact in IEEE
    arithmetic, so m = d * 2^(52 - e), with e = floor(log2 |d|) made exact by one
    correction step (log2 may round across an integer), is an integer below 2^53 for every
    finite double, subnormals too; no intermediate over- or underflows (PostgreSQL
    raises on those), which is why the scaling is split in two."""
    if mysql:
        e0 = f"LEAST(1023, GREATEST(-1074, FLOOR(LOG2(ABS({d})))))"
        e = (f"({e0} - (ABS({d}) < POW(2, {e0}))"
             f" + (ABS({d}) >= POW(2, LEAST({e0} + 1, 1023)) AND {e0} < 1023))")
        m = f"CAST({d} * POW(2, 26 - FLOOR({e} / 2)) * POW(2, 26 - {e} + FLOOR({e} / 2)) AS SIGNED)"
        return f"CASE WHEN {d} = 0 THEN '0' ELSE CONCAT({m}, 'p', {e}) END"
    two = "2::float8"
    e0 = f"least(1023, greatest(-1074, floor(ln(abs({d})) / ln({two}))))"
    e = (f"({e0} - (abs({d}) < power({two}, {e0}))::int"
         f" + (abs({d}) >= power({two}, least({e0} + 1, 1023)) AND {e0} < 1023)::int)")
    m = (f"({d} * power({two}, 26 - floor({e} / 2)) * power({two}, 26 - {e} + floor({e} / 2)))"
         "::bigint")
    return f"CASE WHEN {d} = 0 THEN '0' ELSE {m}::text || 'p' || {e}::text END"


# Canonical text of each category across engines, where it is a plain template; "{q}" is
# the quoted column. MySQL's are run with bound parameters (pyformat): hence '%%'.
_PORTABLE_MYSQL = {
    "binary": "LOWER(HEX({q}))",
    "datetime": "DATE_FORMAT({q}, '%%Y-%%m-%%d %%H:%%i:%%s.%%f')",
    "timestamptz": "DATE_FORMAT({q}, '%%Y-%%m-%%d %%H:%%i:%%s.%%f')",
    "time": "TIME_FORMAT({q}, '%%H:%%i:%%s.%%f')",
}
_PORTABLE_POSTGRES = {
    "decimal": "trim_scale({q})::text",
    "bool": "{q}::int::text",
    "binary": "encode({q}, 'hex')",
    "datetime": "to_char({q}, 'YYYY-MM-DD HH24:MI:SS.US')",
    "timestamptz": "to_char({q}, 'YYYY-MM-DD HH24:MI:SS.US')",
    "time": "to_char({q}, 'HH24:MI:SS.US')",
}


def _mysql_column(flavor: str, col: Column, q: str, portable: bool) -> str:
    cat = col.category(flavor)
    if not portable:
        # MariaDB prints FLOAT with 6 significant digits, losing its last bits; as a DOUBLE
        # every single-precision value prints exactly.
        return f"CAST({q} AS DOUBLE)" if cat == "float" else q
    if cat == "decimal":
        m = re.search(r",\s*(\d+)\s*\)", col.column_type)
        if m and int(m.group(1)) > 0:  # DECIMAL(p,0) has no zeros to trim (100 stays 100)
            return f"TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM {q}))"
        return q
    if cat in ("float", "double"):
        return _exact_double(f"CAST({q} AS DOUBLE)" if cat == "float" else q, mysql=True)
    if cat == "string" and col.charset and col.charset.lower() not in _UTF8:
        return f"CONVERT({q} USING utf8mb4)"
    # int, bool (tinyint(1): 0/1), date and UTF-8 text print canonically as they are
    return _PORTABLE_MYSQL.get(cat, "{q}").format(q=q)


def _postgres_column(col: Column, q: str, portable: bool) -> str:
    cat = col.category("postgres")
    if portable and cat in ("float", "double"):
        return _exact_double(f"{q}::float8", mysql=False)
    # ::text: bpchar loses its padding, as MySQL CHAR does
    return (_PORTABLE_POSTGRES.get(cat, "{q}::text") if portable else "{q}::text").format(q=q)


def row_text(flavor: str, columns: Sequence[Column], portable: bool) -> str:
    """SQL text of one row: columns joined by '#', then the NULL flags of nullable columns."""
    mysql = flavor in MYSQL_FAMILY
    parts: list[str] = []
    flags: list[str] = []
    for col in columns:
        q = quote_ident(col.name, flavor)
        parts.append(_mysql_column(flavor, col, q, portable) if mysql
                     else _postgres_column(col, q, portable))
        if col.nullable:
            flags.append(f"ISNULL({q})" if mysql else f"({q} IS NULL)::int")
    if flags:
        parts.append(f"CONCAT({', '.join(flags)})" if mysql else f"concat({', '.join(flags)})")
    return f"CONCAT_WS('#', {', '.join(parts)})" if mysql else f"concat_ws('#', {', '.join(parts)})"


def column_hashes(flavor: str, columns: Sequence[Column], portable: bool) -> str:
    """Select list of each column's MD5 (`dbgauge_c0`, ...): of the very text `row_text`
    joins, so a row whose hash differs has at least one column whose MD5 does (NULL's is
    NULL)."""
    mysql = flavor in MYSQL_FAMILY
    out: list[str] = []
    for i, col in enumerate(columns):
        q = quote_ident(col.name, flavor)
        text = (_mysql_column(flavor, col, q, portable) if mysql
                else _postgres_column(col, q, portable))
        out.append(f"{'MD5' if mysql else 'md5'}({text}) AS dbgauge_c{i}")
    return ", ".join(out)


def uses_crc32(flavor: str, portable: bool) -> bool:
    """MySQL-family pairs hash chunks with CRC32 (fast); PostgreSQL pairs with
    hashtextextended (the stable 64-bit hash hash partitioning relies on, twice as fast as
    MD5 there); cross-engine pairs with MD5, the one hash both engines compute alike."""
    return flavor in MYSQL_FAMILY and not portable


def chunk_aggregates(flavor: str, row: str, portable: bool) -> str:
    """Select list `cnt, crc` of a chunk: crc is text, equal on both sides iff the rows are."""
    if uses_crc32(flavor, portable):
        return f"COUNT(*) AS cnt, COALESCE(BIT_XOR(CRC32({row})), 0) AS crc"
    if flavor in MYSQL_FAMILY:
        return (f"COUNT(*) AS cnt, CAST(COALESCE(SUM(CAST(CONV(LEFT(MD5({row}), 15), 16, 10) "
                f"AS UNSIGNED)), 0) AS CHAR) AS crc")
    if not portable:  # bytes, not a nondeterministic collation's sort key, are hashed
        return (f"count(*) AS cnt, COALESCE(sum(hashtextextended(({row}) COLLATE \"C\", 0)"
                f"::numeric), 0)::text AS crc")
    return (f"count(*) AS cnt, COALESCE(sum(('x' || left(md5({row}), 15))::bit(60)::bigint), 0)"
            f"::text AS crc")


def row_hash(flavor: str, row: str) -> str:
    """Per-row hash (hex MD5, identical in both engines for identical text)."""
    return f"MD5({row})" if flavor in MYSQL_FAMILY else f"md5({row})"


def select_list(flavor: str, columns: Sequence[Column]) -> str:
    """Columns to fetch as values (repair statements): MySQL FLOATs as exact DOUBLEs."""
    out = []
    for col in columns:
        q = quote_ident(col.name, flavor)
        if flavor in MYSQL_FAMILY and col.category(flavor) == "float":
            out.append(f"CAST({q} AS DOUBLE) AS {q}")
        else:
            out.append(q)
    return ", ".join(out)
