"""--replicate-check-only: report what the replicate table on each replica already holds,
without checksumming again (pt-table-checksum's option of the same name).

Each replica's replicate table (dbgauge.checksums, or the one --replicate names, in
either layout) is summarised per table with pt-table-checksum's own test for a differing
chunk: the counts or the CRCs differ, or only one of them is NULL -- except a half-written
chunk (source_cnt and source_crc both NULL: the run stopped between writing the chunk and
copying the source's values, e.g. interrupted or blocked by FLUSH TABLES WITH READ LOCK),
which was never compared and is never a difference. A table is drift when any replica holds
a differing chunk (exit 1); a table with half-written chunks and no differing one is not
checked (exit 2, "continue with --resume"), since part of it was never compared; else ok
(exit 0). Rows are not named: that needs a checksum run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import ExitStack

from dbgauge.checks.drift.model import ChecksumOptions, DriftError, Reporter, TableResult
from dbgauge.checks.drift.replicate import on_replica
from dbgauge.checks.drift.result import checksum_result
from dbgauge.checks.drift.select import select_tables
from dbgauge.checks.drift.sides import Side
from dbgauge.toolkit.db import connect
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.result import CheckResult
from dbgauge.toolkit.targets import Target, unique_names

# per table: chunks, rows, differing chunks, half-written chunks, last written
Summary = dict[tuple[str, str], tuple[int, int, int, int, str]]


def _summary(side: Side, options: ChecksumOptions) -> tuple[str, Summary]:
    table = on_replica(side, options.replicate)
    out: Summary = {}
    for r in table.run(side, "checksum_replicate_summary"):
        out[(_text(r["db"]).rstrip(), _text(r["tbl"]).rstrip())] = (
            int(r["chunks"]), int(r["total_rows"] or 0), int(r["differing"] or 0),
            int(r["incomplete"] or 0), _text(r["last_ts"]))
    return table.name, out


def check_only(source: Target, replicas: Sequence[Target], options: ChecksumOptions,
               reporter: Reporter) -> CheckResult:
    """The differing chunks the replicas' replicate table records, per table."""
    started = time.monotonic()
    names = unique_names([source, *replicas])
    by_replica: dict[str, Summary] = {}
    replicate = ""
    with ExitStack() as stack:
        for target, name in zip(replicas, names[1:], strict=True):
            try:
                conn = connect(target)
            except DbgaugeError as exc:
                raise type(exc)(f"replica {name}: {exc}") from None
            stack.callback(conn.close)
            replicate, by_replica[name] = _summary(Side(name, conn, "replica"), options)
    found = {key: (0, True) for summary in by_replica.values() for key in summary}
    if not found:
        raise DriftError(f"{replicate} on the replicas holds no checksums: run a replicated "
                         "checksum first (on MariaDB, a table CHECKSUM TABLE found equal "
                         "whole leaves no chunk rows: --whole-table-time 0 keeps them)")
    wanted = select_tables(found, options, names[0], lambda n: "",
                           where=f"in {replicate} on the replicas")
    results = []
    reporter.plan([(f"{schema}.{table}", 1) for schema, table in wanted])
    for schema, table in wanted:
        results.append(_table_result(schema, table, by_replica, replicate))
        reporter.progress(f"{schema}.{table}", 1, 1)
    return checksum_result("replicate-check-only", names[0], tuple(by_replica),
                           tuple(results), time.monotonic() - started)


def _table_result(schema: str, table: str, by_replica: dict[str, Summary],
                  replicate: str) -> TableResult:
    """One table as the replicas record it: drift, not checked (half-written chunks), ok."""
    key = (schema, table)
    differing = tuple((rep, s[key][2]) for rep, s in by_replica.items()
                      if key in s and s[key][2])
    incomplete = {rep: s[key][3] for rep, s in by_replica.items() if key in s and s[key][3]}
    seen = [s[key] for s in by_replica.values() if key in s]
    missing = [rep for rep, s in by_replica.items() if key not in s]
    notes = [f"as recorded in {replicate}, last written {max(x[4] for x in seen)}"]
    if missing:
        notes.append(f"no checksums of it on {', '.join(missing)}")
    where = ", ".join(f"{n} half-written chunk(s) on {rep}" for rep, n in incomplete.items())
    half = (f"{where} (source_crc NULL: the run that wrote them stopped before recording the "
            "source's values), not compared: continue that run with --resume, or run the "
            "checksum again")
    status = "drift" if differing else "unchecked" if incomplete else "ok"
    if incomplete and differing:
        notes.append(half)
    return TableResult(f"{schema}.{table}", status, rows=max(x[1] for x in seen),
                       chunks=max(x[0] for x in seen), differing_chunks=differing,
                       reason=half if status == "unchecked" else None, notes=tuple(notes))
