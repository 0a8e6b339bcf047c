"""What every `dbgauge check` shares: the nodes it looks at, running per node, thresholds.

A check looks at nodes: configured targets (`--config` + `--target`) or servers named by
DSN on the command line (`--node`). Each node gets its own connection, opened in
parallel; a node that cannot be reached or queried becomes an UNKNOWN finding naming
the node and the reason -- never an OK. The health checks themselves live one per module
(`health_replication`, `health_lag`, `health_connections`, `health_pgbouncer_pools`,
`health_locks`) and reuse the collectors' SQL and parsers; `CHECKS` maps the command
names to them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from checks import CheckResult, Finding, Status
from checks.findings import perf_label, plugin_result, worst
from toolkit.errors import ConfigError, ConnectError, DbgaugeError

if TYPE_CHECKING:
    from collectors.base import Sample
    from toolkit.config import Config, TargetConfig
    from toolkit.db import Connection

_MAX_PARALLEL = 8
_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass(frozen=True)
class Thresholds:
    """Warning/critical levels of a check whose value is worse when higher."""

    warning: float
    critical: float

    def status(self, value: float) -> Status:
        if value >= self.critical:
            return Status.CRITICAL
        if value >= self.warning:
            return Status.WARNING
        return Status.OK

    def override(self, warning: float | None, critical: float | None) -> Thresholds:
        """These defaults with the user's values; a default that would contradict the one
        value given follows it (--critical 1 alone also means warning at 1)."""
        w = self.warning if warning is None else warning
        c = self.critical if critical is None else critical
        if warning is None and w > c:
            w = c
        if critical is None and c < w:
            c = w
        return Thresholds(w, c)

    def validate(self, what: str) -> Thresholds:
        if self.warning > self.critical:
            raise ConfigError(f"{what}: --warning {self.warning:g} is above --critical "
                              f"{self.critical:g}")
        return self


@dataclass(frozen=True)
class Node:
    """One server a check looks at; `explicit` if the user named it (not just configured)."""

    target: TargetConfig
    explicit: bool = True

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def kind(self) -> str:
        return self.target.kind

    def connect(self) -> Connection:
        from toolkit.db import connect

        return connect(self.target)


_NAMED_DSN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.:-]{0,62})=(?P<dsn>[a-z]+://.*)$")


def node_from_dsn(spec: str, *, password_file: Path | None = None,
                  password_env: str | None = None,
                  heartbeat_table: str | None = None) -> Node:
    """'[NAME=]DSN' from the command line -> Node (named host:port when NAME is absent).

    A postgresql:// DSN to the database `pgbouncer` is PgBouncer's admin console.
    """
    from pydantic import ValidationError

    from toolkit.config import TargetConfig
    from toolkit.dsn import parse_dsn
    from toolkit.redact import redact

    m = _NAMED_DSN.match(spec)
    dsn = m.group("dsn") if m else spec
    params = parse_dsn(dsn)
    name = m.group("name") if m else params.address.replace("/", "_")[-63:].lstrip("_.:-")
    kind = "mysql" if params.family == "mysql" else (
        "pgbouncer" if params.dbname == "pgbouncer" else "postgres")
    settings: dict[str, object] = {"name": name or "node", "kind": kind, "dsn": dsn}
    if password_file is not None:
        settings["password_file"] = password_file
    if password_env is not None:
        settings["password_env"] = password_env
    if heartbeat_table is not None and kind == "mysql":
        settings["heartbeat"] = {"mode": "read", "table": heartbeat_table}
    try:
        return Node(TargetConfig.model_validate(settings))
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        reason = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(redact(f"--node {spec}: {where + ': ' if where else ''}{reason}")
                          ) from None


def nodes_from_config(config: Config, names: Sequence[str] = ()) -> list[Node]:
    """The named targets (explicit), or every configured target when none is named."""
    if names:
        return [Node(config.target(name)) for name in names]
    return [Node(t, explicit=False) for t in config.targets]


def select_nodes(config_path: str | None, targets: Sequence[str], dsns: Sequence[str],
                 password_file: Path | None = None, password_env: str | None = None,
                 heartbeat_table: str | None = None) -> list[Node]:
    """The nodes of a `dbgauge check` command line: --node DSNs, and configured targets
    when --target names some or when no --node is given ('a,b' lists are split)."""
    from toolkit.config import load_config

    names = [n.strip() for item in targets for n in item.split(",") if n.strip()]
    nodes = [node_from_dsn(d, password_file=password_file, password_env=password_env,
                           heartbeat_table=heartbeat_table) for d in dsns]
    if names or not nodes:
        if config_path is None:
            raise ConfigError("nothing to check: give --node DSN (repeatable) or --config FILE"
                              " (or set DBGAUGE_CONFIG)")
        nodes = nodes_from_config(load_config(config_path), names) + nodes
    twice = sorted(name for name, n in Counter(n.name for n in nodes).items() if n > 1)
    if twice:
        raise ConfigError(f"two nodes are named {twice[0]!r}: name them as NAME=DSN")
    return nodes


@dataclass(frozen=True)
class NodeOutcome:
    """What a check found on one node: findings, perfdata and a short note for the summary."""

    node: str
    findings: tuple[Finding, ...] = ()
    perfdata: tuple[tuple[str, float], ...] = ()
    note: str = ""

    @property
    def status(self) -> Status:
        return worst(f.severity for f in self.findings)


def failure(node: str, exc: BaseException) -> NodeOutcome:
    """An UNKNOWN outcome that says which node and why (never a password)."""
    from toolkit.redact import redact

    if isinstance(exc, ConnectError):  # its message says "cannot connect to host:port: why"
        kind, detail = "unreachable", str(exc)
    elif isinstance(exc, DbgaugeError):
        kind, detail = "query-failed", f"could not be checked: {exc}"
    else:  # a bug must still not look like OK
        kind, detail = "check-failed", f"could not be checked ({type(exc).__name__}: {exc})"
    detail = redact(detail)
    return NodeOutcome(node, (Finding(Status.UNKNOWN, node, kind, detail),), note=detail)


def parallel(items: Sequence[_T], work: Callable[[_T], _R]) -> list[_R | Exception]:
    """`work` on every item in threads (servers answer in parallel), results in order.

    An exception is returned in its item's place, so one bad node cannot hide the others.
    """
    def one(item: _T) -> _R | Exception:
        try:
            return work(item)
        except Exception as exc:
            return exc

    if not items:
        return []
    with ThreadPoolExecutor(max_workers=min(_MAX_PARALLEL, len(items)),
                            thread_name_prefix="check") as pool:
        return list(pool.map(one, items))


def each_node(nodes: Sequence[Node], work: Callable[[Node, Connection], NodeOutcome]
              ) -> list[NodeOutcome]:
    """Run `work` on every node with its own connection, in parallel, in node order."""
    def one(node: Node) -> NodeOutcome:
        conn = node.connect()
        try:
            return work(node, conn)
        finally:
            conn.close()

    return [r if isinstance(r, NodeOutcome) else failure(n.name, r)
            for n, r in zip(nodes, parallel(nodes, one), strict=True)]


class HealthCheck(Protocol):
    """One `dbgauge check NAME` health check (a module with these attributes)."""

    NAME: str
    HELP: str
    KINDS: frozenset[str]
    DEFAULTS: Thresholds | None  # None: the check takes no --warning/--critical
    METRIC: str  # the perfdata metric the thresholds apply to, unit in its suffix

    def evaluate(self, node: Node, conn: Connection, limits: Thresholds | None
                 ) -> NodeOutcome:
        ...


def health_checks() -> Mapping[str, HealthCheck]:
    """Command name -> check module (imported lazily: the CLI starts fast)."""
    from checks import (
        health_connections,
        health_lag,
        health_locks,
        health_pgbouncer_pools,
        health_replication,
    )

    modules: tuple[HealthCheck, ...] = (health_replication, health_lag, health_connections,
                                        health_pgbouncer_pools, health_locks)
    return {m.NAME: m for m in modules}


@dataclass(frozen=True)
class Measured:
    """One node's value of a thresholded metric, with what to say about it."""

    value: float
    text: str  # e.g. "lag 0.31 s (heartbeat)"
    evidence: Mapping[str, str] = field(default_factory=dict)


