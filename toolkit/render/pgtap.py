"""Human rendering of pgTAP runs: a prove-like line per file, details for failures, and a
summary. Pure functions returning text; the CLI prints them."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from dbgauge.toolkit.pgtap.psql import ServerFacts
from dbgauge.toolkit.pgtap.runner import FileResult
from dbgauge.toolkit.pgtap.tap import TestPoint

MAX_ERROR_LINES = 12


def name_width(names: Sequence[str]) -> int:
    return max((len(n) for n in names), default=0) + 3


def _counts(result: FileResult) -> str:
    tap = result.tap
    if tap.skip_all is not None and not tap.tests:
        return "skipped" + (f": {tap.skip_all}" if tap.skip_all else "")
    parts = [f"{len(tap.tests)} test{'s' if len(tap.tests) != 1 else ''}"]
    if tap.failed:
        parts.append(f"{len(tap.failed)} failed")
    if tap.skipped:
        parts.append(f"{len(tap.skipped)} skipped")
    if tap.todo:
        parts.append(f"{len(tap.todo)} todo")
    return ", ".join(parts)


def failed_test_lines(test: TestPoint, indent: str = "    ") -> list[str]:
    """A failed test with its diagnostics, and the failed parts of its subtest."""
    out = [indent + test.raw_status]
    if test.subtest is not None:
        inner = indent + "    "
        out.extend(f"{inner}# {c}" for c in test.subtest.comments)
        for sub in test.subtest.tests:
            if not sub.passed:
                out.extend(failed_test_lines(sub, inner))
            else:  # e.g. runtests()' "Test died: ..." follows the last passing assertion
                out.extend(f"{inner}# {d}" for d in sub.diagnostics)
        if test.subtest.bailout is not None:
            out.append(f"{inner}Bail out! {test.subtest.bailout}")
    out.extend(f"{indent}# {d}" for d in test.diagnostics)
    return out


def file_line(result: FileResult, width: int) -> str:
    """'name ..... ok  12 tests  0.05s', plus indented details when the file failed."""
    dots = " " + "." * max(2, width - len(result.name) - 1) + " "
    verdict = "ok" if result.passed else "FAILED"
    head = f"{result.name}{dots}{verdict:<7}{_counts(result)}  {result.elapsed:.2f}s"
    if result.passed:
        return head
    lines = [head]
    for problem in result.problems:
        lines.append(f"    ! {problem}")
    for test in result.tap.failed:
        lines.extend(failed_test_lines(test))
    errors = result.sql_errors
    if errors and result.exit_code not in (0, None):
        # The first line is in the problem above; show what psql said after it.
        shown = errors[0].splitlines()[1:]
        lines.extend(f"      {ln}" for ln in shown[:MAX_ERROR_LINES])
        if len(shown) > MAX_ERROR_LINES:
            lines.append(f"      ... {len(shown) - MAX_ERROR_LINES} more line(s)")
    elif result.exit_code not in (0, None) and result.stderr.strip():
        tail = result.stderr.strip().splitlines()[-MAX_ERROR_LINES:]
        lines.extend(f"    {ln}" for ln in tail)
    if any("function plan(" in e and "does not exist" in e for e in errors):
        lines.append("    hint: pgTAP is not created in this database; add --install-pgtap "
                     "or CREATE EXTENSION pgtap")
    return "\n".join(lines)


@dataclass(frozen=True)
class Display:
    """What is printed per file, as pg_prove's flags say: `verbose` (-v) every TAP line,
    `comments` (-o) the comments and diagnostics, `timer` (--timer) the time each file
    ended, `summary_only` (-Q) nothing per file."""

    verbose: bool = False
    comments: bool = False
    timer: bool = False
    summary_only: bool = False


def file_block(result: FileResult, width: int, display: Display = Display()) -> str | None:
    """A file's lines as `display` asks (None with -Q): -v its TAP lines before its
    verdict line, as prove prints them; -o its comment lines; --timer `[HH:MM:SS]` first."""
    if display.summary_only:
        return None
    head = file_line(result, width)
    if display.timer:
        ended = result.started.timestamp() + result.elapsed
        head = f"[{time.strftime('%H:%M:%S', time.localtime(ended))}] {head}"
    if display.verbose:
        return "\n".join([f"{result.name} ..", *result.lines, head])
    if display.comments:
        notes = [ln for ln in result.lines if ln.lstrip().startswith("#")]
        return "\n".join([*notes, head])
    return head


def summary(results: Sequence[FileResult], wall: float, parallel: int,
            facts: ServerFacts | None) -> str:
    """The closing block: failed files again, totals, and PASS/FAIL."""
    failed = [r for r in results if not r.passed]
    lines: list[str] = []
    if failed:
        lines += ["", "Test Summary Report", "-------------------"]
        for r in failed:
            lines.append(f"{r.name} (tests {len(r.tap.tests)}, failed {len(r.tap.failed)}, "
                         f"psql exit {r.exit_code if r.exit_code is not None else '-'})")
            lines.extend(f"  {p}" for p in r.problems)
    tests = sum(len(r.tap.tests) for r in results)
    where = ""
    if facts is not None:
        where = (f"; pgTAP {facts.pgtap_version or '(not created)'} on PostgreSQL "
                 f"{facts.server_version}")
    lines.append(f"Files={len(results)}, Tests={tests}, Failed files={len(failed)}, "
                 f"{wall:.2f}s wall (-j {parallel}){where}")
    lines.append(f"Result: {'FAIL' if failed else 'PASS'}")
    return "\n".join(lines)
