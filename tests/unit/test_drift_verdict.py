"""Which suspect chunks count as differing (checks.drift.verdict.count_chunks): the rule
only, on looks already made, no server.

The direct method's first sight of a chunk may be a write in flight: the chunk counts only
when rows in it are confirmed (or, without a key, when it still differed on re-check),
else it was in flight (`rechecked_chunks`). The replicated method's verdict is exact: its
chunks always count, and one whose rows match now is noted, unless its rows were being
written throughout (then the unconfirmed rows' note says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbgauge.checks.drift.chunks import KeyRange
from dbgauge.checks.drift.verdict import Confirmed, Look, count_chunks


@dataclass(frozen=True)
class Plan:
    key: Any


KEYED, KEYLESS = Plan(key=("id",)), Plan(key=None)
FIRST, SECOND = KeyRange(None, (10,)), KeyRange((10,), None)


def confirmed(rows: dict[str, Any] | None = None, unsure: dict[str, Any] | None = None
              ) -> Confirmed:
    return Confirmed(rows=rows or {}, unsure=unsure or {}, notes=())


def test_a_direct_chunk_counts_only_when_rows_in_it_are_confirmed() -> None:
    looks = [Look("r", FIRST, (("changed", (3,)),), (10, 10)),
             Look("r", SECOND, (("changed", (12,)),), (10, 10)),  # its row was in flight
             Look("r", KeyRange((20,), (30,)), (), None)]  # matched when re-checked
    counted = count_chunks(KEYED, looks, confirmed({"r": [("changed", (3,))]}),  # type: ignore[arg-type]
                           replicated=False)
    assert (dict(counted.differing), counted.rechecked, counted.notes) == ({"r": 1}, 2, ())


def test_a_direct_keyless_chunk_counts_when_it_still_differed() -> None:
    looks = [Look("r", KeyRange(), (), (5, 4)), Look("s", KeyRange(), (), None)]
    counted = count_chunks(KEYLESS, looks, confirmed(), replicated=False)  # type: ignore[arg-type]
    assert (dict(counted.differing), counted.rechecked) == ({"r": 1}, 1)


def test_replicated_chunks_always_count_and_say_when_their_rows_match_now() -> None:
    looks = [Look("r", FIRST, (("changed", (3,)),), (10, 10)),  # rows confirmed
             Look("r", SECOND, (), None),  # rows match now: noted
             Look("s", FIRST, (("changed", (4,)),), (10, 10))]  # written throughout
    counted = count_chunks(KEYED, looks,  # type: ignore[arg-type]
                           confirmed({"r": [("changed", (3,))], "s": []},
                                     {"s": [("changed", (4,))]}), replicated=True)
    assert (dict(counted.differing), counted.rechecked) == ({"r": 2, "s": 1}, 0)
    assert counted.notes == ("r: chunk (10, +inf] differed when checksummed but its rows "
                             "match now",)
