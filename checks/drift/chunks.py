"""Key ranges, chunk sizing, bisection and row diffs for `dbgauge checksum` (pure: no I/O).

A table is walked along its primary key (or a non-null unique key) in ranges
`(lower, upper]`; the first range has no lower bound and the last no upper bound, so rows
that exist only on a replica, below the source's first key or above its last, still fall in
a chunk. A single integer key is cut arithmetically (no boundary query: the cost of a
chunk is then the checksum alone); other keys are "nibbled" like pt-table-checksum does.
Chunk sizes follow the measured time towards `--chunk-time`. A chunk that still differs
after the re-checks is split at every n-th key and the halves compared again, down to
ranges small enough to compare row by row (data-diff's bisection).
"""

from __future__ import annotations

import base64
import datetime as dt
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

Bound = tuple[Any, ...]
INT_TYPES = frozenset({"tinyint", "smallint", "mediumint", "int", "integer", "bigint",
                       "int2", "int4", "int8"})


@dataclass(frozen=True)
class KeyRange:
    """Keys k with lower < k <= upper; None means unbounded on that side."""

    lower: Bound | None = None
    upper: Bound | None = None

    def describe(self) -> str:
        low = "-inf" if self.lower is None else ",".join(str(v) for v in self.lower)
        high = "+inf" if self.upper is None else ",".join(str(v) for v in self.upper)
        return f"({low}, {high}]"


def _tuple_compare(keys: Sequence[str], values: Bound, last_op: str,
                   first_op: str) -> tuple[str, list[Any]]:
    """(k1..kn) compared with values, expanded so every engine can use the index:
    (k1 op v1) OR (k1 = v1 AND k2 op v2) OR ... (pt-table-checksum does the same)."""
    terms: list[str] = []
    params: list[Any] = []
    for i in range(len(keys)):
        eq = [f"{keys[j]} = %s" for j in range(i)]
        op = last_op if i == len(keys) - 1 else first_op
        terms.append("(" + " AND ".join([*eq, f"{keys[i]} {op} %s"]) + ")")
        params += [*values[:i], values[i]]
    return ("(" + " OR ".join(terms) + ")" if len(terms) > 1 else terms[0]), params


def range_predicate(keys: Sequence[str], rng: KeyRange) -> tuple[str, tuple[Any, ...]]:
    """SQL condition and parameters selecting the keys of `rng` (keys already quoted)."""
    parts: list[str] = []
    params: list[Any] = []
    if rng.lower is not None:
        sql, p = _tuple_compare(keys, rng.lower, ">", ">")
        parts.append(sql)
        params += p
    if rng.upper is not None:
        sql, p = _tuple_compare(keys, rng.upper, "<=", "<")
        parts.append(sql)
        params += p
    return (" AND ".join(parts) if parts else "1 = 1"), tuple(params)


def keys_predicate(keys: Sequence[str], values: Sequence[Bound]) -> tuple[str, tuple[Any, ...]]:
    """SQL condition selecting exactly these key values."""
    if not values:
        return "1 = 0", ()
    if len(keys) == 1:
        return f"{keys[0]} IN ({', '.join(['%s'] * len(values))})", tuple(v[0] for v in values)
    one = "(" + " AND ".join(f"{k} = %s" for k in keys) + ")"
    return "(" + " OR ".join([one] * len(values)) + ")", tuple(x for v in values for x in v)


def split_range(rng: KeyRange, points: Sequence[Bound]) -> list[KeyRange]:
    """`rng` cut at the sorted `points` (each the inclusive upper end of a piece)."""
    pieces: list[KeyRange] = []
    lower = rng.lower
    for point in points:
        if point == lower or point == rng.upper:
            continue
        pieces.append(KeyRange(lower, point))
        lower = point
    pieces.append(KeyRange(lower, rng.upper))
    return pieces


Span = tuple[int, int]  # an integer key's lowest and highest key (inclusive)
BUCKETS = 256  # a direct chunk over an integer key is hashed in at most this many key buckets
# ... of at least this many keys each: every bucket is a range read of its own, and on a
# table read from disk (InnoDB with O_DIRECT) a read that small loses the sequential
# read-ahead: 4096-key buckets made a 10M-row walk 35 % slower there, 16384 15 %, 32768 none.
_BUCKET_KEYS = 32768


def _covered(rng: KeyRange, span: Span) -> tuple[int, int]:
    """The lowest and highest key `rng` covers: its bounds, or the table's lowest and
    highest keys (`span`) where it is open."""
    low = span[0] if rng.lower is None else int(rng.lower[0]) + 1
    high = span[1] if rng.upper is None else int(rng.upper[0])
    return low, high


