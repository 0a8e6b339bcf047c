"""A walked table's verdict: which chunks differ, which rows, and the repair statements.

After the last chunk, the suspects -- chunks that differed when walked (direct) or whose
replica values in dbgauge.checksums differ from the source's (replicated) -- are
re-checked and bisected, every candidate row of a replica is confirmed in one set of
rounds, and the table's result is written to the --resume state.
"""

from __future__ import annotations

import json
import time

from checks.drift.chunks import Bound, KeyRange, canonical_key, decode_bound, sort_items
from checks.drift.model import Difference, DriftError, TableResult
from checks.drift.plan import TablePlan
from checks.drift.recheck import KEY_BATCH, Candidates, confirm, locate, recheck
from checks.drift.repair import repair_script
from checks.drift.session import Session
from checks.drift.sides import Side
from toolkit.db import Row
from toolkit.db.values import text as _text

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


def finish_table(run: Session, plan: TablePlan, rows: int, chunks: int, suspects: Suspects,
                 started: float, resumed_from: int | None) -> TableResult:
    """Re-check the suspects, name the rows, and record the table's result."""
    replicated = run.method == "replicated"
    if replicated:
        suspects = replicated_suspects(run, plan, chunks)
    by_replica = {rep.name: rep for rep in run.replicas}
    # Re-check and bisect every suspect chunk, then confirm all candidate rows of a
    # replica together (the confirmation rounds sleep between re-reads).
    looked: list[tuple[str, KeyRange, bool, Candidates]] = []
    for name, rng in suspects:
        differing = recheck(run, plan, by_replica[name], rng, delay_first=False)
        candidates: Candidates = []
        if differing is not None and plan.key is not None:
            a, b = differing
            candidates = locate(run, plan, by_replica[name], rng,
                                (int(a[0]["cnt"]), int(b[0]["cnt"])))
        looked.append((name, rng, differing is not None, candidates))
    confirmed: dict[str, Candidates] = {}
    for name in {name for name, _, _, c in looked if c}:
        everything = {item for n, _, _, c in looked if n == name for item in c}
        confirmed[name] = sort_items(confirm(run, plan, by_replica[name],
                                             sort_items(everything)))
    differing_chunks: dict[str, int] = {}
    notes: list[str] = []
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
        if plan.key is None and (differed or replicated):
            notes.append(f"{name}: the table differs; without a key its rows cannot be "
                         "named")
        elif replicated and not rows_found:
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
        for kind, key in unique[:run.options.max_differences]:
            differences.append(Difference(name, kind, tuple(zip(rep_q.key, key,
                                                                strict=True))))
        if run.options.print_repair:
            repair.append((name, repair_statements(run, plan, by_replica[name], unique)))
    status = "drift" if differing_chunks or differences else "ok"
    result = TableResult(
        plan.name, status, rows, chunks, tuple(sorted(differing_chunks.items())),
        tuple(sorted(differing_rows.items())), tuple(differences),
        time.monotonic() - started, None, resumed_from, tuple(repair), tuple(notes),
        rechecked)
    run.state.done(plan.name, result)
    return result


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
