"""A walked table's verdict: which chunks differ, which rows, and the repair statements.

After the last chunk, the suspects -- chunks that differed when walked (direct) or whose
replica values in dbgauge.checksums differ from the source's (replicated) -- are
re-checked and bisected (`Look`), every candidate row of a replica is confirmed in one set
of rounds (`Confirmed`), the chunks are counted (`Counted`) and the rows named with their
repair (`Named`); the table's result is written to the --resume state.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dbgauge.checks.drift.chunks import (
    Bound,
    KeyRange,
    Span,
    canonical_key,
    decode_bound,
    json_value,
    sort_items,
)
from dbgauge.checks.drift.context import Context
from dbgauge.checks.drift.model import Difference, DriftError, Suspect, TableResult, Unnamed
from dbgauge.checks.drift.plan import TablePlan
from dbgauge.checks.drift.recheck import (
    KEY_BATCH,
    Candidates,
    Seen,
    confirm,
    differing_buckets,
    finer,
    locate,
    recheck,
)
from dbgauge.checks.drift.repair import repair_script
from dbgauge.checks.drift.sides import Side
from dbgauge.checks.drift.walk import Walked
from dbgauge.toolkit.db import Row
from dbgauge.toolkit.db.values import text as _text


@dataclass(frozen=True)
class Look:
    """One suspect chunk looked into on its replica: the candidate rows bisection found,
    and the (source, replica) row counts of the last piece that still differed (None:
    every piece matched when re-checked, the chunk was in flight)."""

    replica: str
    rng: KeyRange
    candidates: tuple[tuple[str, Bound], ...]
    counts: tuple[int, int] | None

    @property
    def differed(self) -> bool:
        return self.counts is not None


@dataclass(frozen=True)
class Looked:
    """Every suspect of a table looked into, the row hashes read meanwhile (by replica),
    and, for a table without a key, the replicas it differs on."""

    looks: tuple[Look, ...]
    seen: Mapping[str, Seen]
    unnamed: tuple[Unnamed, ...]


@dataclass(frozen=True)
class Confirmed:
    """By replica: the candidate rows that differ, and those written on the source
    throughout the re-checks (not reported: the notes name them)."""

    rows: Mapping[str, Candidates]
    unsure: Mapping[str, Candidates]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Counted:
    """The chunks that differ, by replica; those that differed at first sight only (in
    flight); and notes on replicated chunks whose rows match now."""

    differing: Mapping[str, int]
    rechecked: int
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Named:
    """The differing rows as reported: each (up to --max-differences per replica) with
    its changed columns, the counts by replica, and the repair statements."""

    differences: tuple[Difference, ...]
    differing_rows: Mapping[str, int]
    repair: tuple[tuple[str, tuple[str, ...]], ...]


def replicated_suspects(ctx: Context, plan: TablePlan, chunks: int) -> list[Suspect]:
    """After the last chunk: the chunks whose replica values differ from the source's."""
    ctx.catch_up()
    out: list[Suspect] = []
    for rep in ctx.replicas:
        rows = ctx.replicate.run(rep, "checksum_replica_chunks", (plan.schema, plan.table))
        if len(rows) < chunks:
            raise DriftError(
                f"replica {rep.name} has {len(rows)} of the {chunks} chunk rows of "
                f"{plan.name} in dbgauge.checksums: a replication filter may skip the "
                "dbgauge schema, or the replica is not replicating from this source; use "
                "--method direct")
        for r in rows:
            this = (int(r["this_cnt"]), _text(r["this_crc"]))
            source = (None if r["source_cnt"] is None else int(r["source_cnt"]),
                      _text(r["source_crc"]))
            if this != source:
                lower = r["lower_boundary"]
                upper = r["upper_boundary"]
                out.append(Suspect(rep.name, KeyRange(
                    decode_bound(json.loads(lower)) if lower else None,
                    decode_bound(json.loads(upper)) if upper else None)))
    return out


def key_span(ctx: Context, plan: TablePlan) -> Span:
    """An integer key's lowest and highest key on the source (what an open range covers)."""
    row = ctx.source.run(plan.source[min(plan.source)].key_range())[0]
    return (0, 0) if row["lo"] is None else (int(row["lo"]), int(row["hi"]))


def finish_table(ctx: Context, plan: TablePlan, walked: Walked, started: float
                 ) -> TableResult:
    """Re-check the suspects, name the rows, and record the table's result."""
    replicated = ctx.method == "replicated"
    suspects = replicated_suspects(ctx, plan, walked.chunks) if replicated \
        else walked.suspects
    looked = look_into(ctx, plan, suspects)
    confirmed = confirm_rows(ctx, plan, looked)
    counted = count_chunks(plan, looked.looks, confirmed, replicated)
    named = name_rows(ctx, plan, confirmed.rows)
    result = TableResult(
        table=plan.name, status="drift" if counted.differing or named.differences else "ok",
        rows=walked.rows, chunks=walked.chunks,
        differing_chunks=tuple(sorted(counted.differing.items())),
        differing_rows=tuple(sorted(named.differing_rows.items())),
        differences=named.differences, seconds=time.monotonic() - started, reason=None,
        resumed_from_chunk=walked.resumed_from, repair=named.repair,
        notes=(*confirmed.notes, *counted.notes), rechecked_chunks=counted.rechecked,
        unnamed=looked.unnamed)
    ctx.state.done(plan.name, result)
    return result


