"""Rules on the file as a whole: syntax, sections, [pgbouncer] parameters, duplicate keys.

PgBouncer refuses to start on an unknown section or parameter, a key its version does not
know, or a value its parser rejects; it silently takes the last of two definitions. These
rules judge every [pgbouncer] key against the version's parameter table (`params`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from dbgauge.checks.pgbouncer.ini import Entry
from dbgauge.checks.pgbouncer.model import SECTIONS, Check, Out, check_value
from dbgauge.checks.pgbouncer.params import (
    BUILD_DEPENDENT_AUTH,
    DATABASE_KEYS,
    PARAMS,
    PEERS_SINCE,
    WINDOWS_ONLY,
    Param,
)
from dbgauge.checks.pgbouncer.rules import FILE
from dbgauge.checks.validation import did_you_mean
from dbgauge.toolkit.db.version import version_text
from dbgauge.toolkit.result import Severity

SYNTAX_SHOWN = 3  # bad lines reported one by one per file; the rest are one finding
_INLINE_COMMENT = re.compile(r"\s[;#]")


@FILE.rule("pgbouncer/syntax", "PgBouncer cannot parse this line")
def unparsable_lines(c: Check, out: Out) -> None:
    """Lines the ini reader cannot parse; past three per file, one summary finding.

    PgBouncer stops at the first fatal one, so the rest of a file are one finding, not
    one each (a pasted shell script is one mistake, not forty)."""
    shown_per_file: dict[str, int] = {}
    rest: dict[str, list[int]] = {}
    for p in c.cfg.flat.problems:
        if p.fatal and shown_per_file.get(p.source, 0) >= SYNTAX_SHOWN:
            rest.setdefault(p.source, []).append(p.line)
            continue
        if p.fatal:
            shown_per_file[p.source] = shown_per_file.get(p.source, 0) + 1
        out.add(Severity.ERROR if p.fatal else Severity.WARNING, p.message,
                file=p.source, line=p.line,
                fix=None if not p.fatal else "PgBouncer refuses to start (or a RELOAD fails) "
                                             "until this line is fixed")
    for source, lines in rest.items():
        shown = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
        out.add(Severity.ERROR, f"{len(lines)} more line(s) PgBouncer cannot parse: {shown}",
                file=source, line=lines[0])


# ------------------------------------------------------------------------ sections


@FILE.rule("pgbouncer/unknown-section", "Section PgBouncer does not know")
def unknown_section(c: Check, out: Out) -> None:
    """A section other than [databases], [users], [peers], [pgbouncer]: the file is refused."""
    for s in c.cfg.flat.sections:
        if s.name not in SECTIONS:
            near = did_you_mean(s.name.lower(), SECTIONS)
            out.add(Severity.ERROR,
                    f"unknown section [{s.name}]: PgBouncer refuses to load the file",
                    file=s.source, line=s.line,
                    fix=f"did you mean [{near}]?" if near else "sections are [databases], "
                        "[users], [peers] and [pgbouncer] (lower case)")


@FILE.rule("pgbouncer/version", "Parameter or value not available in this PgBouncer version")
def peers_section_too_new(c: Check, out: Out) -> None:
    """[peers] before PgBouncer 1.19."""
    if c.v >= PEERS_SINCE:
        return
    for s in c.cfg.flat.sections:
        if s.name == "peers":
            out.add(Severity.ERROR, f"[peers] needs PgBouncer {version_text(PEERS_SINCE)}+ "
                    f"(validating for {version_text(c.v)})", file=s.source, line=s.line)


@FILE.rule("pgbouncer/unknown-section")
def no_pgbouncer_section(c: Check, out: Out) -> None:
    """No [pgbouncer] section: every setting is at its default (warning)."""
    if "pgbouncer" not in {s.name for s in c.cfg.flat.sections}:
        out.add(Severity.WARNING, "no [pgbouncer] section: every setting is at its default "
                "(md5 auth, no auth_file, listening only on the Unix socket)", line=1)


# ---------------------------------------------------------- [pgbouncer] parameters
# Every [pgbouncer] line is parsed when read, even one a later duplicate or header
# overrides, so these rules read the lines, not the effective settings.


def _lines(c: Check) -> Iterator[Entry]:
    return (e for e in c.cfg.flat.entries if e.section == "pgbouncer")


@dataclass(frozen=True)
class _Value:
    """A [pgbouncer] line whose parameter this version knows, its value judged."""

    entry: Entry
    param: Param
    error: str | None
    fix: str | None
    number: float | None


def _values(c: Check) -> Iterator[_Value]:
    for e in _lines(c):
        param = PARAMS.get(e.key)
        if e.key not in WINDOWS_ONLY and param is not None and param.exists_in(c.v):
            yield _Value(e, param, *check_value(param, e.value))


def _range(param: Param) -> str:
    if param.maximum is None:
        return f"at least {param.minimum:g}"
    if param.minimum is None:
        return f"at most {param.maximum:g}"
    return f"from {param.minimum:g} to {param.maximum:g}"


def _in_range(param: Param, number: float) -> bool:
    return not ((param.minimum is not None and number < param.minimum) or (
        param.maximum is not None and number > param.maximum))


@FILE.rule("pgbouncer/unknown-key", "Parameter PgBouncer does not know")
def windows_only_parameter(c: Check, out: Out) -> None:
    """A parameter only Windows builds know (service_name)."""
    for e in _lines(c):
        if e.key in WINDOWS_ONLY:
            out.add(Severity.ERROR, f"{e.key} exists only in Windows builds; elsewhere it is "
                    "an unknown parameter and PgBouncer refuses to start", file=e.source,
                    line=e.line, key=e.key, fix=f"use {WINDOWS_ONLY[e.key]}")


@FILE.rule("pgbouncer/unknown-key")
def unknown_parameter(c: Check, out: Out) -> None:
    """A parameter PgBouncer does not know (did-you-mean; [databases] keys named as such)."""
    for e in _lines(c):
        key = e.key
        if key in WINDOWS_ONLY or key in PARAMS:
            continue
        near = did_you_mean(key, PARAMS) or did_you_mean(key.lower(), PARAMS)
        fix = f"did you mean {near!r}?" if near else (
            f"{key} is a [databases] connection parameter, not a [pgbouncer] setting"
            if key in DATABASE_KEYS else
            "remove it; PgBouncer refuses to start with an unknown parameter")
        out.add(Severity.ERROR, f"unknown parameter {key!r}: PgBouncer refuses to start",
                file=e.source, line=e.line, key=key, fix=fix)


@FILE.rule("pgbouncer/version")
def parameter_not_in_version(c: Check, out: Out) -> None:
    """A parameter added after, or removed before, the version validated for."""
    for e in _lines(c):
        param = PARAMS.get(e.key)
        if e.key in WINDOWS_ONLY or param is None or param.exists_in(c.v):
            continue
        if c.v < param.since:
            msg = (f"{e.key} was added in PgBouncer {version_text(param.since)}; "
                   f"{version_text(c.v)} refuses to start with it")
        else:
            msg = f"{e.key} was removed in PgBouncer {version_text(param.until or c.v)}"
        out.add(Severity.ERROR, msg, file=e.source, line=e.line, key=e.key,
                fix="remove it or upgrade PgBouncer")


@FILE.rule("pgbouncer/bad-value", "Value PgBouncer rejects")
def rejected_value(c: Check, out: Out) -> None:
    """A value PgBouncer's parser rejects: not a number, units, not one of the choices."""
    for x in _values(c):
        if x.error:
            out.add(Severity.ERROR, x.error, file=x.entry.source, line=x.entry.line,
                    key=x.entry.key, fix=x.fix)


