"""What the user narrowed a check over objects to, as check_postgres' options say it:
`--include` / `--exclude`, `--includeuser` / `--excludeuser` (and custom-query's
statement, settings-checksum's expected checksums, lock-count's lock specs).

The filters follow check_postgres' `skip_item` exactly, so a command line moved from
check_postgres checks the same objects: each may be given several times and as
comma-separated lists; `~word` is a regular expression (searched, not anchored), a word
ending in `.` names a schema; exclusion is applied first and inclusion brings back what it
matches. With only --include, only what it matches is checked; with both, an object that
neither matches is kept (check_postgres' rule, kept as is). The monitoring plugins'
options a check's read needs travel here too (check_pgsql's -q with -W/-C, check_mysql's
-S and -n). Pure, and imports nothing of the checks (`model` names it for its types).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dbgauge.checks.health.counts import CountSpec
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.ranges import Range


@dataclass(frozen=True)
class Scope:
    """The user's narrowing of one check run: object filters, a custom query, what a check
    reads itself (-w/-c of a check with `OwnThresholds`, its own options), and the
    monitoring plugins' options a read needs."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    query: str = ""  # custom-query's statement; connection's -q (check_pgsql)
    # -w/-c that are not ranges: settings-checksum's expected checksum ("" or "0": none,
    # only say it), lock-count's lock specs, a check's OwnThresholds as written
    warning: str = ""
    critical: str = ""
    # a check's own options (`HealthCheck.options`: custom-query's --valtype), by name
    options: tuple[tuple[str, str], ...] = ()
    # connection's -W/-C: ranges of the -q query's value, and its name in the text
    query_warning: Range | None = None
    query_critical: Range | None = None
    query_name: str = ""
    replica: bool = False  # lag -S: a node that is no replica is a WARNING (check_mysql -S)
    ignore_auth: bool = False  # connection -n: a refused password is OK (check_mysql -n)
    # --includeuser / --excludeuser: user names, exactly (check_postgres' $USERWHERECLAUSE)
    include_user: tuple[str, ...] = ()
    exclude_user: tuple[str, ...] = ()
    # -w/-c in check_postgres' count forms (`+N`, `N for T`: checks/health/counts.py)
    warning_count: CountSpec | None = None
    critical_count: CountSpec | None = None

    def __post_init__(self) -> None:
        for word in words(self.include) + words(self.exclude):
            if word.startswith("~"):
                try:
                    re.compile(word[1:].removesuffix("."))
                except re.error as exc:
                    raise ConfigError(f"--include/--exclude {word!r}: not a regular "
                                      f"expression: {exc}") from None

    def option(self, name: str) -> str:
        """The value of the check's own option `name` ("" when not given)."""
        return dict(self.options).get(name, "")

    @property
    def filtered(self) -> bool:
        return bool(self.include or self.exclude)

    @property
    def given(self) -> str:
        """The filters given, as a message names them ("" none)."""
        return " and ".join(name for name, on in (
            ("--include/--exclude", self.filtered),
            ("--includeuser/--excludeuser", self.users_filtered)) if on)

    @property
    def users_filtered(self) -> bool:
        return bool(self.include_user or self.exclude_user)

    def skips_user(self, user: str) -> bool:
        """Whether check_postgres' --includeuser/--excludeuser leave this user's object
        out: names match exactly, and --includeuser, when given, wins over
        --excludeuser (which is then not read)."""
        if self.include_user:
            return user not in words(self.include_user)
        return user in words(self.exclude_user)

    def skips(self, name: str, schema: str = "") -> bool:
        """Whether check_postgres' `skip_item(name, schema)` would skip this object."""
        stat = 0
        if self.exclude:
            stat = 1 + (2 if _matches(words(self.exclude), name, schema) else 0)
        if self.include:
            stat += 4 + (8 if _matches(words(self.include), name, schema) else 0)
        return stat in (3, 4, 7)


def words(given: Iterable[str]) -> list[str]:
    """check_postgres' lists: repeatable options, each comma-separated."""
    return [w for item in given for w in re.split(r"\s*,\s*", item) if w]


def _matches(patterns: Sequence[str], name: str, schema: str) -> bool:
    for word in patterns:
        target = name
        if word.endswith("."):
            word, target = word[:-1], schema
        if word.startswith("~"):
            if re.search(word[1:], target):
                return True
        elif word == target:
            return True
    return False
