"""`run_checksum`: the entry point of a checksum run, for the CLI and the daemon's job.

It validates what was asked, opens the session (every server, the replica links, the
method), refuses early what cannot work (a stopped replica, an unknown or unreadable
table, the replicated method without its privileges), then checks the tables one by one
and returns the run as a `toolkit.result.CheckResult` whose evidence is the JSON report.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import replace

from dbgauge.checks.drift.checkonly import check_only
from dbgauge.checks.drift.discover import discover
from dbgauge.checks.drift.model import (
    METHODS,
    ChecksumOptions,
    DriftError,
    Interrupted,
    LogReporter,
    Reporter,
    TableResult,
)
from dbgauge.checks.drift.plan import TableEntry, list_tables
from dbgauge.checks.drift.replicate import ReplicateTable, parse_replicate, prepare
from dbgauge.checks.drift.result import checksum_result
from dbgauge.checks.drift.session import Session
from dbgauge.checks.drift.sides import Side, check_kinds, grant_hint
from dbgauge.checks.drift.walk import check_table
from dbgauge.toolkit.db.privileges import denied
from dbgauge.toolkit.errors import ConfigError, QueryError
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.result import CheckResult
from dbgauge.toolkit.targets import Target


def run_checksum(source: Target, replicas: Sequence[Target],
                 options: ChecksumOptions, reporter: Reporter | None = None) -> CheckResult:
    """Compare `replicas` with `source`; raises DbgaugeError when nothing can be checked
    (unreachable server, unknown table, replication stopped, missing privilege)."""
    if options.method is not None and options.method not in METHODS:
        raise ConfigError(f"--method {options.method!r}: use replicated or direct")
    if options.chunk_size is not None and options.chunk_size < 1:
        raise ConfigError("--chunk-size must be at least 1 row")
    reporter = reporter or LogReporter()
    if replicas and options.recursion_method:
        raise ConfigError("give --replica or --recursion-method, not both")
    if not replicas:  # pt-table-checksum finds them (processlist, hosts, a DSN table)
        check_kinds([source])
        replicas = discover(source, options.recursion_method, reporter)
    check_kinds([source, *replicas])
    if options.replicate_check_only:
        return check_only(source, replicas, options, reporter)
    started = time.monotonic()
    with ExitStack() as stack:
        run = Session(source, replicas, options, reporter, stack)
        if options.replicate is not None and run.method != "replicated":
            raise ConfigError(f"--replicate {options.replicate}: the table is written by the "
                              "replicated method only (MySQL/MariaDB replicas of the source)")
        for link in run.links.values():
            link.check()
        # Unknown or unreadable tables fail before anything is written.
        tables = list_tables(run.source, options)
        if run.method == "replicated":
            run.replicate = _prepare_replicated(run.source, options.replicate)
        run.started = time.monotonic()  # --run-time counts checking, not connecting
        try:
            results = _check_tables(run, tables)
        except KeyboardInterrupt:
            run.state.save(force=True)
            raise Interrupted(f"interrupted; progress is saved in {run.state.path}: continue "
                              "with --resume") from None
        run.state.complete()
        return checksum_result(run.method, run.source.name,
                               tuple(r.name for r in run.replicas), tuple(results),
                               time.monotonic() - started, tuple(run.notes))


def _check_tables(run: Session, tables: list[TableEntry]) -> list[TableResult]:
    results: list[TableResult] = []
    run.reporter.plan([(f"{schema}.{table}", estimate) for schema, table, estimate, _ in tables])
    for schema, table, estimate, readable in tables:
        name = f"{schema}.{table}"
        previous = run.state.finished(name)
        if previous is not None:
            results.append(replace(previous, notes=(*previous.notes,
                                                    "result kept from the resumed run")))
            continue
        if not readable:
            results.append(TableResult(name, "unchecked", reason=(
                f"no privilege to read it on {run.source.name}: "
                f"{grant_hint(run.source, name)}")))
            continue
        results.append(check_table(run, schema, table, estimate))
    return results


def _prepare_replicated(source: Side, replicate: str | None) -> ReplicateTable:
    """Session binlog_format=STATEMENT and the replicate table, or a clear error."""
    try:
        source.q("checksum_binlog_format")
    except QueryError as exc:
        if denied(exc):
            raise DriftError(
                f"the replicated method needs the privilege to set the session binlog_format "
                f"on source {source.name} (MariaDB: BINLOG ADMIN or SUPER; MySQL 8: "
                "SESSION_VARIABLES_ADMIN or SYSTEM_VARIABLES_ADMIN), which this user lacks: "
                "grant it, or use --method direct (read-only)") from None
        raise
    name = ".".join(parse_replicate(replicate))
    try:
        return prepare(source, replicate)
    except QueryError as exc:
        raise DriftError(
            f"cannot create {name} on source {source.name}: {redact(str(exc))}; "
            f"the replicated method needs CREATE, INSERT, UPDATE, DELETE and SELECT on "
            f"{name.split('.')[0]}.* (or use --method direct)") from None
