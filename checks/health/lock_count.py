"""check lock-count: how many locks are held and awaited (check_postgres' `locks`).

check_postgres' meaning, kept exactly so a command line moved from it alerts the same
way: the locks of every database that takes connections (locks without a database --
transaction IDs, virtual xids, shared catalogs -- are not counted), summed over them,
`total`, `waiting` (not granted) and per mode (PostgreSQL's mode in lower case without
`lock`: `exclusive` is ExclusiveLock, `accessexclusive` AccessExclusiveLock; a mode
counts granted and awaited locks). A threshold is check_postgres' lock spec: `N` (the
total) or `total=250;waiting=5;exclusive=2`, and alerts at N or more (check_postgres'
`>=`); the defaults are total=100 and total=150, and a level given alone leaves the
other unset. Perfdata: one item per database and type the thresholds name
(`NODE:DATABASE:TYPE_locks`, check_postgres' `DATABASE.TYPE`). `--include`/`--exclude`
pick databases by name. Nothing matched is UNKNOWN; databases matched without a lock
are 0 locks (check_postgres calls that "No matching databases").

`dbgauge check locks` is another measure: the age of the oldest lock wait, in seconds,
which pages on a blocked application where a count of locks does not.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope
from dbgauge.checks.health.model import HealthCheck, NodeOutcome, cannot_tell
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.result import Finding, Status, perf_label

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Target

DEFAULTS = ("total=100", "total=150")  # check_postgres' defaults (neither level given)
_PAIR = re.compile(r"(\w+)\s*=\s*(\d+)")


@dataclass(frozen=True)
class LockLevels:
    """One level of check_postgres' lock spec: lock type -> the count that alerts."""

    at: Mapping[str, int]

    def crossed(self, totals: Mapping[str, int]) -> list[str]:
        """`type=count` of each type at or past its level (check_postgres' `>=`)."""
        return [f"{t}={totals.get(t, 0)}" for t in sorted(self.at)
                if totals.get(t, 0) >= self.at[t]]


def lock_spec(text: str, option: str) -> LockLevels:
    """check_postgres' `multival`: `N` is the total; else every `word=N` (any separator;
    a word in any case, `lock` at its end dropped). ConfigError for anything else."""
    pairs = {m.group(1).lower().removesuffix("lock"): int(m.group(2))
             for m in _PAIR.finditer(text)}
    if pairs:
        return LockLevels(pairs)
    if text.strip().isdigit():
        return LockLevels({"total": int(text.strip())})
    if not text.strip():
        return LockLevels({})
    raise ConfigError(f"{option} {text!r}: give a number of locks (the total), or "
                      "'total=N;waiting=N;MODE=N' as check_postgres' locks")


def levels(scope: Scope) -> tuple[LockLevels, LockLevels]:
    """(warning, critical) from -w/-c: check_postgres' defaults when neither is given."""
    warning, critical = (scope.warning, scope.critical) if scope.warning or scope.critical \
        else DEFAULTS
    return lock_spec(warning, "--warning"), lock_spec(critical, "--critical")


def perf_thresholds(scope: Scope) -> dict[str, tuple[str | None, str | None]]:
    """Perfdata warn/crit per `TYPE_locks`: `@N:` (N or more, as the check alerts)."""
    warning, critical = levels(scope)
    return {f"{t}_locks": (_at(warning, t), _at(critical, t))
            for t in sorted({*warning.at, *critical.at})}


def _at(level: LockLevels, lock_type: str) -> str | None:
    return f"@{level.at[lock_type]}:" if lock_type in level.at else None


def count_locks(rows: list[tuple[str, str | None, int, int]]
                ) -> dict[str, Counter[str]]:
    """Rows (database, mode, locks, waiting) -> per database: total, waiting, per mode."""
    out: dict[str, Counter[str]] = {}
    for datname, mode, locks, waiting in rows:
        counts = out.setdefault(datname, Counter(total=0, waiting=0))
        if mode:
            counts["total"] += locks
            counts["waiting"] += waiting
            counts[mode.lower().removesuffix("lock")] += locks
    return out


def judge_counts(node: Target, per_db: Mapping[str, Counter[str]], scope: Scope,
                 ) -> NodeOutcome:
    """The databases the filters keep, summed and held against the levels."""
    kept = {db: c for db, c in per_db.items() if not scope.skips(db)}
    if not kept:
        return cannot_tell(node, "no-matching-database",
                           f"no database matched --include/--exclude ({len(per_db)} in all)")
    warning, critical = levels(scope)
    named = sorted({"total", *warning.at, *critical.at})
    totals: Counter[str] = sum(kept.values(), Counter())
    text = " ".join(f"{t}={totals.get(t, 0)}" for t in named)
    perf = tuple((perf_label(node.name, f"{db}:{t}_locks"), float(kept[db].get(t, 0)))
                 for db in sorted(kept) for t in sorted({*warning.at, *critical.at}))
    for status, level in ((Status.CRITICAL, critical), (Status.WARNING, warning)):
        if crossed := level.crossed(totals):
            spec = ";".join(f"{t}={n}" for t, n in sorted(level.at.items()))
            finding = Finding(status, node.name, "lock-count",
                              f"locks {' '.join(crossed)} (threshold {spec}: at or above)")
            return NodeOutcome(node.name, (finding,), perf, text)
    return NodeOutcome(node.name, (), perf, f"locks {text}")


def _read(node: Target, conn: Connection, scope: Scope) -> NodeOutcome:
    from dbgauge.toolkit.db.values import number, text

    rows = [(text(r.get("datname")), text(r.get("mode")) or None,
             int(number(r.get("locks")) or 0), int(number(r.get("waiting")) or 0))
            for r in conn.query("check_lock_count")]
    return judge_counts(node, count_locks(rows), scope)


CHECK = HealthCheck(
    name="lock-count",
    summary="Locks held and awaited: total, waiting, per mode (check_postgres' locks).",
    measures="locks held and awaited (total, waiting, per mode), as check_postgres' locks",
    kinds=frozenset({"postgres"}), metric="", scoped=_read, filters="database",
    takes_lock_spec=True, text_defaults=DEFAULTS, perf_thresholds=perf_thresholds)
