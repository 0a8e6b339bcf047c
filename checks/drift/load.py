"""--max-load: pause while the source is busier than its limits (pt-table-checksum's
option, on any SHOW GLOBAL STATUS variable).

`--max-threads-running N` is the Threads_running case and stays the default limit
(25, as pt's `--max-load Threads_running=25`). A variable given without a limit gets the
value it has at the start plus 20 %, as pt-table-checksum does. Names are checked once,
at the start, so a typo fails before anything is read. PostgreSQL has no SHOW GLOBAL
STATUS: there only Threads_running is watched, as the number of active client backends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dbgauge.checks.drift.model import ChecksumOptions
from dbgauge.checks.drift.sides import Side
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.errors import ConfigError

THREADS_RUNNING = "Threads_running"


def parse_max_load(values: Sequence[str]) -> tuple[tuple[str, float | None], ...]:
    """`VAR=N`, `VAR:N` or `VAR` items (comma-separated, repeatable) as (name, limit)."""
    out: list[tuple[str, float | None]] = []
    for value in values:
        for item in value.split(","):
            item = item.strip()
            if not item:
                continue
            name, sep, limit = item.replace(":", "=", 1).partition("=")
            name = name.strip()
            if not name or not name.replace("_", "").isalnum():
                raise ConfigError(f"--max-load {item!r}: write VARIABLE=N, e.g. "
                                  "Threads_running=25 (a SHOW GLOBAL STATUS variable)")
            if not sep:
                out.append((name, None))
                continue
            try:
                number = float(limit)
            except ValueError:
                number = -1.0
            if number < 0:
                raise ConfigError(f"--max-load {item!r}: the limit must be a number >= 0")
            out.append((name, number))
    return tuple(out)


def _status(side: Side) -> dict[str, str]:
    rows = side.q("global_status_all")
    return {_text(r["Variable_name"]).lower(): _text(r["Value"]) for r in rows}


class LoadLimits:
    """The source's limits, resolved against its status variables at the start."""

    def __init__(self, limits: Mapping[str, float], names: Mapping[str, str]) -> None:
        self.limits = dict(limits)  # lower-case name -> limit
        self.names = dict(names)  # lower-case name -> name as the user wrote it

    @classmethod
    def resolve(cls, source: Side, options: ChecksumOptions) -> LoadLimits:
        wanted: dict[str, tuple[str, float | None]] = {
            THREADS_RUNNING.lower(): (THREADS_RUNNING, float(options.max_threads_running))}
        for name, limit in options.max_load:
            wanted[name.lower()] = (name, limit)
        if not source.mysql:
            other = [n for key, (n, _) in wanted.items() if key != THREADS_RUNNING.lower()]
            if other:
                raise ConfigError(
                    f"--max-load {', '.join(other)}: status variables are MySQL/MariaDB's "
                    f"(SHOW GLOBAL STATUS), and source {source.name} is PostgreSQL; there "
                    "only Threads_running is watched (as active client backends)")
            name, limit = wanted[THREADS_RUNNING.lower()]
            return cls({THREADS_RUNNING.lower(): limit or float(options.max_threads_running)},
                       {THREADS_RUNNING.lower(): name})
        status = _status(source)
        limits: dict[str, float] = {}
        for key, (name, limit) in wanted.items():
            if key not in status:
                raise ConfigError(f"--max-load {name}: source {source.name} has no such "
                                  "status variable (see SHOW GLOBAL STATUS)")
            try:
                current = float(status[key])
            except ValueError:
                raise ConfigError(f"--max-load {name}: on source {source.name} its value "
                                  f"{status[key]!r} is not a number") from None
            limits[key] = limit if limit is not None else max(1.0, int(current * 1.2))
        return cls(limits, {key: name for key, (name, _) in wanted.items()})

    def over(self, source: Side) -> list[str]:
        """Why the source is too busy now (empty: it is not)."""
        if not source.mysql or set(self.limits) == {THREADS_RUNNING.lower()}:
            now = {THREADS_RUNNING.lower(): float(source.threads_running())}
        else:
            now = {k: float(v) for k, v in _status(source).items()
                   if k in self.limits and _number(v)}
        out = []
        for key, limit in self.limits.items():
            if now.get(key, 0.0) > limit:
                out.append(f"source {self.names[key]} is {now[key]:g} (> {limit:g})")
        return out


def _number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