def bucket_width(rng: KeyRange, span: Span) -> int:
    """Key width of one bucket of `rng` (an integer key), from the keys it covers."""
    low, high = _covered(rng, span)
    keys = max(1, high - low + 1)
    return max(1, -(-keys // min(BUCKETS, max(1, keys // _BUCKET_KEYS))))


def _trunc_div(key: int, width: int) -> int:
    """key DIV width as MySQL and PostgreSQL compute it: truncated towards zero."""
    return abs(key) // width if key >= 0 else -(abs(key) // width)


def bucket_pieces(rng: KeyRange, width: int, span: Span) -> list[tuple[int | None, KeyRange]]:
    """`rng` cut along its buckets, each read as a range of its own (`TableQueries.
    chunk_buckets`: cheaper than a GROUP BY on both engines): (bucket, keys) for every bucket
    the covered keys touch, and (None, keys) for an open end beyond them, whose rows (if
    any: rows on one side only) are grouped by `key DIV width` as they come. The bucket
    hashes are those a GROUP BY gives, empty buckets aside."""
    low, high = _covered(rng, span)
    if high < low:
        return [(None, rng)]
    first, last = _trunc_div(low, width), _trunc_div(high, width)
    whole = KeyRange(None, None)
    pieces: list[tuple[int | None, KeyRange]] = []
    if rng.lower is None:
        pieces.append((None, KeyRange(None, bucket_range(first, width, whole).lower)))
    pieces += [(b, bucket_range(b, width, rng)) for b in range(first, last + 1)]
    if rng.upper is None:
        pieces.append((None, KeyRange(bucket_range(last, width, whole).upper, None)))
    return pieces


def bucket_range(bucket: int, width: int, rng: KeyRange) -> KeyRange:
    """The keys of `rng` whose `key DIV width` is `bucket` (both engines truncate towards
    zero: bucket 0 holds -width < key < width)."""
    if bucket > 0:
        lower, upper = bucket * width - 1, (bucket + 1) * width - 1
    elif bucket == 0:
        lower, upper = -width, width - 1
    else:
        lower, upper = (bucket - 1) * width, bucket * width
    if rng.lower is not None:
        lower = max(lower, int(rng.lower[0]))
    if rng.upper is not None:
        upper = min(upper, int(rng.upper[0]))
    return KeyRange((lower,), (upper,))


class ChunkSizer:
    """Rows per chunk, steered by measured chunk times towards the target (pt's idea).

    Growth is capped per step, so one fast chunk on a cached range cannot make the next
    chunk a hundred times larger.
    """

    def __init__(self, target_seconds: float, initial_rows: int = 1000,
                 max_rows: int = 5_000_000) -> None:
        self.target = target_seconds
        self.rows = initial_rows
        self.max_rows = max_rows

    def observe(self, rows: int, seconds: float) -> None:
        if rows <= 0:
            self.rows = min(self.max_rows, self.rows * 4)
            return
        wanted = rows * self.target / max(seconds, 1e-4)
        self.rows = int(max(1, min(self.max_rows, rows * 8, max(wanted, rows / 4))))


class FixedSizer(ChunkSizer):
    """--chunk-size: the same number of rows in every chunk, whatever it takes."""

    def __init__(self, rows: int) -> None:
        super().__init__(0.0, rows, rows)

    def observe(self, rows: int, seconds: float) -> None:
        pass


class IntRangePlanner:
    """Arithmetic ranges over one integer key: no boundary query, width adapts to density,
    and the last ranges shrink so the replicas' final chunk is short."""

    def __init__(self, low: int, high: int, sizer: ChunkSizer,
                 resume_after: int | None = None) -> None:
        self.high = high
        self.sizer = sizer
        self.width = max(1, sizer.rows)
        self.next_lower: int | None = resume_after
        self.first_upper = low - 1  # below the source's lowest key: the first range
        self.done = False

    def next(self) -> KeyRange | None:
        if self.done:
            return None
        start = self.first_upper if self.next_lower is None else self.next_lower
        step = self.width
        if self.high - start < 2 * step:
            # Taper towards the end: replicas finish the last chunk after the source (the
            # replicated method waits for that), so it should be short.
            step = max(1, self.width // 8, (self.high - start) // 2)
        upper = start + step
        if upper >= self.high:
            self.done = True
            return KeyRange(None if self.next_lower is None else (self.next_lower,), None)
        rng = KeyRange(None if self.next_lower is None else (self.next_lower,), (upper,))
        self.next_lower = upper
        return rng

    def observe(self, rng: KeyRange, rows: int, seconds: float) -> None:
        width = self.width
        self.sizer.observe(rows, seconds)
        if rows > 0:
            self.width = max(1, int(width * self.sizer.rows / rows))
        else:
            self.width = width * 4


def diff_rows(source: Mapping[Bound, str], replica: Mapping[Bound, str]
              ) -> list[tuple[str, Bound]]:
    """(kind, key) for every key whose row hash differs: missing on the replica, extra on
    the replica, or changed. Sorted by key text for stable output."""
    out: list[tuple[str, Bound]] = []
    for key, digest in source.items():
        other = replica.get(key)
        if other is None:
            out.append(("missing", key))
        elif other != digest:
            out.append(("changed", key))
    out += [("extra", key) for key in replica if key not in source]
    return sort_items(out)


def sort_items(items: Iterable[tuple[str, Bound]]) -> list[tuple[str, Bound]]:
    """(kind, key) pairs in key order (by text when the key types do not compare)."""
    listed = list(items)
    try:
        return sorted(listed, key=lambda item: (item[1], item[0]))
    except TypeError:
        return sorted(listed, key=lambda item: (repr(item[1]), item[0]))


def canonical_key(values: Iterable[Any]) -> Bound:
    """Key values as both drivers can agree on them (aware datetimes to naive UTC,
    booleans to ints, memoryviews to bytes)."""
    out: list[Any] = []
    for value in values:
        if isinstance(value, dt.datetime) and value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        elif isinstance(value, bool):
            value = int(value)
        elif isinstance(value, memoryview | bytearray):
            value = bytes(value)
        out.append(value)
    return tuple(out)


def json_value(value: Any) -> Any:
    """A key value for JSON output: numbers stay numbers, everything else is text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, bytes):
        return "0x" + value.hex()
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return str(value)


def encode_value(value: Any) -> Any:
    """A key value -> JSON (tagged when JSON has no such type: bytes, decimals, dates),
    exactly reversible by `decode_value`; used by the --resume state file."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Decimal):
        return {"dec": str(value)}
    if isinstance(value, dt.datetime):
        return {"dt": value.isoformat()}
    if isinstance(value, dt.date):
        return {"d": value.isoformat()}
    if isinstance(value, dt.time):
        return {"t": value.isoformat()}
    if isinstance(value, dt.timedelta):
        return {"td": value.total_seconds()}
    if isinstance(value, uuid.UUID):
        return {"uuid": str(value)}
    raise TypeError(f"cannot save a key value of type {type(value).__name__}")


def decode_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    (tag, text), = value.items()
    decoders: dict[str, Any] = {
        "dec": Decimal, "b64": base64.b64decode, "dt": dt.datetime.fromisoformat,
        "d": dt.date.fromisoformat, "t": dt.time.fromisoformat,
        "td": lambda s: dt.timedelta(seconds=s), "uuid": uuid.UUID,
    }
    return decoders[tag](text)


def encode_bound(bound: Bound | None) -> list[Any] | None:
    return None if bound is None else [encode_value(v) for v in bound]


def decode_bound(data: Sequence[Any] | None) -> Bound | None:
    return None if data is None else tuple(decode_value(v) for v in data)


@dataclass(frozen=True)
class KeyChoice:
    """The index a table is walked along: its name and columns, in index order."""

    index: str
    columns: tuple[str, ...]
    primary: bool


def choose_key(rows: Iterable[Mapping[str, Any]]) -> KeyChoice | None:
    """The primary key, else the narrowest unique index whose columns are all NOT NULL and
    not prefixes; None when the table has neither (rows: checksum_keys, in seq order)."""
    indexes: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        indexes.setdefault(str(row["index_name"]), []).append(row)
    found: list[KeyChoice] = []
    for name, cols in indexes.items():
        if any(bool(int(c["non_unique"])) or c["column_name"] is None
               or bool(int(c["nullable"] or 0)) or bool(int(c.get("prefix") or 0))
               for c in cols):
            continue
        ordered = sorted(cols, key=lambda c: int(c["seq_in_index"]))
        found.append(KeyChoice(name, tuple(str(c["column_name"]) for c in ordered),
                               bool(int(cols[0]["is_primary"]))))
    if not found:
        return None
    return sorted(found, key=lambda k: (not k.primary, len(k.columns), k.index))[0]
