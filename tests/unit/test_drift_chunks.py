"""Pure parts of `dbgauge checksum`: key ranges, chunk sizing, bisection, row diffs."""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dbgauge.checks.drift.chunks import (
    BUCKETS,
    ChunkSizer,
    IntRangePlanner,
    KeyRange,
    bucket_pieces,
    bucket_range,
    bucket_width,
    canonical_key,
    choose_key,
    decode_bound,
    diff_rows,
    encode_bound,
    json_value,
    keys_predicate,
    range_predicate,
    sort_items,
    split_range,
)


def test_range_predicate_single_column() -> None:
    assert range_predicate(["`id`"], KeyRange()) == ("1 = 1", ())
    assert range_predicate(["`id`"], KeyRange((10,), (20,))) == ("(`id` > %s) AND (`id` <= %s)",
                                                                 (10, 20))
    assert range_predicate(["`id`"], KeyRange(None, (5,))) == ("(`id` <= %s)", (5,))


def test_range_predicate_composite_key_is_expanded_for_index_use() -> None:
    sql, params = range_predicate(["a", "b"], KeyRange((1, "x"), (3, "y")))
    assert sql == ("((a > %s) OR (a = %s AND b > %s)) AND "
                   "((a < %s) OR (a = %s AND b <= %s))")
    assert params == (1, 1, "x", 3, 3, "y")


def _in_range(key: tuple[int, int], rng: KeyRange) -> bool:
    return (rng.lower is None or key > rng.lower) and (rng.upper is None or key <= rng.upper)


def _evaluate(sql: str, params: tuple[Any, ...], key: tuple[int, int]) -> bool:
    """Evaluate a generated predicate over (a, b) with Python semantics."""
    expr = sql.replace(" = ", " == ").replace(" AND ", " and ").replace(" OR ", " or ")
    values = iter(params)
    text = ""
    for part in expr.split("%s"):
        text += part
        try:
            text += repr(next(values))
        except StopIteration:
            break
    return bool(eval(text, {}, {"a": key[0], "b": key[1]}))  # a test oracle over our own SQL


@given(st.tuples(st.integers(0, 5), st.integers(0, 5)),
       st.one_of(st.none(), st.tuples(st.integers(0, 5), st.integers(0, 5))),
       st.one_of(st.none(), st.tuples(st.integers(0, 5), st.integers(0, 5))))
def test_composite_predicate_means_tuple_order(key: tuple[int, int],
                                               lower: tuple[int, int] | None,
                                               upper: tuple[int, int] | None) -> None:
    rng = KeyRange(lower, upper)
    sql, params = range_predicate(["a", "b"], rng)
    assert _evaluate(sql, params, key) == _in_range(key, rng)


def test_keys_predicate() -> None:
    assert keys_predicate(["`id`"], [(1,), (2,)]) == ("`id` IN (%s, %s)", (1, 2))
    assert keys_predicate(["a", "b"], [(1, "x"), (2, "y")]) == (
        "((a = %s AND b = %s) OR (a = %s AND b = %s))", (1, "x", 2, "y"))
    assert keys_predicate(["a"], []) == ("1 = 0", ())


def test_split_range_covers_the_range_without_overlap() -> None:
    pieces = split_range(KeyRange((0,), (100,)), [(25,), (50,), (75,), (100,)])
    assert pieces == [KeyRange((0,), (25,)), KeyRange((25,), (50,)), KeyRange((50,), (75,)),
                      KeyRange((75,), (100,))]
    assert split_range(KeyRange(), []) == [KeyRange()]


def test_chunk_sizer_steers_towards_the_target_with_capped_growth() -> None:
    sizer = ChunkSizer(0.5, initial_rows=1000)
    sizer.observe(1000, 0.001)  # would want 500000 rows: growth is capped at 8x
    assert sizer.rows == 8000
    sizer.observe(8000, 2.0)  # 4x too slow: shrink, but at most to a quarter
    assert sizer.rows == 2000
    sizer.observe(2000, 0.5)
    assert sizer.rows == 2000
    sizer.observe(0, 0.001)  # an empty range says nothing about speed: grow
    assert sizer.rows == 8000


@given(st.integers(-1000, 1000), st.integers(0, 5000), st.lists(
    st.tuples(st.integers(0, 5000), st.floats(0.0001, 2.0)), min_size=0, max_size=30))