def look_into(ctx: Context, plan: TablePlan, suspects: Sequence[Suspect]) -> Looked:
    """Re-check and bisect every suspect chunk: the candidate rows of each (to be
    confirmed together, per replica: the confirmation rounds sleep between re-reads)."""
    # A keyed chunk is re-checked once (its rows are confirmed afterwards); a keyless one,
    # whose rows cannot be, `retries` times.
    attempts = 1 if plan.key is not None else ctx.options.retries
    seen: dict[str, Seen] = {rep.name: {} for rep in ctx.replicas}
    looks: list[Look] = []
    unnamed: list[Unnamed] = []  # keyless: the replicas it differs on, with counts
    span: Span | None = None
    for suspect in suspects:
        ctx.check_run_time()  # re-checks and bisection count towards --run-time too
        replica = ctx.replica(suspect.replica)
        # A direct chunk over an integer key left its differing buckets: only those are
        # read again. A replicated or resumed suspect over one: one read of its bucket
        # hashes on both sides at once names the buckets to look into.
        pieces: Sequence[KeyRange] | None = suspect.pieces
        if pieces is None and plan.int_key and plan.ranges_safe:
            span = span or key_span(ctx, plan)
            pieces = differing_buckets(ctx, plan, replica, suspect.rng, span)
        if pieces is not None:  # wide differing buckets: their finer buckets
            pieces = finer(ctx, plan, replica, pieces)
        look = _look(ctx, plan, replica, suspect.rng,
                     [suspect.rng] if pieces is None else pieces, attempts, seen[replica.name])
        looks.append(look)
        if plan.key is None and (look.differed or ctx.method == "replicated"):
            source_rows, replica_rows = look.counts or (None, None)
            unnamed.append(Unnamed(replica=replica.name, source_rows=source_rows,
                                   replica_rows=replica_rows))
    return Looked(looks=tuple(looks), seen=seen, unnamed=tuple(unnamed))


def _look(ctx: Context, plan: TablePlan, replica: Side, rng: KeyRange,
          pieces: Sequence[KeyRange], attempts: int, seen: Seen) -> Look:
    """The pieces of suspect `rng` re-checked, and those that still differ bisected down
    to candidate rows (recording the row hashes read in `seen`)."""
    counts: tuple[int, int] | None = None
    candidates: Candidates = []
    for piece in pieces:
        differing = recheck(ctx, plan, replica, piece, attempts)
        if differing is None:
            continue
        a, b = differing
        counts = (int(a[0]["cnt"]), int(b[0]["cnt"]))
        if plan.key is not None:
            candidates += locate(ctx, plan, replica, piece, counts, seen)
    return Look(replica=replica.name, rng=rng, candidates=tuple(candidates), counts=counts)


def confirm_rows(ctx: Context, plan: TablePlan, looked: Looked) -> Confirmed:
    """Every candidate row of a replica confirmed in one set of rounds."""
    rows: dict[str, Candidates] = {}
    unsure: dict[str, Candidates] = {}  # written on the source throughout the re-checks
    notes: list[str] = []
    for name in sorted({look.replica for look in looked.looks if look.candidates}):
        everything = {item for look in looked.looks if look.replica == name
                      for item in look.candidates}
        rows[name], unsure[name] = confirm(ctx, plan, ctx.replica(name),
                                           sort_items(everything), looked.seen[name])
        if unsure[name]:
            notes.append(_unconfirmed(name, plan, unsure[name]))
    return Confirmed(rows=rows, unsure=unsure, notes=tuple(notes))


def count_chunks(plan: TablePlan, looks: Sequence[Look], confirmed: Confirmed,
                 replicated: bool) -> Counted:
    """Which suspect chunks count as differing: the replicated method's verdict is
    exact; the direct one stands when rows are confirmed (or the table has no key to
    confirm them by), else the chunk was in flight (`rechecked`)."""
    differing: dict[str, int] = {}
    rechecked = 0
    notes: list[str] = []
    for look in looks:
        kept = set(confirmed.rows.get(look.replica, ()))
        rows_found = any(item in kept for item in look.candidates)
        if rows_found or replicated or (look.differed and plan.key is None):
            differing[look.replica] = differing.get(look.replica, 0) + 1
        else:
            rechecked += 1
        if replicated and not rows_found and plan.key is not None \
                and not set(confirmed.unsure.get(look.replica, ())) & set(look.candidates):
            notes.append(f"{look.replica}: chunk {look.rng.describe()} differed when "
                         "checksummed but its rows match now")
    return Counted(differing=differing, rechecked=rechecked, notes=tuple(notes))


