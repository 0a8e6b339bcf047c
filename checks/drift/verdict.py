"""A walked table's verdict: which chunks differ, which rows, and the repair statements.

After the last chunk, the suspects -- chunks that differed when walked (direct) or whose
replica values in dbgauge.checksums differ from the source's (replicated) -- are
re-checked and bisected, every candidate row of a replica is confirmed in one set of
rounds, and the table's result is written to the --resume state.
"""

from __future__ import annotations

import json
import time
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
from dbgauge.checks.drift.model import Difference, DriftError, TableResult, Unnamed
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
from dbgauge.checks.drift.session import Session
from dbgauge.checks.drift.sides import Side
from dbgauge.toolkit.db import Row
from dbgauge.toolkit.db.values import text as _text

Suspects = list[tuple[str, KeyRange]]  # (replica, chunk range)


def replicated_suspects(run: Session, plan: TablePlan, chunks: int) -> Suspects:
    """After the last chunk: the chunks whose replica values differ from the source's."""
    run.catch_up()
    out: Suspects = []
    for rep in run.replicas:
        rows = run.replicate.run(rep, "checksum_replica_chunks", (plan.schema, plan.table))
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
                out.append((rep.name, KeyRange(
                    decode_bound(json.loads(lower)) if lower else None,
                    decode_bound(json.loads(upper)) if upper else None)))
    return out


def key_span(run: Session, plan: TablePlan) -> Span:
    """An integer key's lowest and highest key on the source (what an open range covers)."""
    row = run.source.run(plan.source[min(plan.source)].key_range())[0]
    return (0, 0) if row["lo"] is None else (int(row["lo"]), int(row["hi"]))


def finish_table(run: Session, plan: TablePlan, rows: int, chunks: int, suspects: Suspects,
                 started: float, resumed_from: int | None) -> TableResult:
    """Re-check the suspects, name the rows, and record the table's result."""
    replicated = run.method == "replicated"
    if replicated:
        suspects = replicated_suspects(run, plan, chunks)
    by_replica = {rep.name: rep for rep in run.replicas}
    # Re-check and bisect every suspect chunk, then confirm all candidate rows of a
    # replica together (the confirmation rounds sleep between re-reads).
    # A keyed chunk is re-checked once (its rows are confirmed below); a keyless one, whose
    # rows cannot be, `retries` times.
    attempts = 1 if plan.key is not None else run.options.retries
    looked: list[tuple[str, KeyRange, bool, Candidates]] = []
    seen: dict[str, Seen] = {rep.name: {} for rep in run.replicas}
    unnamed: list[Unnamed] = []  # keyless: the replicas it differs on, with counts
    span: Span | None = None
    for name, rng in suspects:
        run.check_run_time()  # re-checks and bisection count towards --run-time too
        # A direct chunk over an integer key left its differing buckets: only those are
        # read again (a resumed run has not got them and looks at the whole chunk).
        last: tuple[list[Row], list[Row]] | None = None
        candidates: Candidates = []
        if (name, rng) not in run.pieces and plan.int_key and plan.ranges_safe:
            # A replicated or resumed suspect over an integer key: one read
            # of its bucket hashes on both sides at once names the buckets to look into.
            span = span or key_span(run, plan)
            run.pieces[(name, rng)] = differing_buckets(run, plan, by_replica[name], rng, span)
        if (name, rng) in run.pieces:  # wide differing buckets: their finer buckets
            run.pieces[(name, rng)] = finer(run, plan, by_replica[name],
                                            run.pieces[(name, rng)])
        for piece in run.pieces.get((name, rng), [rng]):
            differing = recheck(run, plan, by_replica[name], piece, attempts)
            if differing is not None:
                last = differing
                if plan.key is not None:
                    a, b = differing
                    candidates += locate(run, plan, by_replica[name], piece,
                                         (int(a[0]["cnt"]), int(b[0]["cnt"])), seen[name])
        looked.append((name, rng, last is not None, candidates))
        if plan.key is None and (last is not None or replicated):
            counts = ((int(last[0][0]["cnt"]), int(last[1][0]["cnt"]))
                      if last is not None else (None, None))
            unnamed.append(Unnamed(name, *counts))
    confirmed: dict[str, Candidates] = {}
    unsure: dict[str, Candidates] = {}  # written on the source throughout the re-checks
    notes: list[str] = []
    for name in sorted({name for name, _, _, c in looked if c}):
        everything = {item for n, _, _, c in looked if n == name for item in c}
        confirmed[name], unsure[name] = confirm(run, plan, by_replica[name],
                                                sort_items(everything), seen[name])
        if unsure[name]:
            notes.append(_unconfirmed(name, plan, unsure[name]))
    differing_chunks: dict[str, int] = {}
    rechecked = 0  # direct: chunks that differed at first sight, in flight
    for name, rng, differed, candidates in looked:
        kept = set(confirmed.get(name, ()))
        rows_found = any(item in kept for item in candidates)
        if rows_found or replicated or (differed and plan.key is None):
            # The replicated method's verdict is exact; the direct one stands when rows
            # are confirmed (or the table has no key to confirm them by).
            differing_chunks[name] = differing_chunks.get(name, 0) + 1
        else:
            rechecked += 1
        if replicated and not rows_found and plan.key is not None \
                and not set(unsure.get(name, ())) & set(candidates):
            notes.append(f"{name}: chunk {rng.describe()} differed when checksummed but "
                         "its rows match now")
    differences: list[Difference] = []
    differing_rows: dict[str, int] = {}
    repair: list[tuple[str, tuple[str, ...]]] = []
    for name, unique in confirmed.items():
        if not unique:
            continue
        differing_rows[name] = len(unique)
        rep_q = plan.replicas[name]
        shown = unique[:run.options.max_differences]
        columns = changed_columns(run, plan, by_replica[name],
                                  [key for kind, key in shown if kind == "changed"])
        for kind, key in shown:
            cols, values = columns.get(canonical_key(key), ((), ()))
            differences.append(Difference(name, kind, tuple(zip(rep_q.key, key, strict=True)),
                                          cols, values))
        if run.options.print_repair:
            repair.append((name, repair_statements(run, plan, by_replica[name], unique)))
    status = "drift" if differing_chunks or differences else "ok"
    result = TableResult(
        plan.name, status, rows, chunks, tuple(sorted(differing_chunks.items())),
        tuple(sorted(differing_rows.items())), tuple(differences),
        time.monotonic() - started, None, resumed_from, tuple(repair), tuple(notes),
        rechecked, unnamed=tuple(unnamed))
    run.state.done(plan.name, result)
    return result


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


