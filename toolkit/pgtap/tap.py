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
    items = [line.rstrip("\r\n") for line in lines]
    tests: list[TestPoint] = []
    errors: list[str] = []
    comments: list[str] = []
    summary: list[str] = []
    unknown: list[str] = []
    plan: Plan | None = None
    plans_seen = 0
    version: int | None = None
    bailout: str | None = None
    pending: _Pending | None = None
    sub_lines: list[str] = []
    sub_times: list[float] = []
    sub_start = 0
    last_time = 0.0
    in_yaml: str | None = None  # the indentation of an open YAML block
    plan_misplaced = False
    plan_trailing = False

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            tests.append(pending.freeze())
            pending = None

    def close_orphan_subtest(where: int) -> None:
        if not sub_lines:
            return
        if any(line.strip() for line in sub_lines):
            errors.append(f"line {where}: indented subtest output not followed by its "
                          "parent test point")
        sub_lines.clear()
        sub_times.clear()

    for index, line in enumerate(items):
        lineno = line_offset + index + 1
        now = times[index] if times is not None and index < len(times) else None

        if in_yaml is not None:
            if pending is not None:
                pending.yaml.append(line)
            if line.startswith(in_yaml) and line[len(in_yaml):].rstrip() == "...":
                in_yaml = None
            continue

        if line.startswith(SUBTEST_INDENT):
            if not sub_lines:
                sub_start = line_offset + index
            sub_lines.append(line[len(SUBTEST_INDENT):])
            if now is not None:
                sub_times.append(now)
            if bailout is None and (bm := _BAILOUT.match(line)):
                # TAP::Parser sees an indented Bail out! too, and stops the run for it.
                bailout = bm.group(1).strip()
            continue

        if now is not None and not line.startswith(SUBTEST_INDENT) and \
                _TEST.match(line) is None:
            last_time = now  # a plan or diagnostic line: the next test's time starts here

        if not line.strip():
            if sub_lines:
                sub_lines.append("")
                if now is not None:
                    sub_times.append(now)
            continue

        if index == 0 and (m := _VERSION.match(line)):
            version = int(m.group(1))
            if version < 13:
                errors.append(f"line {lineno}: explicit TAP version must be at least 13")
            continue

        if (m := _TEST.match(line)) is not None:
            flush()
            expected = len(tests) + 1
            number = int(m.group(2)) if m.group(2) else expected
            if number != expected:
                errors.append(f"line {lineno}: tests out of sequence: found ({number}) but "
                              f"expected ({expected})")
            if plan is not None and plan_trailing and not plan_misplaced:
                plan_misplaced = True  # a test after a plan that itself followed tests
                errors.append(f"line {plan.line}: plan (1..{plan.count}) must be at the "
                              "beginning or end of the TAP output")
            description, directive, reason = _split_test(m.group(3))
            subtest = None
            if sub_lines:
                subtest = parse_tap(sub_lines, sub_times if times is not None else None,
                                    line_offset=sub_start)
                sub_lines.clear()
                sub_times.clear()
            elapsed = None
            if now is not None:
                elapsed = max(0.0, now - last_time)
                last_time = now
            pending = _Pending(number, m.group(1) is None, description, directive, reason,
                               lineno, subtest, elapsed)
            continue

        if (m := _PLAN.match(line)) is not None:
            flush()
            close_orphan_subtest(lineno)
            plans_seen += 1
            if plans_seen > 1:
                errors.append(f"line {lineno}: more than one plan found in TAP output")
                continue
            count, tail = int(m.group(1)), m.group(2).strip()
            skip_reason = None
            sm = _PLAN_SKIP.match(tail)
            if sm is not None:
                skip_reason = sm.group(1).strip()
            elif count == 0:
                skip_reason = ""
            if skip_reason is not None and count != 0:
                errors.append(f"line {lineno}: a plan with SKIP must be 1..0")
            plan = Plan(count, skip_reason, lineno)
            plan_trailing = bool(tests) or pending is not None
            continue

        if (m := _BAILOUT.match(line)) is not None:
            flush()
            if bailout is None:
                bailout = m.group(1).strip()
            continue

        if (m := _COMMENT.match(line)) is not None:
            text = m.group(1)
            text = text[1:] if text.startswith(" ") else text
            if _SUMMARY_COMMENT.match(text):
                summary.append(text)
            elif pending is not None:
                pending.diagnostics.append(text)
            elif not tests and name is None and (sm := _SUBTEST_NAME.match(text)):
                name = sm.group(1)
            else:
                comments.append(text)
            continue

        if (ym := _YAML_START.match(line)) is not None and pending is not None \
                and not pending.yaml:
            in_yaml = ym.group(1)
            pending.yaml.append(line)
            continue

        unknown.append(line)

    flush()
    close_orphan_subtest(line_offset + len(items))
    if in_yaml is not None:
        errors.append("unterminated YAML block at end of TAP output")
    if plan is None:
        if bailout is None:
            errors.append("no plan found in TAP output")
    elif plan.skip_reason is not None and plan.count == 0:
        if tests:
            errors.append(f"plan 1..0 (skip all) but {len(tests)} test(s) ran")
    elif len(tests) != plan.count and bailout is None:
        errors.append(f"bad plan: planned {plan.count} test(s) but ran {len(tests)}")
    return TapResult(tuple(tests), plan, bailout, tuple(errors), tuple(comments),
                     tuple(unknown), version, name, tuple(summary))

