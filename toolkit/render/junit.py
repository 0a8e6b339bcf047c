"""JUnit XML for CI systems: one <testsuite> per file, one <testcase> per top-level test.

Failure text carries the test's diagnostics (and, for runtests() functions, the failed
assertions of the subtest with theirs). File-level problems that belong to no single
test (SQL error, plan mismatch, bail-out, parse error, timeout) become an extra testcase
with an <error>, so a CI UI shows them even when every individual test passed. TODO tests
that fail as expected are reported as skipped, as JUnit has no "expected failure".
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.pgtap.runner import FileResult
from dbgauge.toolkit.pgtap.tap import TestPoint
from dbgauge.toolkit.render.pgtap import failed_test_lines

FILE_CASE = "(file)"
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _XML_ILLEGAL.sub("\ufffd", text)


def _classname(name: str) -> str:
    stem = re.sub(r"\.(sql|pg)$", "", name)
    return re.sub(r"[/\\]+", ".", stem).strip(".") or name


def _case_name(test: TestPoint, used: set[str]) -> str:
    base = test.description or f"test {test.number}"
    name = base if base not in used else f"{base} [#{test.number}]"
    used.add(name)
    return name


def _failure_text(test: TestPoint) -> str:
    lines = failed_test_lines(test, indent="")
    if test.yaml:
        lines.append(test.yaml)
    return "\n".join(lines)


def build(results: Sequence[FileResult], name: str = "dbgauge pgtap") -> ET.Element:
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    total_time = 0.0
    host = socket.gethostname()
    for result in results:
        suite = ET.SubElement(root, "testsuite", name=_clean(result.name))
        classname = _classname(result.name)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        used: set[str] = set()
        for test in result.tap.tests:
            case = ET.SubElement(suite, "testcase", classname=classname,
                                 name=_clean(_case_name(test, used)),
                                 time=f"{test.elapsed or 0.0:.3f}")
            counts["tests"] += 1
            if not test.passed:
                failure = ET.SubElement(case, "failure", type="TestFailed",
                                        message=_clean(test.raw_status))
                failure.text = _clean(_failure_text(test))
                counts["failures"] += 1
            elif test.skipped or (test.todo and not test.ok):
                what = "SKIP" if test.skipped else "TODO (failed as expected)"
                ET.SubElement(case, "skipped",
                              message=_clean(f"{what}: {test.reason}".rstrip(": ")))
                counts["skipped"] += 1
        if result.tap.skip_all is not None and not result.tap.tests and result.passed:
            case = ET.SubElement(suite, "testcase", classname=classname, name=FILE_CASE,
                                 time=f"{result.elapsed:.3f}")
            ET.SubElement(case, "skipped", message=_clean(f"SKIP: {result.tap.skip_all}"))
            counts["tests"] += 1
            counts["skipped"] += 1
        file_problems = result.file_problems
        if file_problems:
            case = ET.SubElement(suite, "testcase", classname=classname, name=FILE_CASE,
                                 time=f"{result.elapsed:.3f}")
            error = ET.SubElement(case, "error", type="FileFailed",
                                  message=_clean(file_problems[0]))
            detail = list(file_problems)
            detail += result.sql_errors
            detail += [f"# {c}" for c in result.tap.summary_comments]
            error.text = _clean("\n".join(detail))
            counts["tests"] += 1
            counts["errors"] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
        suite.set("time", f"{result.elapsed:.3f}")
        suite.set("timestamp", result.started.strftime("%Y-%m-%dT%H:%M:%S"))
        suite.set("hostname", host)
        out = ET.SubElement(suite, "system-out")
        out.text = _clean("\n".join(result.lines))
        if result.stderr:
            err = ET.SubElement(suite, "system-err")
            err.text = _clean(result.stderr)
        total_time += result.elapsed
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{total_time:.3f}")
    return root


def render(results: Sequence[FileResult]) -> bytes:
    root = build(results)
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


def check_directory(path: Path) -> None:
    """Before a run: the --junit file's directory must exist (a run is not wasted on it)."""
    if not path.resolve().parent.is_dir():
        raise ConfigError(f"--junit {path}: directory does not exist")


def write(results: Sequence[FileResult], path: Path) -> None:
    """The JUnit XML of `results` at `path` (the --junit file)."""
    try:
        path.write_bytes(render(results))
    except OSError as exc:
        raise ConfigError(f"cannot write --junit {path}: {exc.strerror}") from None