def test_int_ranges_cover_every_key_exactly_once(low: int, span: int,
                                                 timings: list[tuple[int, float]]) -> None:
    high = low + span
    planner = IntRangePlanner(low, high, ChunkSizer(0.5, initial_rows=7))
    ranges: list[KeyRange] = []
    feedback = iter(timings)
    while (rng := planner.next()) is not None:
        ranges.append(rng)
        rows, seconds = next(feedback, (10, 0.01))
        planner.observe(rng, rows, seconds)
        assert len(ranges) < 10_000
    assert ranges[0].lower is None and ranges[-1].upper is None
    for before, after in itertools.pairwise(ranges):
        assert before.upper == after.lower  # contiguous: no gap, no overlap
    for key in (low - 50, low, (low + high) // 2, high, high + 50):
        assert sum((r.lower is None or key > r.lower[0]) and
                   (r.upper is None or key <= r.upper[0]) for r in ranges) == 1


def test_int_ranges_resume_after_a_key() -> None:
    planner = IntRangePlanner(1, 1000, ChunkSizer(0.5, initial_rows=300), resume_after=40)
    assert planner.next() == KeyRange((40,), (340,))
    ranges = [planner.next(), planner.next(), planner.next(), planner.next(), planner.next()]
    # the end tapers: each range at most half of what is left, but not below width / 8
    assert ranges == [KeyRange((340,), (640,)), KeyRange((640,), (820,)),
                      KeyRange((820,), (910,)), KeyRange((910,), (955,)),
                      KeyRange((955,), (992,))]
    assert planner.next() == KeyRange((992,), None)
    assert planner.next() is None


def test_diff_rows_names_missing_extra_changed() -> None:
    source = {(1,): "a", (2,): "b", (3,): "c"}
    replica = {(1,): "a", (3,): "x", (4,): "d"}
    assert diff_rows(source, replica) == [("missing", (2,)), ("changed", (3,)), ("extra", (4,))]
    assert diff_rows(source, dict(source)) == []


def test_sort_items_orders_by_key_and_survives_mixed_types() -> None:
    assert sort_items([("x", (10,)), ("x", (9,))]) == [("x", (9,)), ("x", (10,))]
    assert len(sort_items([("x", (1,)), ("x", ("a",))])) == 2


def test_canonical_key_makes_driver_values_comparable() -> None:
    aware = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert canonical_key([aware, True, memoryview(b"ab")]) == (dt.datetime(2024, 1, 1, 10), 1,
                                                               b"ab")


@given(st.lists(st.one_of(
    st.none(), st.integers(), st.text(), st.binary(), st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.datetimes(), st.dates(), st.times(), st.uuids(),
    st.timedeltas(min_value=dt.timedelta(days=-30), max_value=dt.timedelta(days=30)),
    st.floats(allow_nan=False)), max_size=4))
def test_resume_state_values_round_trip(values: list[Any]) -> None:
    import json

    bound = tuple(values)
    restored = decode_bound(json.loads(json.dumps(encode_bound(bound))))
    assert restored == bound
    assert [type(v) for v in restored or ()] == [type(v) for v in bound]


def test_json_value_keeps_numbers_and_writes_the_rest_as_text() -> None:
    assert json_value(5) == 5 and json_value("x") == "x" and json_value(None) is None
    assert json_value(b"\x01\xff") == "0x01ff"
    assert json_value(Decimal("1.50")) == "1.50"
    assert json_value(dt.datetime(2024, 1, 2, 3, 4, 5)) == "2024-01-02 03:04:05"
    assert json_value(uuid.UUID(int=1)) == "00000000-0000-0000-0000-000000000001"


def _key(index: str, seq: int, column: str | None, *, unique: bool = True,
         nullable: bool = False, prefix: bool = False) -> dict[str, Any]:
    return {"index_name": index, "non_unique": 0 if unique else 1,
            "is_primary": index == "PRIMARY", "seq_in_index": seq, "column_name": column,
            "nullable": nullable, "prefix": prefix}


@pytest.mark.parametrize(("rows", "expected"), [
    ([_key("PRIMARY", 1, "a"), _key("PRIMARY", 2, "b"), _key("u", 1, "c")],
     ("PRIMARY", ("a", "b"))),
    ([_key("u_wide", 1, "a"), _key("u_wide", 2, "b"), _key("u_narrow", 1, "c")],
     ("u_narrow", ("c",))),
    ([_key("u_null", 1, "a", nullable=True), _key("u_ok", 2, "c"), _key("u_ok", 1, "b")],
     ("u_ok", ("b", "c"))),
    ([_key("u_prefix", 1, "a", prefix=True)], None),
    ([_key("u_expr", 1, None)], None),
    ([], None),
])
def test_choose_key(rows: list[dict[str, Any]], expected: tuple[str, tuple[str, ...]] | None
                    ) -> None:
    choice = choose_key(rows)
    assert (None if choice is None else (choice.index, choice.columns)) == expected


def _trunc_div(key: int, width: int) -> int:
    """key DIV width as MySQL and PostgreSQL compute it: truncated towards zero."""
    q = abs(key) // width
    return q if key >= 0 else -q


@pytest.mark.parametrize("width", [1, 2, 7, 64, 1954])
def test_bucket_range_holds_exactly_the_keys_of_its_bucket(width: int) -> None:
    rng = KeyRange((-3000,), (5000,))
    keys = range(-2999, 5001)
    members: dict[int, set[int]] = {}
    for k in keys:
        members.setdefault(_trunc_div(k, width), set()).add(k)
    for bucket, expected in members.items():
        piece = bucket_range(bucket, width, rng)
        assert piece.lower is not None and piece.upper is not None
        # the keys with lower < key <= upper (keys is one run of integers)
        inside = set(range(max(keys.start, int(piece.lower[0]) + 1),
                           min(keys.stop - 1, int(piece.upper[0])) + 1))
        assert inside == expected, bucket


def test_bucket_range_keeps_an_open_end_open_only_where_the_range_is() -> None:
    piece = bucket_range(0, 10, KeyRange(None, (95,)))
    assert piece == KeyRange((-10,), (9,))  # bucket 0: -10 < key < 10
    assert bucket_range(9, 10, KeyRange(None, (95,))) == KeyRange((89,), (95,))
    assert bucket_range(12, 10, KeyRange((100,), None)) == KeyRange((119,), (129,))


def test_bucket_width_spreads_a_chunk_over_the_buckets() -> None:
    big = BUCKETS * 40_000
    assert bucket_width(KeyRange((0,), (big,)), (1, 10**8)) == 40_000
    assert bucket_width(KeyRange(None, (big,)), (1, 10**8)) == 40_000  # from the low key
    assert bucket_width(KeyRange((10**8 - 1,), None), (1, 10**8)) == 1  # a one-key tail
    # A smaller chunk gets fewer buckets, each of at least 32768 keys: every bucket is a
    # range read of its own, which must stay long enough for the read-ahead.
    assert bucket_width(KeyRange((0,), (1_000_000,)), (1, 10**8)) == 33_334  # 30 buckets
    assert bucket_width(KeyRange((0,), (64_000,)), (1, 10**8)) == 64_000  # one


@pytest.mark.parametrize("rng,span,width", [
    (KeyRange((-3000,), (5000,)), (1, 10), 7),
    (KeyRange((-3000,), (5000,)), (1, 10), 1954),
    (KeyRange(None, (5000,)), (-2000, 9000), 64),  # open below: rows below -2000 too
    (KeyRange((100,), None), (-2000, 9000), 1000),  # open above
    (KeyRange(None, None), (-2000, 9000), 1),
    (KeyRange(None, None), (5, 5), 1),  # one key
    (KeyRange((9000,), None), (-2000, 9000), 1),  # the tail above the last key
    (KeyRange((20,), (10,)), (1, 100), 3),  # nothing inside
])
def test_bucket_pieces_read_the_buckets_a_group_by_reads(
        rng: KeyRange, span: tuple[int, int], width: int) -> None:
    """Every key of the range lies in exactly one piece, under the bucket a GROUP BY on
    `key DIV width` gives it, whatever lies beyond the table's lowest and highest keys."""
    pieces = bucket_pieces(rng, width, span)
    lo = -12000 if rng.lower is None else int(rng.lower[0]) + 1
    hi = 12000 if rng.upper is None else int(rng.upper[0])

    # The pieces holding each key: a piece holds lower < key <= upper (None: no bound).
    holding: list[list[int | None]] = [[] for _ in range(lo, hi + 1)]
    for bucket, piece in pieces:
        first = lo if piece.lower is None else max(lo, int(piece.lower[0]) + 1)
        last = hi if piece.upper is None else min(hi, int(piece.upper[0]))
        for key in range(first, last + 1):
            holding[key - lo].append(bucket)
    for key in range(lo, hi + 1):
        assert len(holding[key - lo]) == 1, key
        bucket = holding[key - lo][0]
        assert bucket in (None, _trunc_div(key, width)), key
        if span[0] <= key <= span[1]:
            assert bucket is not None  # only beyond the table's keys are rows grouped
    # With the walk's own width, one statement holds at most BUCKETS + 1 buckets.
    own = bucket_pieces(rng, bucket_width(rng, span), span)
    assert len([b for b, _ in own if b is not None]) <= BUCKETS + 1


