"""The one place where `dbgauge checksum` composes per-table statements (pure: no I/O
besides reading the templates).

Templates live in `sql/<flavor>/checksum_*.sql` with `{placeholders}`; they are filled here
only with identifiers that came from the catalog and passed `toolkit.sql.quote_ident`, and
with SQL fragments built from them by `checks.drift.normalize` and `checks.drift.chunks`.
Every value -- key bounds, key lists, limits -- stays a bound `%s` parameter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dbgauge.checks.drift.chunks import (
    Bound,
    KeyRange,
    Span,
    bucket_pieces,
    keys_predicate,
    range_predicate,
)
from dbgauge.checks.drift.normalize import (
    MYSQL_FAMILY,
    Column,
    chunk_aggregates,
    column_hashes,
    row_hash,
    row_text,
    select_list,
)
from dbgauge.toolkit.db.version import Version
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.sql import load_sql, quote_ident

Statement = tuple[str, tuple[Any, ...]]
_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def compose(flavor: str, version: Version, name: str, parts: Mapping[str, str]) -> str:
    """Template `name` for this server with its `{part}`s filled in."""
    text = load_sql(flavor, name, version)
    for key, value in parts.items():
        text = text.replace("{" + key + "}", value)
    left = _PLACEHOLDER.search(text)
    if left:
        raise DbgaugeError(f"SQL template {name} has an unfilled placeholder {left.group(0)}")
    return text


def _one_line(sql: str) -> str:
    """A composed statement on one line, to join with others (`load_sql` has already
    dropped the template's comment lines)."""
    return sql.replace("\n", " ")


@dataclass(frozen=True)
class TableQueries:
    """Every statement one side runs for one table.

    `columns` are this side's columns in the source's order (so both sides build the same
    row text); `key` the key column names; `index` the index to force (MySQL family).
    """

    flavor: str
    version: Version
    schema: str
    table: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    index: str | None
    portable: bool

    @property
    def mysql(self) -> bool:
        return self.flavor in MYSQL_FAMILY

    @cached_property
    def _parts(self) -> dict[str, str]:
        """The templates' named parts, built once per table and side (a chunk's bucket
        statement fills its templates once per bucket)."""
        q = self._quoted_keys
        row = row_text(self.flavor, self.columns, self.portable)
        hint = ""
        if self.mysql and self.index:
            hint = f"FORCE INDEX ({quote_ident(self.index, self.flavor)})"
        return {
            "table": f"{quote_ident(self.schema, self.flavor)}."
                     f"{quote_ident(self.table, self.flavor)}",
            "index_hint": hint,
            "keys": ", ".join(q),
            "aggregates": chunk_aggregates(self.flavor, row, self.portable),
            "row_hash": row_hash(self.flavor, row),
            "columns": select_list(self.flavor, self.columns),
        }

    @cached_property
    def _quoted_keys(self) -> list[str]:
        return [quote_ident(k, self.flavor) for k in self.key]

    def _with_where(self, name: str, where: str, params: tuple[Any, ...],
                    before: tuple[Any, ...] = (), after: tuple[Any, ...] = ()) -> Statement:
        sql = compose(self.flavor, self.version, name, {**self._parts, "where": where})
        return sql, (*before, *params, *after)

    def chunk(self, rng: KeyRange) -> Statement:
        """cnt, crc of the rows in `rng`."""
        where, params = range_predicate(self._quoted_keys, rng)
        return self._with_where("checksum_chunk", where, params)

    def chunk_buckets(self, rng: KeyRange, width: int, span: Span) -> Statement:
        """bucket, cnt, crc per `key DIV width` of the rows in `rng` (one integer key): a
        differing chunk names its differing buckets without being read again. Each bucket
        is a range read of its own (`bucket_pieces`), joined by UNION ALL: that costs about
        one hash of the chunk, where a GROUP BY costs MariaDB a fifth more (a temporary
        table) and PostgreSQL about 70 % (it sorts)."""
        parts: list[str] = []
        values: list[Any] = []
        for bucket, piece in bucket_pieces(rng, width, span):
            where, params = range_predicate(self._quoted_keys, piece)
            if bucket is None:  # an open end: rows on one side only, grouped as they come
                sql, bound = self._with_where("checksum_chunk_buckets", where, params,
                                              before=(width,))
            else:
                sql, bound = self._with_where("checksum_chunk_bucket", where, params,
                                              before=(bucket,))
            parts.append(_one_line(sql))
            values += bound
        return " UNION ALL ".join(parts), tuple(values)

    def rows(self, rng: KeyRange) -> Statement:
        """Key columns and the row hash `h` of every row in `rng`, in key order."""
        where, params = range_predicate(self._quoted_keys, rng)
        return self._with_where("checksum_rows", where, params)

    def hashes(self, keys: Sequence[Bound]) -> Statement:
        """Key columns and `h` of exactly these keys (re-checks of differing rows)."""
        where, params = keys_predicate(self._quoted_keys, keys)
        return self._with_where("checksum_rows", where, params)

    def confirm_hashes(self, keys: Sequence[Bound]) -> Statement:
        """`hashes` as the source reads them to confirm differing rows: on MariaDB a
        locking read, which sees a write the binary log has and the engine has not yet
        committed (sql/mariadb/checksum_confirm_rows.sql)."""
        where, params = keys_predicate(self._quoted_keys, keys)
        return self._with_where("checksum_confirm_rows", where, params)

    def column_hashes(self, keys: Sequence[Bound]) -> Statement:
        """Key columns and each column's MD5 `dbgauge_c<i>` (which columns of a row differ)."""
        where, params = keys_predicate(self._quoted_keys, keys)
        sql = compose(self.flavor, self.version, "checksum_column_hashes", {
            **self._parts, "where": where,
            "column_hashes": column_hashes(self.flavor, self.columns, self.portable)})
        return sql, params

    def fetch(self, keys: Sequence[Bound]) -> Statement:
        """Every column of these keys (the source's values, for --print-repair)."""
        where, params = keys_predicate(self._quoted_keys, keys)
        return self._with_where("checksum_fetch_rows", where, params)

    def next_boundary(self, lower: Bound | None, offset: int) -> Statement:
        """The key `offset` rows after `lower`: the inclusive upper end of the next chunk."""
        where, params = range_predicate(self._quoted_keys, KeyRange(lower, None))
        return self._with_where("checksum_next_boundary", where, params, after=(offset,))

    def split_points(self, rng: KeyRange, every: int) -> Statement:
        """Every `every`-th key of `rng`: where a differing range is cut for bisection."""
        where, params = range_predicate(self._quoted_keys, rng)
        return self._with_where("checksum_split_points", where, params, after=(every,))

    def key_range(self) -> Statement:
        """MIN and MAX of a single-column key (arithmetic chunking)."""
        return compose(self.flavor, self.version, "checksum_key_range", self._parts), ()

    def count(self) -> Statement:
        return compose(self.flavor, self.version, "checksum_count", self._parts), ()

    def whole_table(self, limit: float) -> Statement:
        """CHECKSUM TABLE (MariaDB), interrupted by the server after `limit` seconds."""
        return (compose(self.flavor, self.version, "checksum_whole_table", self._parts),
                (limit,))

    def replicate_chunk(self, rng: KeyRange, chunk: int, lower: str | None,
                        upper: str | None, into: str = "dbgauge.checksums") -> Statement:
        """pt-table-checksum's statement: REPLACE the chunk's cnt/crc into the replicate
        table `into` (quoted), run under binlog_format=STATEMENT so replicas recompute it."""
        where, params = range_predicate(self._quoted_keys, rng)
        meta = (self.schema, self.table, chunk, self.index, lower, upper)
        sql = compose(self.flavor, self.version, "checksum_replicate_chunk",
                      {**self._parts, "where": where, "replicate": into})
        return sql, (*meta, *params)