@FILE.rule("pgbouncer/out-of-range", "Number outside the accepted range")
def out_of_range(c: Check, out: Out) -> None:
    """A number outside the parameter's range."""
    for x in _values(c):
        if not x.error and x.number is not None and not _in_range(x.param, x.number):
            allowed = _range(x.param)
            out.add(Severity.ERROR, f"{x.entry.value} is out of range: {x.entry.key} must be "
                    f"{allowed}", file=x.entry.source, line=x.entry.line, key=x.entry.key,
                    fix=f"use a value {allowed}")


@FILE.rule("pgbouncer/bad-value")
def switch_not_0_or_1(c: Check, out: Out) -> None:
    """A switch set to a number other than 0 or 1, which PgBouncer takes as true (warning)."""
    for x in _values(c):
        if not x.error and x.number is not None and _in_range(x.param, x.number) and \
                x.param.kind == "bool" and x.number not in (0, 1):
            out.add(Severity.WARNING, f"{x.entry.value} is taken as true; this switch expects "
                    "0 or 1", file=x.entry.source, line=x.entry.line, key=x.entry.key,
                    fix="write 1 or 0")


@FILE.rule("pgbouncer/value-text", "Value contains text PgBouncer takes literally")
def inline_comment(c: Check, out: Out) -> None:
    """' ;' or ' #' inside a text value: PgBouncer has no inline comments."""
    for x in _values(c):
        if not x.error and x.number is None and x.param.kind in ("str", "list", "path") and \
                _INLINE_COMMENT.search(x.entry.value):
            out.add(Severity.WARNING, f"value {x.entry.value!r} contains ' ;' or ' #': "
                    "PgBouncer has no inline comments, this text is part of the value",
                    file=x.entry.source, line=x.entry.line, key=x.entry.key,
                    fix="move the comment to its own line")


