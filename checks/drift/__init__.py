"""`dbgauge checksum`: prove a replica holds the same rows as its source, and name the rows
that differ.

Two methods (docs/drift.md):

- **replicated** (MySQL family, the default there): pt-table-checksum's approach. Each
  chunk's count and hash are written into `dbgauge.checksums` by a REPLACE ... SELECT logged
  as a statement, so every replica recomputes the same chunk at the same point of the
  binlog: exact under live writes.
- **direct** (any pair, across engines too): each chunk is hashed on every side at once
  with type-normalised expressions. A replica of the source is first brought to the
  source's GTID/LSN; chunks that differ are re-checked (after waiting for the replica to
  reach the source's position again) so in-flight writes are not reported.

On MariaDB pairs, a quiet table expected to take at most `whole_table_time` is first
compared whole with CHECKSUM TABLE, and walked only if the values differ. Both methods walk
the primary key (or a non-null unique key) in chunks sized to `chunk_time`, pause while a
replica lags more than `max_lag` or the source is busy, stop with a clear message when a
replica's replication stops, and bisect differing chunks down to rows whose keys they
report. dbgauge never writes outside its own `dbgauge` schema: repair statements
are returned, never run.

The package, by responsibility:

- `model`: options, the chunks that differ (`Suspect`), per-table results, errors, the
  reporter protocol; `result`: the run as a `toolkit.result.CheckResult` (evidence = the
  JSON report);
- `sides`, `links`: one server of the comparison, and how a replica follows the source;
- `context`: the run's immutable `Context` (sides, links, method, limits, --run-time) with
  the throttling and synchronisation every comparison goes through; what changes as the
  run goes on lives in two objects of its own: the `Throttle` clock and the --resume file
  (`state`);
- one table, step by step, each returning what it found: `plan` (which tables, and how
  each is compared), `whole_table` (the CHECKSUM TABLE pre-check), `walk` (the chunk walk;
  `pipeline`: the direct method's sides pipelined), `recheck` and `verdict` (re-checks,
  bisection, the rows that differ and their repair); `run`: `run_checksum`, which opens
  the context and checks the tables one by one;
- pure helpers: `chunks` (key ranges, sizing, row diffs), `normalize` (row text and
  hashes), `sql` (statements), `repair` (repair statements);
- pt-table-checksum's options: `select` (--databases/--tables filters and patterns),
  `load` (--max-load), `discover` (--recursion-method), `replicate` (the replicate
  table: dbgauge.checksums or --replicate DB.TBL in pt's layout), `checkonly`
  (--replicate-check-only);
- `schedule`: the metrics of the daemon's scheduled checksums, made of a run's result (the
  job itself is `checks.schedule.ChecksumJob`).
"""

from __future__ import annotations

from dbgauge.checks.drift.model import (
    METHODS,
    ChecksumOptions,
    DriftError,
    Interrupted,
    LogReporter,
    ReplicationStopped,
    Reporter,
)
from dbgauge.checks.drift.run import run_checksum
from dbgauge.checks.drift.sides import check_kinds

__all__ = ["METHODS", "ChecksumOptions", "DriftError", "Interrupted", "LogReporter",
           "ReplicationStopped", "Reporter", "check_kinds", "run_checksum"]
