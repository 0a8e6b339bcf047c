"""What every health check shares: the check itself (`HealthCheck`, the one shape of a
check), thresholds, a node's outcome, and how a measured value is judged. Pure, and light
to import: every check module is imported to list the checks (`dbgauge check --help`), so
nothing here (or at the top of a check module) loads the collectors or the drivers."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from dbgauge.checks.health.filters import Scope
from dbgauge.toolkit.errors import CheckFailed, ConfigError
from dbgauge.toolkit.ranges import Range, check_percent, parse_range
from dbgauge.toolkit.result import Finding, Status, perf_label, worst

if TYPE_CHECKING:
    from dbgauge.toolkit.db import Connection
    from dbgauge.toolkit.targets import Deadline, Target


NEVER = Range(start=-math.inf)  # a level that is not set: it never alerts


def _not_left(given: Range, option: str) -> ConfigError:
    return ConfigError(f"{option} {given}: a negative threshold (N or fewer left) is "
                       "check_postgres' backends form: only `dbgauge check connections` "
                       "takes it")


@dataclass(frozen=True)
class Share:
    """A check whose value is a share of a limit, in percent, and what its thresholds mean.

    `N%` is always the share (0 to 100). A bare number is the count of `count` (e.g.
    "connections") when the check names one -- as check_postgres reads `backends -w 200`
    and `txn_wraparound -c 1300000000` -- and is held against the perfdata `count_metric`;
    a bare count up to `ambiguous_upto` is refused, as a percentage written without `%`
    (no plausible count is that small). Without `count` a bare number is the percentage,
    and one outside 0..100 is refused. Never a silent reading of one as the other."""

    count: str = ""
    count_metric: str = ""
    ambiguous_upto: float = -math.inf
    # the perfdata metric of what is left of the limit: takes `-N` (N or fewer left)
    left_metric: str = ""

    def __post_init__(self) -> None:
        if bool(self.count) != bool(self.count_metric):
            raise ValueError("a share's count needs the perfdata metric it is measured as")

    def reads(self, given: Range, option: str) -> Range:
        """The user's range as this check reads it; ConfigError (exit 3) for a range it
        cannot mean."""
        if given.left:
            if not self.left_metric:
                raise _not_left(given, option)
            return given
        if given.percent or not self.count:
            try:
                check_percent(given, given.plain)
            except ValueError as exc:
                raise ConfigError(f"{option} {given}: {exc} (give a percentage here)"
                                  ) from None
            return given if self.count else replace(given, percent=False)
        small = [v for v in (given.start, given.end)
                 if math.isfinite(v) and 0 < v <= self.ambiguous_upto]
        if small:
            raise ConfigError(
                f"{option} {given}: a bare number is a count of {self.count} here (as "
                f"check_postgres reads it), and {small[0]:g} {self.count} is no plausible "
                f"threshold: write {given.plain}% for a share of the limit")
        return given

    def counts(self, rng: Range) -> bool:
        """Whether this range is held against the count, not the percentage."""
        return bool(self.count) and not rng.percent and not rng.left

    def against(self, rng: Range) -> str:
        """The perfdata metric this range is held against ("" for the check's own)."""
        return self.left_metric if rng.left else self.count_metric if self.counts(rng) else ""


@dataclass(frozen=True)
class Thresholds:
    """Warning/critical ranges of a check (monitoring-plugin range syntax, toolkit.ranges):
    CRITICAL when the critical range alerts, else WARNING when the warning range does.
    `share`: the value is a percentage of a limit, and how a threshold is read
    (`Share`); None: a threshold with `%` is refused. `seconds`: the value is a time, so
    a threshold may carry a time unit (`-w 5m`); elsewhere one is refused. `bytes`: the value
    is a size, so a threshold may carry a size unit (`-w 10GB`); elsewhere one is refused."""

    warning: Range
    critical: Range
    share: Share | None = None
    seconds: bool = False
    bytes: bool = False
    lower_is_worse: bool = False  # a ratio: `-w 90%` alerts below 90, as check_postgres
    # --warning alone keeps the default critical (check_postgres' backends); elsewhere a
    # level given alone leaves the other one unset, as check_postgres' validate_range
    keeps_critical: bool = False
    # a level given alone keeps the other's default unless that contradicts it (then it is
    # unset): the monitoring plugins' rule (check_pgsql's -w 5 keeps its -c 8)
    keeps_defaults: bool = False

    @classmethod
    def above(cls, warning: float, critical: float, share: Share | None = None
              ) -> Thresholds:
        """Alert above these levels (`-w 30 -c 120`): a value that is worse when higher
        (a check that also takes counts has its defaults as percentages)."""
        percent = share is not None and bool(share.count)
        return cls(Range(end=warning, percent=percent), Range(end=critical, percent=percent),
                   share)

    @classmethod
    def below(cls, warning: float, critical: float) -> Thresholds:
        """Alert below these levels (`-w 600: -c 300:`): worse when lower (uptime)."""
        return cls(Range(start=warning), Range(start=critical))

    def status(self, value: float, extra: Mapping[str, float] | None = None) -> Status:
        """The state of a value (and, for a share that takes counts or `-N`, of the
        count or what is left, from `extra`: perfdata metric -> value)."""
        if self._alerts(self.critical, value, extra or {}):
            return Status.CRITICAL
        if self._alerts(self.warning, value, extra or {}):
            return Status.WARNING
        return Status.OK

    def _alerts(self, rng: Range, value: float, extra: Mapping[str, float]) -> bool:
        metric = self.share.against(rng) if self.share is not None else ""
        if metric:
            if metric not in extra:
                raise CheckFailed(f"no {metric} was measured to hold against {rng}")
            return rng.alerts(extra[metric])
        if rng.left:
            raise ConfigError(f"{rng}: this check takes no negative threshold")
        return rng.alerts(value)

    def perf(self, metric: str) -> dict[str, tuple[str | None, str | None]]:
        """Perfdata warn/crit per metric: a count threshold goes with the count's
        perfdata, `-N` with what is left, a percentage with `metric`'s."""
        out: dict[str, list[str | None]] = {}
        for i, rng in enumerate((self.warning, self.critical)):
            name = (self.share.against(rng) if self.share else "") or metric
            never = rng.start == -math.inf and rng.end == math.inf and not rng.inside
            out.setdefault(name, [None, None])[i] = None if never else rng.plain
        return {name: (w, c) for name, (w, c) in out.items()}

    def override(self, warning: Range | str | float | None,
                 critical: Range | str | float | None) -> Thresholds:
        """These defaults with the user's ranges, read in the check's unit (ConfigError
        for one it cannot mean). A level given alone leaves the other unset, as
        check_postgres does (`-c 10` alone never warns), unless `keeps_critical` or
        `keeps_defaults`."""
        w = self.warning if warning is None else self._read(warning, "--warning")
        c = self.critical if critical is None else self._read(critical, "--critical")
        if warning is None and critical is not None:
            w = self.warning if self.keeps_defaults and not _contradict(w, c) else NEVER
        elif critical is None and warning is not None and not self.keeps_critical:
            c = self.critical if self.keeps_defaults and not _contradict(w, c) else NEVER
        return replace(self, warning=w, critical=c)

    def _read(self, given: Range | str | float, option: str) -> Range:
        rng = _as_range(given)
        if rng.duration:
            if not self.seconds:
                raise ConfigError(f"{option} {given}: this check's value is not a time: give "
                                  "it without a time unit")
            return replace(rng, duration=False)  # in seconds, as the check's value
        if rng.size:
            if not self.bytes:
                raise ConfigError(f"{option} {given}: this check's value is not a size: give "
                                  "it without a size unit")
            return replace(rng, size=False)  # in bytes, as the check's value
        if self.lower_is_worse and rng.upper is not None:  # `90%` is `90%:` here
            rng = replace(rng, start=rng.upper, end=math.inf)
        if self.share is not None:
            return self.share.reads(rng, option)
        if rng.left:
            raise _not_left(rng, option)
        if rng.percent:
            raise ConfigError(f"{option} {rng}: this check's value is not a share of a "
                              f"limit: give it without %")
        return rng

    def validate(self, what: str) -> Thresholds:
        if _contradict(self.warning, self.critical):
            raise ConfigError(f"{what}: --warning {self.warning} is less strict than "
                              f"--critical {self.critical} (it would never warn)")
        return self


def _as_range(value: Range | str | float) -> Range:
    if isinstance(value, Range):
        return value
    try:
        return parse_range(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _contradict(warning: Range, critical: Range) -> bool:
    """A warning range that alerts later than the critical one (plain forms of one unit)."""
    if warning.percent != critical.percent:
        return False
    if warning.upper is not None and critical.upper is not None:
        return warning.upper > critical.upper
    if warning.lower is not None and critical.lower is not None:
        return warning.lower < critical.lower
    return False


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


@dataclass(frozen=True)
class Measured:
    """One node's value of a thresholded metric, with what to say about it."""

    value: float
    text: str  # e.g. "lag 0.31 s (heartbeat)"
    evidence: Mapping[str, str] = field(default_factory=dict)
    extra: Sequence[tuple[str, float]] = ()  # more perfdata (metric, value) of the node
    findings: tuple[Finding, ...] = ()  # problems beyond the threshold (a failing command)


# The monitoring plugins' options a check may take (`HealthCheck.plugin_options`), each
# carried to its read by the Scope: check_pgsql's -q with -W/-C on the query's value
# (`query`), check_mysql's -S (`replica`) and -n (`ignore-auth`).
PLUGIN_OPTIONS = frozenset({"query", "replica", "ignore-auth"})
@dataclass(frozen=True)
class OwnThresholds:
    """-w/-c that a check reads itself, as the user wrote them (`Scope.warning`,
    `Scope.critical`): check_postgres' forms no range can say (bloat's `1 G and 150%`,
    custom-query's --valtype string). `check(scope)` raises ConfigError for what the
    check cannot mean, before any server is read (exit 3); `needed`: -w or -c must be
    given."""

    metavar: str
    help: str  # what -w/-c take, for --help
    check: Callable[[Scope], None]
    needed: bool = False
    # the perfdata warn/crit the user's -w/-c become, by metric (none when no range says them)
    perf: Callable[[Scope], dict[str, tuple[str | None, str | None]]] | None = None


@dataclass(frozen=True)
class CheckOption:
    """An option only one check takes (custom-query's --valtype): its value reaches the
    read in `Scope.option(name)`."""

    name: str  # the long option without its dashes
    metavar: str
    help: str
    choices: tuple[str, ...] = ()
    flag: bool = False  # a switch: "1" when given, "" when not
    required: bool = False  # the check reads nothing without it (no `checks:` entry then)


Read = Callable[["Target", "Connection"], "Measured | NodeOutcome"]
ScopedRead = Callable[["Target", "Connection", "Scope"], "Measured | NodeOutcome"]
# a check across nodes (which one is the primary, what the others saw): the nodes of its
# kinds, the thresholds, the user's scope, the run's deadline and the state of a node down
Across = Callable[["Sequence[Target]", "Thresholds | None", "Scope", "Deadline | None",
                   Status], "Sequence[NodeOutcome]"]


@dataclass(frozen=True, eq=False)  # a check is itself: compared by identity
class HealthCheck:
    """One `dbgauge check NAME`: what its command, its --help, the docs table and the
    daemon's `checks:` entries are made of. `read` looks at one node and returns either a
    `Measured` value, which `judge` holds against the thresholds, or a whole
    `NodeOutcome` (a check whose problems each have their own severity; a node with
    nothing to measure)."""

    name: str  # the command: dbgauge check NAME
    summary: str  # one line: `dbgauge check --help`, and the start of the command's help
    measures: str  # what it measures, in the docs table
    kinds: frozenset[str]  # the target kinds it applies to
    metric: str  # the perfdata it thresholds (its unit comes from the suffix)
    read: Read | None = None  # None for a check over objects: `scoped` reads, every object
    defaults: Thresholds | None = None  # None: no -w/-c, each problem has its own severity
    unit: str = ""  # of the defaults, as --help says them: "30 and 120 seconds"
    finding: str = ""  # the kind of the finding when a threshold is crossed
    requires: str = ""  # a version its kinds need, in the docs table ("MySQL 8")
    takes_heartbeat_table: bool = False  # its command takes --heartbeat-table (lag)
    # a check over objects, or one taking options its read needs: read with the user's
    # Scope; `filters` names what --include/--exclude match ("database"), "" for none
    scoped: ScopedRead | None = None
    filters: str = ""
    # what --includeuser/--excludeuser match ("session user"), "" for none
    user_filters: str = ""
    takes_query: bool = False  # its command takes --query (custom-query)
    # its command takes the monitoring plugins' options of these names (`PLUGIN_OPTIONS`)
    plugin_options: frozenset[str] = frozenset()
    takes_checksum: bool = False  # -w/-c are checksums, not ranges (settings-checksum)
    takes_lock_spec: bool = False  # -w/-c are check_postgres' lock specs (lock-count)
    text_defaults: tuple[str, ...] = ()  # (warning, critical) of such -w/-c, as written
    # the perfdata warn/crit of a check whose -w/-c are text, read from the Scope
    # (ConfigError for text it cannot mean)
    perf_thresholds: Callable[[Scope], Mapping[str, tuple[str | None, str | None]]] | None \
        = None
    needs_thresholds: bool = False  # no defaults: -w or -c must be given (check_postgres)
    # a check that compares nodes (replicate-row, same-schema): run once over them all
    across: Across | None = None
    own_thresholds: OwnThresholds | None = None  # -w/-c read by the check from its Scope
    # -w/-c may also be check_postgres' count forms, `+N` and `N for T` (checks/health/counts)
    count_forms: bool = False
    options: tuple[CheckOption, ...] = ()  # options of this check alone
    # read in a session without dbgauge's timeouts: it reads the session's own settings
    plain_session: bool = False

    def __post_init__(self) -> None:
        if not self.plugin_options <= PLUGIN_OPTIONS:
            raise ValueError(f"check {self.name}: unknown plugin options "
                             f"{sorted(self.plugin_options - PLUGIN_OPTIONS)}")
        if self.plugin_options and self.scoped is None:
            raise ValueError(f"check {self.name}: plugin options reach a scoped read only")
        if sum(f is not None for f in (self.read, self.scoped, self.across)) != 1:
            raise ValueError(f"check {self.name}: give read, scoped for a check over "
                             "objects, or across for one comparing nodes")
        if self.defaults is not None and not (self.unit and self.finding):
            raise ValueError(f"check {self.name}: thresholds need a unit and a finding kind")
        if self.defaults is not None and self.unit == "seconds" and not self.defaults.seconds:
            # a check of seconds takes thresholds with a time unit (-w 5m)
            object.__setattr__(self, "defaults", replace(self.defaults, seconds=True))
        if self.defaults is not None and self.unit == "bytes" and not self.defaults.bytes:
            # a check of bytes takes thresholds with a size unit (-w 10GB)
            object.__setattr__(self, "defaults", replace(self.defaults, bytes=True))

    def evaluate(self, node: Target, conn: Connection, limits: Thresholds | None = None,
                 scope: Scope | None = None) -> NodeOutcome:
        """Read one node and judge it (`limits`: the defaults unless given; `scope`:
        the user's filters, for a check over objects)."""
        if self.scoped is not None:  # no filters given: every object
            got = self.scoped(node, conn, scope if scope is not None else Scope())
        else:
            if self.read is None:
                raise TypeError(f"check {self.name} runs across nodes, not on one")
            got = self.read(node, conn)
        return self.judge(node, got, limits)

    def judge(self, node: Target, got: Measured | NodeOutcome,
              limits: Thresholds | None = None) -> NodeOutcome:
        """A value already measured, held against the thresholds (`dbgauge status` reads
        once what several checks judge)."""
        if isinstance(got, NodeOutcome):
            return got
        chosen = limits or self.defaults
        if chosen is None:
            raise TypeError(f"check {self.name} has no thresholds to judge a value by")
        return judged(node, chosen, got, kind=self.finding, metric=self.metric)

    def limits(self, warning: Range | str | float | None,
               critical: Range | str | float | None) -> Thresholds | None:
        """The defaults with the user's -w/-c (None for a check without thresholds)."""
        return None if self.defaults is None else self.defaults.override(warning, critical)


def judged(node: Target, limits: Thresholds, measured: Measured, *, kind: str, metric: str
           ) -> NodeOutcome:
    """A NodeOutcome for one thresholded value: a finding only when it is not OK."""
    status = limits.status(measured.value, dict(measured.extra))
    findings = measured.findings
    if status is not Status.OK:
        level = limits.critical if status is Status.CRITICAL else limits.warning
        findings += (Finding(status, node.name, kind,
                             f"{measured.text} (threshold {level})",
                             dict(measured.evidence)),)
    perf = ((perf_label(node.name, metric), measured.value),
            *((perf_label(node.name, m), v) for m, v in measured.extra))
    return NodeOutcome(node.name, findings, perf, measured.text)


def nothing_to_check(node: Target, what: str) -> NodeOutcome:
    """A node the check has nothing to measure on (a primary for `lag`): OK, said so."""
    return NodeOutcome(node.name, note=what)


def cannot_tell(node: Target, kind: str, why: str) -> NodeOutcome:
    """A node whose value the check could not measure although there is one to judge
    (nothing qualified, nothing readable): UNKNOWN saying why, never OK."""
    return NodeOutcome(node.name, (Finding(Status.UNKNOWN, node.name, kind, why),), note=why)