@FILE.rule("pgbouncer/deprecated", "Deprecated parameter or value")
def deprecated_parameter(c: Check, out: Out) -> None:
    """A parameter the parameter table marks deprecated."""
    for x in _values(c):
        if not x.error and x.param.deprecated:
            out.add(Severity.WARNING, x.param.deprecated, file=x.entry.source,
                    line=x.entry.line, key=x.entry.key)


@FILE.rule("pgbouncer/version")
def ldap_too_old(c: Check, out: Out) -> None:
    """auth_type ldap before PgBouncer 1.25."""
    if c.auth_type == "ldap" and c.v < (1, 25):
        out.at(Severity.ERROR, "auth_type",
               f"auth_type ldap needs PgBouncer 1.25+ (validating for {version_text(c.v)})")


@FILE.rule("pgbouncer/auth")
def build_dependent_auth(c: Check, out: Out) -> None:
    """auth_type pam or ldap, which exist only in builds with that library (info)."""
    if c.auth_type in BUILD_DEPENDENT_AUTH:
        out.at(Severity.INFO, "auth_type",
               f"auth_type {c.auth_type} exists only in PgBouncer builds configured "
               f"{BUILD_DEPENDENT_AUTH[c.auth_type]}; check `pgbouncer -V` on the target host")


@FILE.rule("pgbouncer/deprecated")
def plain_auth(c: Check, out: Out) -> None:
    """auth_type plain: clear-text passwords, deprecated."""
    if c.auth_type == "plain":
        out.at(Severity.WARNING, "auth_type",
               "auth_type plain sends passwords in clear text and is deprecated",
               "use scram-sha-256")


# ---------------------------------------------------------------------- duplicates


@FILE.rule("pgbouncer/duplicate", "Key set more than once; the last one wins")
def pgbouncer_header_again(c: Check, out: Out) -> None:
    """A second [pgbouncer] header: every setting above it goes back to its default."""
    if not c.cfg.reset:
        return
    header = c.cfg.reset[0][1]
    keys = sorted({e.key for e, _ in c.cfg.reset})
    shown = ", ".join(keys[:6]) + (", ..." if len(keys) > 6 else "")
    out.add(Severity.ERROR,
            f"[pgbouncer] again: PgBouncer resets every setting to its default at this "
            f"header, so the {len(c.cfg.reset)} setting(s) above it are lost ({shown})",
            file=header.source, line=header.line,
            fix="keep one [pgbouncer] section (or repeat the settings after the last one)")


@FILE.rule("pgbouncer/duplicate")
def duplicate_key(c: Check, out: Out) -> None:
    """A key set twice in one section: the later value wins (warning)."""
    for old, new in c.cfg.duplicates:
        out.add(Severity.WARNING, f"[{new.section}] {new.key} is also set at "
                f"{old.source}:{old.line}; this later value wins", file=new.source,
                line=new.line, key=new.key, fix="keep one definition")
