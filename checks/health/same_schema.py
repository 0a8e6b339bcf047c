"""check same-schema: whether two or more PostgreSQL databases have the same schema
(check_postgres' same_schema): schemas, tables, their columns (type, NOT NULL, default),
views (definition), sequences, indexes (definition), constraints (definition), functions
(signature, return type, body), triggers (definition) and extensions (version). The
first node is the reference; each other node's differences from it are CRITICAL
findings, one per difference, naming the object and both sides; no thresholds, as
there. Perfdata: each compared node's `differences`.

The nodes are given as usual: `--target a,b`, `--node a=DSN --node b=DSN`, or one
target and `--dbname ref,other` (check_postgres' `--dbname=a,b`). The catalog is read as
`pgtap generate` reads it (`toolkit.pgtap.generate.take_snapshot`) plus what it leaves
out (sql/postgres/same_schema_extras.sql); `--schema` narrows it (default: every user
schema), `--filter` is check_postgres' (`noindexes`, `notrigger=slony`, `nofuncbody`).
Differences from check_postgres: no time-based snapshots (`--suffix`: compare against a
copy instead); owners, permissions and column positions are not compared; extension
members count as their extension's version; and no superuser is needed (check_postgres
reads pg_authid). View definitions are the servers' own text: compare like majors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import words
from dbgauge.checks.health.model import CheckOption, HealthCheck, NodeOutcome, Thresholds
from dbgauge.checks.health.schema_diff import (
    Objects,
    SchemaFilter,
    counted,
    differences,
    objects,
    parse_filter,
)
from dbgauge.checks.health.scope import Scope
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.result import Finding, Status, perf_label

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Deadline, Target

MAX_SHOWN = 50  # findings per node; the count says how many in all


def _read(schemas: Sequence[str], keep: SchemaFilter
          ) -> Callable[[Target, Connection], Objects]:
    def read(node: Target, conn: Connection) -> Objects:
        from dbgauge.toolkit.pgtap.generate import take_snapshot

        snap = take_snapshot(conn, schemas, node.name)
        extras = [(str(r["kind"]), str(r["name"]), str(r["detail"] or ""))
                  for r in conn.query("same_schema_extras", {"schemas": list(snap.schemas)})]
        return objects(snap, extras, bodies=keep.bodies)
    return read


def _compared(reference: str, ref: Objects, name: str, other: Objects,
              keep: SchemaFilter) -> NodeOutcome:
    found = differences(reference, ref, name, other, keep)
    perf = ((perf_label(name, "differences"), float(len(found))),)
    if not found:
        return NodeOutcome(name, perfdata=perf, note=f"same schema as {reference} "
                                                     f"({len(other)} objects)")
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(counted(found).items()))
    shown = [Finding(Status.CRITICAL, name, "schema-differs", m) for m in found[:MAX_SHOWN]]
    if len(found) > MAX_SHOWN:
        shown.append(Finding(Status.CRITICAL, name, "schema-differs",
                             f"... and {len(found) - MAX_SHOWN} more differences"))
    return NodeOutcome(name, tuple(shown), perf,
                       f"{len(found)} differences from {reference} ({kinds})")


def _across(nodes: Sequence[Target], _limits: Thresholds | None, scope: Scope,
            deadline: Deadline | None, down: Status) -> list[NodeOutcome]:
    from dbgauge.checks.nodes import Connected

    keep = parse_filter(scope.option("filter"))
    if len(nodes) < 2:
        raise ConfigError("same-schema compares two or more databases: give --target a,b, "
                          "--node twice, or --dbname ref,other")
    read = _read(words([scope.option("schema")]), keep)
    with Connected(nodes, deadline=deadline, down=down) as conns:
        got = conns.each(read)
        findings = list(conns.findings)
    reference = nodes[0].name
    outcomes = [NodeOutcome(f.node, (f,), note=f.detail) for f in findings]
    if reference not in got:
        return outcomes + [NodeOutcome(n.name, (Finding(
            Status.UNKNOWN, n.name, "no-reference", f"not compared: the reference "
            f"{reference} could not be read"),)) for n in nodes[1:] if n.name in got]
    outcomes.insert(0, NodeOutcome(reference, note=f"the reference ({len(got[reference])} "
                                                    "objects)"))
    outcomes += [_compared(reference, got[reference], n.name, got[n.name], keep)
                 for n in nodes[1:] if n.name in got]
    return outcomes


CHECK = HealthCheck(
    name="same-schema",
    summary="Whether databases have the same schema: the first is the reference "
            "(PostgreSQL).",
    measures="schemas, tables, columns, views, sequences, indexes, constraints, functions, "
             "triggers and extensions of each database against the first's",
    kinds=frozenset({"postgres"}), metric="differences",
    across=_across,
    options=(CheckOption("schema", "NAMES", "Compare these schemas (comma-separated; "
                         "default: every user schema)."),
             CheckOption("filter", "FILTERS", "check_postgres' --filter: noKIND or "
                         "noKIND=REGEX (KIND: schema, table, column, view, index, sequence, "
                         "constraint, trigger, function, extension), nofuncbody.")))
