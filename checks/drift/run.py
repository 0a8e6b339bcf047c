"""`run_checksum`: the entry point of a checksum run, for the CLI and the daemon's job.

It validates what was asked, opens the run's context (every server, the replica links,
the method), refuses early what cannot work (a stopped replica, an unknown or unreadable
table, the replicated method without its privileges), then checks the tables one by one
-- plan, whole-table pre-check or chunk walk, verdict -- and returns the run as a
`toolkit.result.CheckResult` whose evidence is the JSON report.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace

from dbgauge.checks.drift.checkonly import check_only
from dbgauge.checks.drift.context import QUERY_TIMEOUT, Context, open_context
from dbgauge.checks.drift.discover import discover
from dbgauge.checks.drift.model import (
    METHODS,
    ChecksumOptions,
    DriftError,
    Interrupted,
    LogReporter,
    ReplicationStopped,
    Reporter,
    TableResult,
)
from dbgauge.checks.drift.plan import TableEntry, list_tables, plan_table
from dbgauge.checks.drift.replicate import ReplicateTable, parse_replicate, prepare
from dbgauge.checks.drift.result import checksum_result
from dbgauge.checks.drift.sides import (
    Side,
    check_kinds,
    grant_hint,
    lock_wait_hint,
    lock_waited,
    no_answer,
)
from dbgauge.checks.drift.verdict import finish_table
from dbgauge.checks.drift.walk import walk_table
from dbgauge.checks.drift.whole_table import whole_table
from dbgauge.toolkit.db.privileges import denied
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.errors import ConfigError, DbgaugeError, QueryError, WriteRefused
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
        ctx = open_context(source, replicas, options, reporter, stack)
        if options.replicate is not None and ctx.method != "replicated":
            raise ConfigError(f"--replicate {options.replicate}: the table is written by the "
                              "replicated method only (MySQL/MariaDB replicas of the source)")
        for link in ctx.links.values():
            link.check()
        if not options.different_databases:
            same_databases(ctx.source, ctx.replicas)
        # Unknown or unreadable tables fail before anything is written.
        tables = list_tables(ctx.source, options)
        if not tables:  # nothing to compare (UNKNOWN, not "no drift"): before any write
            return checksum_result(ctx.method, ctx.source.name,
                                   tuple(r.name for r in ctx.replicas), (),
                                   time.monotonic() - started, ctx.notes)
        if ctx.method == "replicated":
            ctx = replace(ctx, replicate=ReplicateTable(*parse_replicate(options.replicate)))
            _writable_at_start(ctx)  # nothing is written on a read-only source
            ctx = replace(ctx, replicate=_prepare_replicated(ctx.source, options.replicate))
        ctx = replace(ctx, started=time.monotonic())  # --run-time counts checking only
        try:
            results = _check_tables(ctx, tables)
        except KeyboardInterrupt:
            ctx.state.save(force=True)
            raise Interrupted(f"interrupted; progress is saved in {ctx.state.path}: continue "
                              "with --resume") from None
        except WriteRefused:  # the source turned read-only (a switchover) during the run
            ctx.state.save(force=True)
            raise
        except QueryError as exc:  # a lock wait (FTWRL), a side that stopped answering
            ctx.state.save(force=True)
            raise _stopped_error(ctx, exc) from None
        except ReplicationStopped as exc:
            ctx.state.save(force=True)
            raise ReplicationStopped(f"{exc}; progress is saved in {ctx.state.path}: "
                                     "continue with --resume") from None
        ctx.state.complete()
        return checksum_result(ctx.method, ctx.source.name,
                               tuple(r.name for r in ctx.replicas), tuple(results),
                               time.monotonic() - started, ctx.notes)


def same_databases(source: Side, replicas: Sequence[Side]) -> None:
    """Refuse PostgreSQL sides connected to databases of different names: each compares
    the tables of its one database, so `app` against `drift` compares unrelated tables
    (or none) and must not end in "no drift" by accident."""
    sides = [source, *replicas]
    if any(side.mysql for side in sides):
        return  # MySQL-family sides compare schemas by name, whatever the DSN's database
    names = {side.name: _text(side.q("checksum_database")[0]["datname"]) for side in sides}
    if len(set(names.values())) > 1:
        shown = ", ".join(f"{name} is connected to database {db}" for name, db in names.items())
        raise ConfigError(f"the sides name different databases ({shown}): point every DSN "
                          "at the same database, or give --different-databases if one is "
                          "a copy under another name")


@dataclass(frozen=True)
class Checked:
    """One table's result, and the speed CHECKSUM TABLE is expected to read the next
    table at (rows/s, learnt from the pre-checks so far; None: not measured yet)."""

    result: TableResult
    whole_table_rate: float | None


def _check_tables(ctx: Context, tables: list[TableEntry]) -> list[TableResult]:
    """Every table's result, in order: kept from the resumed run, unreadable, or checked."""
    results: list[TableResult] = []
    rate = ctx.options.whole_table_rate
    ctx.reporter.plan([(entry.name, entry.estimate) for entry in tables])
    for entry in tables:
        previous = ctx.state.finished(entry.name)
        if previous is not None:
            results.append(replace(previous, notes=(*previous.notes,
                                                    "result kept from the resumed run")))
            continue
        if not entry.readable:
            results.append(TableResult.unchecked(entry.name, (
                f"no privilege to read it on {ctx.source.name}: "
                f"{grant_hint(ctx.source, entry.name)}")))
            continue
        checked = check_table(ctx, entry, rate)
        results.append(checked.result)
        rate = checked.whole_table_rate
    return results


