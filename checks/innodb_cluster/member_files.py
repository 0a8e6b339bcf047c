"""Rules on one member's option files as mysqld reads them: syntax, includes, and
options by server version (removed, deprecated, booleans mysqld refuses).

Files only: a live member has no file. Pure: a function of the `Member`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from dbgauge.checks.innodb_cluster.model import Member, Out
from dbgauge.checks.innodb_cluster.mycnf import CnfOption, as_bool, split_prefix
from dbgauge.checks.innodb_cluster.options import (
    BOOLEANS,
    DEPRECATED,
    REMOVED,
    RENAMED,
    RENAMED_SINCE,
)
from dbgauge.checks.innodb_cluster.rules import MEMBER_FILES
from dbgauge.toolkit.db.version import version_text
from dbgauge.toolkit.result import Severity


def _options(m: Member) -> Iterator[tuple[str, CnfOption]]:
    """(name, option) of every setting the member's files decide."""
    return ((name, s.option) for name, s in m.values.items() if s.option is not None)


def _removed(m: Member, name: str) -> bool:
    removed = REMOVED.get(name)
    return removed is not None and m.version >= removed[0]


@MEMBER_FILES.rule("mycnf/syntax", "mysqld cannot read this option file line")
def unreadable_line(m: Member, out: Out) -> None:
    """A line mysqld cannot read (an option before any group is an error, as in mysqld)."""
    for p in m.cnf.problems if m.cnf else ():
        if not p.message.startswith("!"):
            out.emit(Severity.ERROR if p.fatal else Severity.WARNING, p.message, node=m.label,
                     file=p.source, line=p.line)


@MEMBER_FILES.rule("mycnf/include", "!include / !includedir problem")
def include_problem(m: Member, out: Out) -> None:
    """An !include or !includedir mysqld cannot follow (missing, a loop, not *.cnf)."""
    for p in m.cnf.problems if m.cnf else ():
        if p.message.startswith("!"):
            out.emit(Severity.ERROR if p.fatal else Severity.WARNING, p.message, node=m.label,
                     file=p.source, line=p.line)


@MEMBER_FILES.rule("mycnf/include")
def relative_include(m: Member, out: Out) -> None:
    """A relative !include: mysqld resolves it against its working directory (info)."""
    for d in m.cnf.directives if m.cnf else ():
        if not os.path.isabs(d.path):
            out.emit(Severity.INFO, f"relative !{d.kind} {d.path}: mysqld resolves it against "
                     "its working directory (dbgauge: next to the file)", node=m.label,
                     file=d.source, line=d.line, fix="use an absolute path")


@MEMBER_FILES.rule("mycnf/bad-value", "Value mysqld rejects")
def not_a_boolean(m: Member, out: Out) -> None:
    """A boolean option whose value is not ON/OFF, 1/0 or TRUE/FALSE: mysqld refuses to start."""
    for name, opt in _options(m) if m.cnf else ():
        if split_prefix(name)[1] in BOOLEANS and as_bool(opt) is None:
            out.about(m, Severity.ERROR, name,
                      f"{opt.raw}={opt.value} is not a boolean: mysqld refuses to start",
                      "write ON or OFF (1/0, TRUE/FALSE also work)", name=name)


@MEMBER_FILES.rule("mycnf/removed",
                   "Option removed in this MySQL version (mysqld refuses to start)")
def removed_option(m: Member, out: Out) -> None:
    """An option the version removed: mysqld refuses to start (with loose-, a warning)."""
    for name, opt in _options(m) if m.cnf else ():
        if not _removed(m, name):
            continue
        since, fix = REMOVED[name]
        if opt.loose:
            out.about(m, Severity.WARNING, name, f"{name} was removed in MySQL "
                      f"{version_text(since)}; with loose- mysqld only warns and ignores it",
                      fix, name=name)
        else:
            out.about(m, Severity.ERROR, name, f"{name} was removed in MySQL "
                      f"{version_text(since)}: mysqld {version_text(m.version[:2])} refuses to "
                      "start ('unknown variable')", fix, name=name)


@MEMBER_FILES.rule("mycnf/deprecated", "Deprecated option")
def deprecated_option(m: Member, out: Out) -> None:
    """An option deprecated in this version, or an old replication name (slave/master)."""
    for name, _ in _options(m) if m.cnf else ():
        dep = DEPRECATED.get(name)
        if _removed(m, name):
            continue
        if dep and m.version >= dep[0]:
            out.about(m, Severity.WARNING, name, f"{name} is deprecated since MySQL "
                      f"{version_text(dep[0])}", dep[1], name=name)
        elif name in RENAMED and m.version >= RENAMED_SINCE:
            out.about(m, Severity.WARNING, name,
                      f"{name} is deprecated since {version_text(RENAMED_SINCE)}",
                      f"use {RENAMED[name]}", name=name)
