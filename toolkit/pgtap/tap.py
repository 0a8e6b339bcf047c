"""A pure TAP parser: pg_prove's verdict rules plus the subtests pgTAP's runtests() emits.

The grammar and the verdict follow Perl's TAP::Parser (what pg_prove uses), so a file that
passes under pg_prove passes here and one that fails there fails here: a plan at the start
or the end, `ok`/`not ok` with optional numbers, `# SKIP`/`# TODO` directives, `Bail out!`,
`#` diagnostics and TAP 13 YAML blocks. Lines TAP::Parser calls "unknown" (e.g. output of a
stray SELECT) are kept but do not fail a file. Four-space indented blocks are subtests
(TAP 14, as runtests() prints them); they are parsed recursively and attached to the test
point that closes them, whose own status stays authoritative, as it is for pg_prove.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

_VERSION = re.compile(r"^TAP\s+version\s+(\d+)\s*$", re.IGNORECASE)
_PLAN = re.compile(r"^1\.\.(\d+)\s*(.*)$")
_PLAN_SKIP = re.compile(r"^#\s*SKIP\S*\s*(.*)$", re.IGNORECASE)
_TEST = re.compile(r"^(not )?ok\b\s*(\d+)?\s*(.*)$")
_DIRECTIVE = re.compile(r"^([^\\#]*(?:\\.[^\\#]*)*)#\s*(SKIP|TODO)\b\s*(.*)$", re.IGNORECASE)
_BAILOUT = re.compile(r"^\s*Bail out!\s*(.*)$")
_COMMENT = re.compile(r"^#(.*)$")
_SUBTEST_NAME = re.compile(r"^\s*Subtest:\s*(.*?)\s*$")
_SUMMARY_COMMENT = re.compile(r"^\s*Looks like ")
_YAML_START = re.compile(r"^( {1,3})---\s*$")
SUBTEST_INDENT = "    "


@dataclass(frozen=True)
class Plan:
    """`1..N`, or `1..0 # SKIP reason` (skip_reason set) for a file that skips everything."""

    count: int
    skip_reason: str | None
    line: int


@dataclass(frozen=True)
class TestPoint:
    """One `ok`/`not ok` line with what followed it (diagnostics, YAML) and preceded it
    (an indented subtest); `elapsed` is seconds since the previous top-level line (so a
    subtest's time counts for its parent), when the caller timed the lines."""

    number: int
    ok: bool
    description: str
    directive: str  # "", "SKIP" or "TODO"
    reason: str
    line: int
    diagnostics: tuple[str, ...] = ()
    yaml: str = ""
    subtest: TapResult | None = None
    elapsed: float | None = None

    @property
    def passed(self) -> bool:
        """`not ok # TODO` is an expected failure: it passes, as in every TAP harness."""
        return self.ok or self.directive == "TODO"

    @property
    def skipped(self) -> bool:
        return self.directive == "SKIP"

    @property
    def todo(self) -> bool:
        return self.directive == "TODO"

    @property
    def raw_status(self) -> str:
        """The test line as TAP would write it, for reports."""
        text = f"{'ok' if self.ok else 'not ok'} {self.number}"
        if self.description:
            text += f" - {self.description}"
        if self.directive:
            text += f" # {self.directive} {self.reason}".rstrip()
        return text


@dataclass(frozen=True)
class TapResult:
    """Everything parsed from one TAP stream (a file, or one subtest of it)."""

    tests: tuple[TestPoint, ...]
    plan: Plan | None
    bailout: str | None = None
    errors: tuple[str, ...] = ()
    comments: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    version: int | None = None
    name: str | None = None
    summary_comments: tuple[str, ...] = field(default=())

    @property
    def failed(self) -> tuple[TestPoint, ...]:
        return tuple(t for t in self.tests if not t.passed)

    @property
    def skipped(self) -> tuple[TestPoint, ...]:
        return tuple(t for t in self.tests if t.skipped)

    @property
    def todo(self) -> tuple[TestPoint, ...]:
        return tuple(t for t in self.tests if t.todo)

    @property
    def skip_all(self) -> str | None:
        return self.plan.skip_reason if self.plan is not None else None

    @property
    def passed(self) -> bool:
        """TAP::Parser's verdict: a plan, no parse/plan error, no bail-out, no failure."""
        return (self.plan is not None and not self.errors and self.bailout is None
                and not self.failed)


@dataclass
class _Pending:
    """Mutable state of the test point being built (diagnostics still arriving)."""

    number: int
    ok: bool
    description: str
    directive: str
    reason: str
    line: int
    subtest: TapResult | None
    elapsed: float | None
    diagnostics: list[str] = field(default_factory=list)
    yaml: list[str] = field(default_factory=list)

    def freeze(self) -> TestPoint:
        return TestPoint(self.number, self.ok, self.description, self.directive, self.reason,
                         self.line, tuple(self.diagnostics), "\n".join(self.yaml),
                         self.subtest, self.elapsed)


def _unescape(text: str) -> str:
    return re.sub(r"\\([\\#])", r"\1", text)


def _split_test(rest: str) -> tuple[str, str, str]:
    """'- desc # TODO why' -> ('desc', 'TODO', 'why'), as TAP::Parser splits it."""
    description, directive, reason = rest, "", ""
    m = _DIRECTIVE.match(rest)
    if m:
        description, directive, reason = m.group(1), m.group(2).upper(), m.group(3).strip()
    description = description.strip()
    if description.startswith("-"):
        description = description[1:].strip()
    return _unescape(description), directive, reason


def parse_tap(lines: Iterable[str], times: Sequence[float] | None = None,
              *, line_offset: int = 0, name: str | None = None) -> TapResult:
    """Parse a TAP stream. `times[i]`, if given, is when line i arrived (seconds from the
    start of the run); it only feeds `TestPoint.elapsed`. Never raises on bad input:
    problems are returned in `errors`, as TAP::Parser reports parse errors."""
    parser = _Parser(times, line_offset, name)
    for index, line in enumerate(lines):
        parser.feed(index, line.rstrip("\r\n"))
    return parser.finish()


class _Parser:
    """One TAP stream read line by line: each kind of line is one step (a method), and
    `finish` gives the verdict TAP::Parser would."""

    def __init__(self, times: Sequence[float] | None, line_offset: int,
                 name: str | None) -> None:
        self.times = times
        self.line_offset = line_offset
        self.name = name
        self.count = 0  # lines fed
        self.tests: list[TestPoint] = []
        self.errors: list[str] = []
        self.comments: list[str] = []
        self.summary: list[str] = []
        self.unknown: list[str] = []
        self.plan: Plan | None = None
        self.plans_seen = 0
        self.version: int | None = None
        self.bailout: str | None = None
        self.pending: _Pending | None = None
        self.sub_lines: list[str] = []  # the indented subtest being collected
        self.sub_times: list[float] = []
        self.sub_start = 0
        self.last_time = 0.0
        self.in_yaml: str | None = None  # the indentation of an open YAML block
        self.plan_misplaced = False
        self.plan_trailing = False  # the plan came after test points

    def feed(self, index: int, line: str) -> None:
        """One line (without its line break), `index` lines after the first."""
        self.count = index + 1
        lineno = self.line_offset + index + 1
        times = self.times
        now = times[index] if times is not None and index < len(times) else None
        if self.in_yaml is not None:
            self._yaml_line(line)
        elif line.startswith(SUBTEST_INDENT):
            self._subtest_line(index, line, now)
        else:
            test = _TEST.match(line)
            if now is not None and test is None:
                self.last_time = now  # a plan or diagnostic line: the next test's time
            if not line.strip():
                self._blank_line(now)
            elif index == 0 and (m := _VERSION.match(line)):
                self._version_line(lineno, int(m.group(1)))
            elif test is not None:
                self._test_line(lineno, test, now)
            else:
                self._other_line(lineno, line)

    def _yaml_line(self, line: str) -> None:
        if self.pending is not None:
            self.pending.yaml.append(line)
        if self.in_yaml is not None and line.startswith(self.in_yaml) \
                and line[len(self.in_yaml):].rstrip() == "...":
            self.in_yaml = None

    def _subtest_line(self, index: int, line: str, now: float | None) -> None:
        if not self.sub_lines:
            self.sub_start = self.line_offset + index
        self.sub_lines.append(line[len(SUBTEST_INDENT):])
        if now is not None:
            self.sub_times.append(now)
        if self.bailout is None and (bm := _BAILOUT.match(line)):
            # TAP::Parser sees an indented Bail out! too, and stops the run for it.
            self.bailout = bm.group(1).strip()

    def _blank_line(self, now: float | None) -> None:
        if self.sub_lines:
            self.sub_lines.append("")
            if now is not None:
                self.sub_times.append(now)

    def _version_line(self, lineno: int, version: int) -> None:
        self.version = version
        if version < 13:
            self.errors.append(f"line {lineno}: explicit TAP version must be at least 13")

    def _test_line(self, lineno: int, m: re.Match[str], now: float | None) -> None:
        self._flush()
        expected = len(self.tests) + 1
        number = int(m.group(2)) if m.group(2) else expected
        if number != expected:
            self.errors.append(f"line {lineno}: tests out of sequence: found ({number}) but "
                               f"expected ({expected})")
        plan = self.plan
        if plan is not None and self.plan_trailing and not self.plan_misplaced:
            self.plan_misplaced = True  # a test after a plan that itself followed tests
            self.errors.append(f"line {plan.line}: plan (1..{plan.count}) must be at the "
                               "beginning or end of the TAP output")
        description, directive, reason = _split_test(m.group(3))
        subtest = None
        if self.sub_lines:
            subtest = parse_tap(self.sub_lines,
                                self.sub_times if self.times is not None else None,
                                line_offset=self.sub_start)
            self.sub_lines.clear()
            self.sub_times.clear()
        elapsed = None
        if now is not None:
            elapsed = max(0.0, now - self.last_time)
            self.last_time = now
        self.pending = _Pending(number, m.group(1) is None, description, directive, reason,
                                lineno, subtest, elapsed)

    def _other_line(self, lineno: int, line: str) -> None:
        """A plan, a bail-out, a comment, the start of a YAML block, or unknown."""
        if (m := _PLAN.match(line)) is not None:
            self._plan_line(lineno, int(m.group(1)), m.group(2).strip())
        elif (m := _BAILOUT.match(line)) is not None:
            self._flush()
            if self.bailout is None:
                self.bailout = m.group(1).strip()
        elif (m := _COMMENT.match(line)) is not None:
            self._comment_line(m.group(1))
        elif (ym := _YAML_START.match(line)) is not None and self.pending is not None \
                and not self.pending.yaml:
            self.in_yaml = ym.group(1)
            self.pending.yaml.append(line)
        else:
            self.unknown.append(line)

    def _plan_line(self, lineno: int, count: int, tail: str) -> None:
        self._flush()
        self._close_orphan_subtest(lineno)
        self.plans_seen += 1
        if self.plans_seen > 1:
            self.errors.append(f"line {lineno}: more than one plan found in TAP output")
            return
        skip_reason = None
        sm = _PLAN_SKIP.match(tail)
        if sm is not None:
            skip_reason = sm.group(1).strip()
        elif count == 0:
            skip_reason = ""
        if skip_reason is not None and count != 0:
            self.errors.append(f"line {lineno}: a plan with SKIP must be 1..0")
        self.plan = Plan(count, skip_reason, lineno)
        self.plan_trailing = bool(self.tests) or self.pending is not None

    def _comment_line(self, text: str) -> None:
        text = text[1:] if text.startswith(" ") else text
        if _SUMMARY_COMMENT.match(text):
            self.summary.append(text)
        elif self.pending is not None:
            self.pending.diagnostics.append(text)
        elif not self.tests and self.name is None and (sm := _SUBTEST_NAME.match(text)):
            self.name = sm.group(1)
        else:
            self.comments.append(text)

    def _flush(self) -> None:
        if self.pending is not None:
            self.tests.append(self.pending.freeze())
            self.pending = None

    def _close_orphan_subtest(self, where: int) -> None:
        if not self.sub_lines:
            return
        if any(line.strip() for line in self.sub_lines):
            self.errors.append(f"line {where}: indented subtest output not followed by its "
                               "parent test point")
        self.sub_lines.clear()
        self.sub_times.clear()

    def finish(self) -> TapResult:
        """The stream is over: close what is open and check the plan."""
        self._flush()
        self._close_orphan_subtest(self.line_offset + self.count)
        errors, plan, tests = self.errors, self.plan, self.tests
        if self.in_yaml is not None:
            errors.append("unterminated YAML block at end of TAP output")
        if plan is None:
            if self.bailout is None:
                errors.append("no plan found in TAP output")
        elif plan.skip_reason is not None and plan.count == 0:
            if tests:
                errors.append(f"plan 1..0 (skip all) but {len(tests)} test(s) ran")
        elif len(tests) != plan.count and self.bailout is None:
            errors.append(f"bad plan: planned {plan.count} test(s) but ran {len(tests)}")
        return TapResult(tuple(tests), plan, self.bailout, tuple(errors),
                         tuple(self.comments), tuple(self.unknown), self.version, self.name,
                         tuple(self.summary))
