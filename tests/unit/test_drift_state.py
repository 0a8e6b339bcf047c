"""The --resume state of a table's walk (checks.drift.state.SavedWalk): what a run saves
as it walks, read back as a resumed run continues it (pure, a temporary file)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

from dbgauge.checks.drift.chunks import KeyRange
from dbgauge.checks.drift.model import ChecksumOptions, Suspect
from dbgauge.checks.drift.state import RunState, SavedWalk


def test_a_walk_saved_for_resume_reads_back(tmp_path: Path) -> None:
    """What --resume continues a table's walk from: the next chunk's lower bound, the
    counts, the chunks still to re-check (not their differing buckets: a resumed run reads
    those again) and the last chunk size; after the last chunk, nothing is left to walk."""
    path = tmp_path / "state.json"
    ends = ["mysql://db1:3306/", "mysql://db2:3306/"]
    state = RunState.open(ChecksumOptions(state_file=path), "direct", "src", ["r"], ends)
    odd = KeyRange((dt.date(2024, 1, 1), Decimal("2.50")), (dt.date(2024, 1, 2), b"\x00"))
    state.progress("app.t", (20,), 20, 2, [
        Suspect("r", KeyRange(None, (10,)), pieces=(KeyRange((0,), (5,)),)),
        Suspect("r", odd)], 1000)
    state.save(force=True)
    resumed = RunState.open(ChecksumOptions(state_file=path, resume=True), "direct", "src",
                            ["r"], ends)
    assert resumed.walk("app.t") == SavedWalk(
        next_lower=(20,), rows=20, chunks=2, chunk_rows=1000, walked=False,
        suspects=(Suspect("r", KeyRange(None, (10,))), Suspect("r", odd)))
    assert resumed.walk("app.u") is None
    resumed.progress("app.t", None, 25, 3, [], 1000)  # the last chunk, open-ended
    assert resumed.walk("app.t") == SavedWalk(None, 25, 3, (), 1000, walked=True)
