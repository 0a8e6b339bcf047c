"""A queries file's HISTOGRAM column as postgres_exporter 0.11 exports it (a helper of
`collectors._queries`; the registry skips names starting with '_').

A HISTOGRAM column `<col>` holds the buckets' upper bounds, an array of numbers; the row
also carries `<col>_bucket` (the cumulative count of each bucket, an array of integers),
`<col>_sum` and `<col>_count`. The family `<prefix>_<col>` is a histogram:
`<prefix>_<col>_bucket{le}` per bound in ascending order (a count past the end of the
bounds is ignored, a bound without a count is left out, a repeated bound keeps its last
count), `le="+Inf"` with `<col>_count` unless the bounds hold +Inf themselves,
`<prefix>_<col>_sum` and `<prefix>_<col>_count`. Values are read as postgres_exporter
reads them (lib/pq's Float64Array and Int64Array for the arrays, dbToFloat64 for the sum,
dbToUint64 for the count: NULL sum NaN, NULL count 0, a negative integer count wrapped as
uint64); an array it cannot read fails the whole query, a sum or count it cannot read leaves
this histogram out of the row. Unlike postgres_exporter, which leaves the histogram out
silently, a missing companion column fails the query with its name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal

from dbgauge.collectors._values import go_float, metric_value, timestamp
from dbgauge.toolkit.metrics import Sample

_UINT64 = 1 << 64
_GO_INT = re.compile(r"[+-]?\d+")
_GO_UINT = re.compile(r"\d+")


class HistogramError(ValueError):
    """The row cannot give this histogram; the query fails with this message."""


def _element_text(value: object) -> str | None:
    """An array element as PostgreSQL writes it in the array's text (what lib/pq parses);
    None for NULL."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        # float8out: shortest digits, exponent from 1e15 on (and below 1e-4)
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _array(value: object) -> list[str | None]:
    """A one-dimensional array's elements as text: from the driver's list, or from the
    array's text (a text column holding '{1,2,3}', as lib/pq reads it too)."""
    if value is None:
        return []
    if isinstance(value, bytes | str):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        text = text.strip()
        if not (text.startswith("{") and text.endswith("}")) or "{" in text[1:-1]:
            raise HistogramError(f"{text[:40]!r} is not a one-dimensional array")
        inner = text[1:-1].strip()
        if not inner:
            return []
        return [None if item.strip() == "NULL" else item.strip().strip('"')
                for item in inner.split(",")]
    if isinstance(value, list | tuple):
        if any(isinstance(item, list | tuple) for item in value):
            raise HistogramError("a multi-dimensional array")
        return [_element_text(item) for item in value]
    raise HistogramError(f"not an array ({type(value).__name__})")


def bounds(value: object) -> list[float]:
    """The HISTOGRAM column: upper bounds (lib/pq Float64Array: strconv.ParseFloat)."""
    out = []
    for item in _array(value):
        number = None if item is None else metric_value(item)
        if number is None:
            raise HistogramError(f"bound {item!r} is not a number")
        out.append(number)
    return out


def counts(value: object) -> list[float]:
    """The `_bucket` column: counts (lib/pq Int64Array: strconv.ParseInt, base 10),
    each then read as uint64 (a negative count wraps)."""
    out = []
    for item in _array(value):
        if item is None or not _GO_INT.fullmatch(item) or not \
                -(1 << 63) <= int(item) < (1 << 63):
            raise HistogramError(f"bucket count {item!r} is not a 64-bit integer")
        out.append(float(int(item) % _UINT64))
    return out


def total(value: object) -> float | None:
    """The `_sum` column (dbToFloat64): NULL is NaN; None when it is not a number."""
    return math.nan if value is None else metric_value(value)


def count(value: object) -> float | None:
    """The `_count` column (dbToUint64): NULL is 0, a negative integer wraps; None when it
    is not one (text and numeric must be plain digits, as strconv.ParseUint wants)."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int):
        return float(value % _UINT64)
    if isinstance(value, float):
        return float(math.trunc(value) % _UINT64) if math.isfinite(value) else None
    if isinstance(value, datetime | date):
        return float(math.floor(timestamp(value)) % _UINT64)
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else \
        str(value) if isinstance(value, str | Decimal) else None
    if text is None or not _GO_UINT.fullmatch(text) or int(text) >= _UINT64:
        return None
    return float(int(text))


def histogram_samples(name: str, column: str, row: Mapping[str, object],
                      labels: Mapping[str, str]) -> list[Sample]:
    """The samples of the histogram `name` (the column `column`) of one row; [] when its
    sum or count cannot be read; HistogramError when the row cannot give it at all."""
    missing = [column + part for part in ("_bucket", "_sum", "_count")
               if column + part not in row]
    if missing:
        raise HistogramError(f"no column {missing[0]!r} (HISTOGRAM {column} needs "
                             f"{column}_bucket, {column}_sum and {column}_count)")
    try:
        upper = bounds(row[column])
        cumulative = counts(row[column + "_bucket"])
    except HistogramError as exc:
        raise HistogramError(f"column {column}: {exc}") from None
    sum_, count_ = total(row[column + "_sum"]), count(row[column + "_count"])
    if sum_ is None or count_ is None:
        return []
    buckets = dict(zip(upper, cumulative, strict=False))
    out = [Sample(name + "_bucket", n, {**labels, "le": go_float(le)})
           for le, n in sorted(buckets.items())]
    if math.inf not in buckets:
        out.append(Sample(name + "_bucket", count_, {**labels, "le": "+Inf"}))
    out.append(Sample(name + "_sum", sum_, dict(labels)))
    out.append(Sample(name + "_count", count_, dict(labels)))
    return out
