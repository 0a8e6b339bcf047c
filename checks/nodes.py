"""Work on each node of a check: its own connection, opened in parallel, and one vocabulary
for a node that could not be checked. Health checks, split-brain and status all run here,
so a node means the same to each of them.

A node that cannot be checked is a finding naming the node and why -- never an OK. A
server that is down is CRITICAL, as check_postgres' `connection`, check_pgsql and
check_mysql say it (many monitoring set-ups never notify on UNKNOWN), unless the caller
asks for UNKNOWN (`down`): `unreachable` (no connection: refused, timed out) and
`auth-failed` (the server is up, the password was refused). UNKNOWN: `no-answer` (no
result by the run's deadline: the node is named, the other nodes' results are kept),
`query-failed` (a statement failed), `insufficient-privilege` (the monitoring role cannot
see what the check measures: the detail names the grant), `check-failed` (a bug: it must
still not look like OK). A node the user named that is of a kind the check does not apply to is
`not-applicable` (a typo must not turn into OK); configured targets the user did not name
are left out without a word.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from dbgauge.toolkit.db import Connection, connect
from dbgauge.toolkit.db.privileges import denied
from dbgauge.toolkit.errors import AuthError, ConnectError, DbgaugeError, NotVisible, QueryError
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.result import Finding, Status
from dbgauge.toolkit.targets import Deadline, Selection, Target, Unfinished, fan_out

log = logging.getLogger(__name__)

UNREACHABLE = "unreachable"
AUTH_FAILED = "auth-failed"
NO_ANSWER = "no-answer"
QUERY_FAILED = "query-failed"
INSUFFICIENT_PRIVILEGE = "insufficient-privilege"
CHECK_FAILED = "check-failed"
NOT_APPLICABLE = "not-applicable"
# Every kind of finding a node that was not checked can get, in that order.
NOT_CHECKED = (UNREACHABLE, AUTH_FAILED, NO_ANSWER, QUERY_FAILED, INSUFFICIENT_PRIVILEGE,
               CHECK_FAILED, NOT_APPLICABLE)

_R = TypeVar("_R")


def failure(node: str, exc: BaseException, *, down: Status = Status.CRITICAL,
            deadline: Deadline | None = None) -> Finding:
    """A finding that says which node and why (never a password): a server that is down
    gets the state `down`; a rejected password is `auth-failed` with what to check, not
    `unreachable` -- the server is up, but no check can run. Anything else is UNKNOWN."""
    severity = Status.UNKNOWN
    if isinstance(exc, AuthError):  # "authentication failed for user 'u' at h:p: check ..."
        kind, detail, severity = AUTH_FAILED, str(exc), down
    elif isinstance(exc, ConnectError):  # its message says "cannot connect to host:port: why"
        kind, detail, severity = UNREACHABLE, str(exc), down
    elif isinstance(exc, NotVisible) or (isinstance(exc, QueryError) and denied(exc)):
        # "the role r cannot see ...: GRANT ... TO r"; "x needs the P privilege (GRANT ..."
        kind, detail = INSUFFICIENT_PRIVILEGE, str(exc)
    elif isinstance(exc, Unfinished):
        within = f" within {deadline.said}" if deadline is not None else " in time"
        kind, detail = NO_ANSWER, f"did not answer{within}"
    elif isinstance(exc, DbgaugeError):
        kind, detail = QUERY_FAILED, f"could not be checked: {exc}"
    else:  # a bug must still not look like OK
        kind, detail = CHECK_FAILED, f"could not be checked ({type(exc).__name__}: {exc})"
    return Finding(severity, node, kind, redact(detail))


def applicable(check: str, kinds: Collection[str], nodes: Selection
               ) -> tuple[tuple[Target, ...], list[Finding]]:
    """The nodes of the kinds a check applies to, and a `not-applicable` finding for each
    node the user named that is of another kind."""
    fit, misfits = nodes.of_kinds(kinds)
    names = ", ".join(sorted(kinds))
    return fit, [Finding(Status.UNKNOWN, node.name, NOT_APPLICABLE,
                         f"check {check} applies to kind {names}, not {node.kind}")
                 for node in misfits]


@dataclass(frozen=True)
class Failed:
    """A node that could not be checked: why, as its UNKNOWN finding, and whether it was
    at the connection (`connected` False) or in the work on an open one."""

    finding: Finding
    connected: bool


def each_node(nodes: Sequence[Target], work: Callable[[Target, Connection], _R], *,
              deadline: Deadline | None = None, down: Status = Status.CRITICAL,
              session_timeouts: bool = True) -> list[_R | Failed]:
    """`work` on every node with its own connection, opened in parallel and closed after
    the work; the results in node order, a node that failed as `Failed` (a server that
    is down with the state `down`; one without a result by `deadline` as `no-answer`,
    the others' results kept). `session_timeouts`: as `toolkit.db.connect`."""
    def one(node: Target) -> _R | Failed:
        started = time.monotonic()
        try:
            conn = connect(node, session_timeouts=session_timeouts)
        except Exception as exc:  # every failure is the node's finding
            return Failed(failure(node.name, exc, down=down), connected=False)
        connected = time.monotonic()
        try:
            return work(node, conn)
        finally:
            conn.close()
            log.debug("node %s (%s %s): connected in %.3f s, checked in %.3f s", node.name,
                      conn.server.flavor, conn.server.version_text, connected - started,
                      time.monotonic() - connected)

    def failed(node: Target, exc: Exception) -> Failed:
        return Failed(failure(node.name, exc, down=down, deadline=deadline),
                      not isinstance(exc, Unfinished))

    return [got if not isinstance(got, Exception) else failed(node, got)
            for node, got in zip(nodes, fan_out(nodes, one, name="check", deadline=deadline),
                                 strict=True)]


class Connected:
    """Nodes that keep their connections for several rounds of reads (split-brain reads
    every node, then the sources again): opened in parallel, closed by `close()` or at the
    end of a `with` block. `findings` collects the UNKNOWN finding of each node that could
    not be connected or read. With a `deadline`, a node that has not answered by then in
    any round is a `no-answer` finding and takes no part in the later rounds (its
    connection is left to its blocked thread); connecting may take `connecting` of the
    time, so a node that hangs there leaves the reads theirs."""

    def __init__(self, nodes: Sequence[Target], *, deadline: Deadline | None = None,
                 down: Status = Status.CRITICAL, connecting: float = 0.4) -> None:
        self.findings: list[Finding] = []
        self._open: dict[str, tuple[Target, Connection]] = {}
        self._deadline = deadline
        self._down = down
        first = None if deadline is None else deadline.part(connecting)
        for node, got in zip(nodes, fan_out(nodes, connect, name="check", deadline=first),
                             strict=True):
            if isinstance(got, Exception):
                self.findings.append(self._failure(node.name, got))
            else:
                self._open[node.name] = (node, got)

    def _failure(self, node: str, exc: Exception) -> Finding:
        return failure(node, exc, down=self._down, deadline=self._deadline)

    @property
    def names(self) -> list[str]:
        """The nodes with an open connection, in node order."""
        return list(self._open)

    def connection(self, name: str) -> Connection:
        return self._open[name][1]

    def each(self, work: Callable[[Target, Connection], _R], names: Iterable[str] | None = None,
             *, best_effort: bool = False, within: float = 1.0) -> dict[str, _R]:
        """`work` on the named nodes (default: every open one) in parallel, in `within` of
        the time left: the results by node name; a node whose work failed is left out,
        with a finding unless the read is `best_effort` (one that did not answer in time
        always has one)."""
        chosen = [self._open[name] for name in (self.names if names is None else names)
                  if name in self._open]
        deadline = None if self._deadline is None else self._deadline.part(within)
        out: dict[str, _R] = {}
        for (node, _), got in zip(chosen, fan_out(chosen, lambda pair: work(*pair),
                                                 name="check", deadline=deadline),
                                  strict=True):
            if not isinstance(got, Exception):
                out[node.name] = got
            elif isinstance(got, Unfinished):
                del self._open[node.name]  # still in use by its thread: not closed here
                self.findings.append(self._failure(node.name, got))
            elif not best_effort:
                self.findings.append(self._failure(node.name, got))
        return out

    def close(self) -> None:
        for _, conn in self._open.values():
            conn.close()

    def __enter__(self) -> Connected:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