def changed_columns(run: Session, plan: TablePlan, replica: Side, keys: list[Bound]
                    ) -> dict[Bound, tuple[tuple[str, ...], tuple[tuple[str, Any, Any], ...]]]:
    """For changed rows, by key: the replica's columns whose text differs (compared as
    the row hash compares them, so across engines too), and with --show-values the two
    values of each (cut at 200 characters). Rows changed again meanwhile may name none."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    rep_q = plan.replicas[replica.name]
    out: dict[Bound, tuple[tuple[str, ...], tuple[tuple[str, Any, Any], ...]]] = {}
    for start in range(0, len(keys), KEY_BATCH):
        run.check_run_time()
        batch = keys[start:start + KEY_BATCH]
        a, b = run.synced(replica, src_q.column_hashes(batch), rep_q.column_hashes(batch))
        source = {canonical_key(r[k] for k in src_q.key): r for r in a}
        differ: dict[Bound, list[int]] = {}
        for row in b:
            key = canonical_key(row[k] for k in rep_q.key)
            if key in source:
                differ[key] = [i for i in range(len(rep_q.columns))
                               if _hash(row[f"dbgauge_c{i}"])
                               != _hash(source[key][f"dbgauge_c{i}"])]
        values: dict[Bound, tuple[tuple[str, Any, Any], ...]] = {}
        if run.options.show_values and differ:
            wanted = list(differ)
            src_rows = {canonical_key(r[k] for k in src_q.key): r
                        for r in run.source.run(src_q.fetch(wanted))}
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


def repair_statements(run: Session, plan: TablePlan, replica: Side, items: Candidates
                      ) -> tuple[str, ...]:
    """What would make `replica` hold the source's rows for `items` (never run)."""
    src_q = plan.source[plan.replicas[replica.name].portable]
    wanted = [key for kind, key in items if kind != "extra"]
    rows: dict[Bound, Row] = {}
    for start in range(0, len(wanted), KEY_BATCH):
        for row in run.source.run(src_q.fetch(wanted[start:start + KEY_BATCH])):
            rows[canonical_key(row[k] for k in src_q.key)] = row
    rep_q = plan.replicas[replica.name]
    return tuple(repair_script(replica.flavor, replica.name, rep_q.schema, rep_q.table,
                               rep_q.columns, src_q.columns, rep_q.key, items, rows))