def name_rows(ctx: Context, plan: TablePlan, confirmed: Mapping[str, Candidates]) -> Named:
    """The confirmed rows as reported, with their changed columns and repair."""
    differences: list[Difference] = []
    differing_rows: dict[str, int] = {}
    repair: list[tuple[str, tuple[str, ...]]] = []
    for name, unique in confirmed.items():
        if not unique:
            continue
        differing_rows[name] = len(unique)
        rep_q = plan.replicas[name]
        replica = ctx.replica(name)
        shown = unique[:ctx.options.max_differences]
        columns = changed_columns(ctx, plan, replica,
                                  [key for kind, key in shown if kind == "changed"])
        for kind, key in shown:
            cols, values = columns.get(canonical_key(key), ((), ()))
            differences.append(Difference(
                replica=name, kind=kind, key=tuple(zip(rep_q.key, key, strict=True)),
                columns=cols, values=values))
        if ctx.options.print_repair:
            repair.append((name, repair_statements(ctx, plan, replica, unique)))
    return Named(differences=tuple(differences), differing_rows=differing_rows,
                 repair=tuple(repair))


def _unconfirmed(replica: str, plan: TablePlan, written: Candidates) -> str:
    """The note for rows the re-checks could not tell from writes in flight."""
    keys = plan.replicas[replica].key
    shown = "; ".join(", ".join(f"{k}={json_value(v)}" for k, v in zip(keys, key, strict=True))
                      for _, key in written[:5])
    more = f" and {len(written) - 5} more" if len(written) > 5 else ""
    return (f"{replica}: {len(written)} row(s) differed in every re-check but were being "
            f"written on the source throughout, so a write in flight cannot be ruled out "
            f"({shown}{more}); not reported: compare again when writes to them pause, or "
            "give them longer with --retries and --retry-delay")


_VALUE_CHARS = 200  # --show-values: longer values are cut


def changed_columns(ctx: Context, plan: TablePlan, replica: Side, keys: list[Bound]
                    ) -> dict[Bound, tuple[tuple[str, ...], tuple[tuple[str, Any, Any], ...]]]:
    """For changed rows, by key: the replica's columns whose text differs (compared as
    the row hash compares them, so across engines too), and with --show-values the two
    values of each (cut at 200 characters). Rows changed again meanwhile may name none."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    rep_q = plan.replicas[replica.name]
    out: dict[Bound, tuple[tuple[str, ...], tuple[tuple[str, Any, Any], ...]]] = {}
    for start in range(0, len(keys), KEY_BATCH):
        ctx.check_run_time()
        batch = keys[start:start + KEY_BATCH]
        a, b = ctx.synced(replica, src_q.column_hashes(batch), rep_q.column_hashes(batch))
        source = {canonical_key(r[k] for k in src_q.key): r for r in a}
        differ: dict[Bound, list[int]] = {}
        for row in b:
            key = canonical_key(row[k] for k in rep_q.key)
            if key in source:
                differ[key] = [i for i in range(len(rep_q.columns))
                               if _hash(row[f"dbgauge_c{i}"])
                               != _hash(source[key][f"dbgauge_c{i}"])]
        values: dict[Bound, tuple[tuple[str, Any, Any], ...]] = {}
        if ctx.options.show_values and differ:
            wanted = list(differ)
            src_rows = {canonical_key(r[k] for k in src_q.key): r
                        for r in ctx.source.run(src_q.fetch(wanted))}
            rep_rows = {canonical_key(r[k] for k in rep_q.key): r
                        for r in replica.run(rep_q.fetch(wanted))}
            for key, idx in differ.items():
                if key in src_rows and key in rep_rows:
                    values[key] = tuple(
                        (rep_q.columns[i].name,
                         _shown(src_rows[key][src_q.columns[i].name]),
                         _shown(rep_rows[key][rep_q.columns[i].name])) for i in idx)
        for key, idx in differ.items():
            out[key] = (tuple(rep_q.columns[i].name for i in idx), values.get(key, ()))
    return out


def _hash(value: Any) -> str | None:
    return None if value is None else _text(value)


def _shown(value: Any) -> Any:
    """A value for --show-values: JSON-ready, long texts cut."""
    shown = json_value(value.tobytes() if isinstance(value, memoryview) else value)
    if isinstance(shown, str) and len(shown) > _VALUE_CHARS:
        return f"{shown[:_VALUE_CHARS]}... ({len(shown)} characters)"
    return shown


def repair_statements(ctx: Context, plan: TablePlan, replica: Side, items: Candidates
                      ) -> tuple[str, ...]:
    """What would make `replica` hold the source's rows for `items` (never run)."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    wanted = [key for kind, key in items if kind != "extra"]
    rows: dict[Bound, Row] = {}
    for start in range(0, len(wanted), KEY_BATCH):
        for row in ctx.source.run(src_q.fetch(wanted[start:start + KEY_BATCH])):
            rows[canonical_key(row[k] for k in src_q.key)] = row
    rep_q = plan.replicas[replica.name]
    return tuple(repair_script(replica.flavor, replica.name, rep_q.schema, rep_q.table,
                               rep_q.columns, src_q.columns, rep_q.key, items, rows))
