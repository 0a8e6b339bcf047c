"""check_postgres' expected-value actions (settings_checksum, pgbouncer_checksum,
cluster_id, version): the value read is held against the one given with -c or -w, not
against a range. A -c that differs is CRITICAL, else a -w that differs WARNING; neither
given (or `0`, check_postgres' "just print it") is UNKNOWN, printing the value to take as
the baseline."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dbgauge.checks.health.model import NodeOutcome, OwnThresholds, cannot_tell
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.result import Finding, Status

if TYPE_CHECKING:
    from dbgauge.checks.health.filters import Scope
    from dbgauge.toolkit.targets import Target

Matches = Callable[[str, str], bool]  # (expected, read) -> the same


def _equal(expected: str, got: str) -> bool:
    return expected == got


def expected_outcome(node: Target, got: str, note: str, scope: Scope, kind: str,
                     matches: Matches = _equal, unknown_kind: str = "") -> NodeOutcome:
    """The node's state for the value `got` (said in `note`) against -c/-w as given
    (`kind` the finding of a difference, `unknown_kind` of nothing to compare with)."""
    for level, expected in ((Status.CRITICAL, scope.critical), (Status.WARNING, scope.warning)):
        if expected not in ("", "0") and not matches(expected, got):
            return NodeOutcome(node.name, (Finding(level, node.name, kind,
                                                   f"{note}, expected {expected}"),), note=note)
    if scope.critical not in ("", "0") or scope.warning not in ("", "0"):
        return NodeOutcome(node.name, note=note)
    return NodeOutcome(node.name, (Finding(Status.UNKNOWN, node.name, unknown_kind or kind,
                                           f"{note}: give it as -c or -w to watch it"),),
                       note=note)


def checksum_outcome(node: Target, rows: list[tuple[str, str]], scope: Scope,
                     digest: Callable[[list[tuple[str, str]]], str], kind: str,
                     unknown_kind: str) -> NodeOutcome:
    """A settings checksum's state (settings_checksum, pgbouncer_checksum): the settings
    --include/--exclude keep, digested, against -c/-w."""
    rows = [(name, value) for name, value in rows if not scope.skips(name)]
    if not rows:
        return cannot_tell(node, "no-matching-setting", "no setting matched --include/--exclude")
    got = digest(rows)
    return expected_outcome(node, got, f"checksum {got} ({len(rows)} settings)", scope, kind,
                            unknown_kind=unknown_kind)


def expected_value(metavar: str, what: str, valid: Callable[[str], bool] | None = None
                   ) -> OwnThresholds:
    """-c/-w as the expected value itself (`what`, for --help); `valid` refuses a value
    that cannot be one (exit 3, before any server is read)."""
    def check(scope: Scope) -> None:
        for option, given in (("--critical", scope.critical), ("--warning", scope.warning)):
            if given not in ("", "0") and valid is not None and not valid(given):
                raise ConfigError(f"{option} {given[:60]!r} is not {what}")

    return OwnThresholds(metavar, f"the {what} expected, as written (0 or none: UNKNOWN, "
                                  "printing the one read to take as the baseline)", check)
