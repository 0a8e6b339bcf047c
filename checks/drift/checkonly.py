"""--replicate-check-only: report what the replicate table on each replica already holds,
without checksumming again (pt-table-checksum's option of the same name).

Each replica's replicate table (dbgauge.checksums, or the one --replicate names, in
either layout) is summarised per table with pt-table-checksum's own test for a differing
chunk: the counts or the CRCs differ, or only one of them is NULL. A table is drift when
any replica holds a differing chunk; the run exits 1 then, else 0. Rows are not named:
that needs a checksum run.
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

Summary = dict[tuple[str, str], tuple[int, int, int, str]]  # chunks, rows, differing, ts


def _summary(side: Side, options: ChecksumOptions) -> tuple[str, Summary]:
    table = on_replica(side, options.replicate)
    out: Summary = {}
    for r in table.run(side, "checksum_replicate_summary"):
        out[(_text(r["db"]).rstrip(), _text(r["tbl"]).rstrip())] = (
            int(r["chunks"]), int(r["total_rows"] or 0), int(r["differing"] or 0),
            _text(r["last_ts"]))
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
                         "checksum first")
    wanted = select_tables(found, options, names[0], lambda n: "",
                           where=f"in {replicate} on the replicas")
    results = []
    reporter.plan([(f"{schema}.{table}", 1) for schema, table in wanted])
    for schema, table in wanted:
        differing = tuple((rep, s[(schema, table)][2]) for rep, s in by_replica.items()
                          if (schema, table) in s and s[(schema, table)][2])
        seen = [s[(schema, table)] for s in by_replica.values() if (schema, table) in s]
        missing = [rep for rep, s in by_replica.items() if (schema, table) not in s]
        notes = [f"as recorded in {replicate}, last written {max(x[3] for x in seen)}"]
        if missing:
            notes.append(f"no checksums of it on {', '.join(missing)}")
        results.append(TableResult(
            f"{schema}.{table}", "drift" if differing else "ok",
            rows=max(x[1] for x in seen), chunks=max(x[0] for x in seen),
            differing_chunks=differing, notes=tuple(notes)))
        reporter.progress(f"{schema}.{table}", 1, 1)
    return checksum_result("replicate-check-only", names[0], tuple(by_replica),
                           tuple(results), time.monotonic() - started)