def judged(node: Node, limits: Thresholds, measured: Measured, *, kind: str, metric: str,
           extra: Sequence[tuple[str, float]] = ()) -> NodeOutcome:
    """A NodeOutcome for one thresholded value: a finding only when it is not OK."""
    status = limits.status(measured.value)
    findings: tuple[Finding, ...] = ()
    if status is not Status.OK:
        level = limits.critical if status is Status.CRITICAL else limits.warning
        findings = (Finding(status, node.name, kind,
                            f"{measured.text} (threshold {level:g})",
                            dict(measured.evidence)),)
    perf = ((perf_label(node.name, metric), measured.value),
            *((perf_label(node.name, m), v) for m, v in extra))
    return NodeOutcome(node.name, findings, perf, measured.text)


def values(samples: Iterable[Sample]) -> dict[str, float]:
    """A collector's unlabelled samples by metric name (to reuse its collect())."""
    return {s.name: s.value for s in samples if not s.labels}


def not_applicable(node: Node, what: str) -> NodeOutcome:
    """A node the check has nothing to measure on (a primary for `lag`): OK, said so."""
    return NodeOutcome(node.name, note=what)


def run_health(check: HealthCheck, nodes: Sequence[Node],
               limits: Thresholds | None = None) -> CheckResult:
    """Run one health check on the nodes of the kinds it supports.

    Configured targets of other kinds are skipped; a node the user named explicitly that
    the check cannot apply to is UNKNOWN (a typo must not turn into OK).
    """
    if limits is None:
        limits = check.DEFAULTS
    elif check.DEFAULTS is None:
        raise ConfigError(f"check {check.NAME} takes no --warning/--critical: each problem "
                          "it finds has its own severity")
    if limits is not None:
        limits.validate(check.NAME)
    runnable: list[Node] = []
    skipped: list[NodeOutcome] = []
    for node in nodes:
        if node.kind in check.KINDS:
            runnable.append(node)
        elif node.explicit:
            kinds = ", ".join(sorted(check.KINDS))
            skipped.append(NodeOutcome(node.name, (Finding(
                Status.UNKNOWN, node.name, "not-applicable",
                f"check {check.NAME} applies to kind {kinds}, not {node.kind}"),)))
    chosen = limits
    outcomes = each_node(runnable, lambda n, c: check.evaluate(n, c, chosen)) + skipped
    if not outcomes:
        return plugin_result(check.NAME, [Finding(
            Status.UNKNOWN, "", "no-nodes",
            f"no node of kind {', '.join(sorted(check.KINDS))} to check")],
            "nothing to check")
    return summarize(check.NAME, outcomes)


def summarize(name: str, outcomes: Sequence[NodeOutcome]) -> CheckResult:
    """One result from per-node outcomes; the summary names problem nodes first."""
    findings = [f for o in outcomes for f in o.findings]
    perf = [p for o in outcomes for p in o.perfdata]
    bad = [o for o in outcomes if o.findings]
    good = [o for o in outcomes if not o.findings]
    parts = [f"{o.node}: {o.findings[0].detail}" + (
        f" (+{len(o.findings) - 1} more)" if len(o.findings) > 1 else "") for o in bad]
    parts += [f"{o.node}: {o.note}" if o.note else o.node for o in good]
    return plugin_result(name, findings, "; ".join(parts), perf)