def check_table(ctx: Context, entry: TableEntry, rate: float | None) -> Checked:
    """Plan, pre-check or walk, and judge one table (continuing a saved walk); `rate` is
    the speed the whole-table pre-check expects of CHECKSUM TABLE."""
    planned = plan_table(ctx.source, ctx.replicas, ctx.options, entry.schema, entry.table,
                         entry.estimate)
    if isinstance(planned, TableResult):
        return Checked(planned, rate)
    plan = planned
    saved = ctx.state.walk(plan.name)
    started = time.monotonic()
    if saved is not None and saved.chunks:
        ctx.reporter.note(f"{plan.name}: resuming at chunk {saved.chunks + 1}")
    else:
        pre = whole_table(ctx, plan, started, rate)
        rate = pre.rate
        if pre.result is not None:
            ctx.reporter.progress(plan.name, pre.result.rows, pre.result.rows)
            ctx.state.done(plan.name, pre.result)
            return Checked(pre.result, rate)
    walked = walk_table(ctx, plan, saved)
    return Checked(finish_table(ctx, plan, walked, started), rate)


def _stopped_error(ctx: Context, exc: QueryError) -> DbgaugeError:
    """What a statement's failure in the middle of a run tells the user: a lock wait or a
    side that did not answer in --max-wait said as such; any other error as it is."""
    saved = f"progress is saved in {ctx.state.path}: continue with --resume"
    side = _side_of(ctx, exc)
    if lock_waited(exc):
        return DriftError(f"{lock_wait_hint(side, 'a checksum statement')}; {saved} "
                          f"({redact(str(exc))})")
    if no_answer(exc):
        waited = min(QUERY_TIMEOUT, ctx.options.max_pause)
        return DriftError(f"{side.role} {side.name} did not answer in time (--max-wait: "
                          f"{waited:g} s for one statement): the server is stopped, hung or "
                          f"unreachable; the run gave up; {saved} once it answers "
                          f"({redact(str(exc))})")
    return exc.again(f"{exc}; {saved}")


def _side_of(ctx: Context, exc: QueryError) -> Side:
    """The side whose error `exc` is (its message starts with "role name: ")."""
    for side in ctx.replicas:
        if str(exc).startswith(f"{side.role} {side.name}: "):
            return side
    return ctx.source


def _writable_at_start(ctx: Context) -> None:
    """WriteRefused on a read-only source, unless --allow-read-only (then noted)."""
    state = ctx.source_writable()
    if not state.writable:
        ctx.reporter.note(f"source {ctx.source.name} is read-only ({', '.join(state.found)}): "
                          "writing the checksum chunks anyway, as --allow-read-only asks")


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
        if lock_waited(exc):
            raise DriftError(f"{lock_wait_hint(source, f'creating {name}')} "
                             f"({redact(str(exc))})") from None
        raise DriftError(
            f"cannot create {name} on source {source.name}: {redact(str(exc))}; "
            f"the replicated method needs CREATE, INSERT, UPDATE, DELETE and SELECT on "
            f"{name.split('.')[0]}.* (or use --method direct)") from None
