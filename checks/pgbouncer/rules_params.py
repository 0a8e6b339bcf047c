"""Rules on the file as a whole: syntax, sections, [pgbouncer] parameters, duplicate keys.

PgBouncer refuses to start on an unknown section or parameter, a key its version does not
know, or a value its parser rejects; it silently takes the last of two definitions. These
rules judge every [pgbouncer] key against the version's parameter table (`params`).
"""

from __future__ import annotations

import re

from dbgauge.checks.pgbouncer.model import SECTIONS, Out, PgbConfig, check_value
from dbgauge.checks.pgbouncer.params import (
    BUILD_DEPENDENT_AUTH,
    DATABASE_KEYS,
    PARAMS,
    PEERS_SINCE,
    WINDOWS_ONLY,
)
from dbgauge.checks.validation import did_you_mean
from dbgauge.toolkit.db.version import Version, version_text
from dbgauge.toolkit.result import Severity

SYNTAX_SHOWN = 3  # bad lines reported one by one per file; the rest are one finding


def check_syntax(cfg: PgbConfig, out: Out) -> None:
    """Lines the ini reader could not parse (fatal ones stop PgBouncer). PgBouncer stops at
    the first one, so past SYNTAX_SHOWN lines of a file the rest are one finding, not
    one each (a pasted shell script is one mistake, not forty)."""
    shown_per_file: dict[str, int] = {}
    rest: dict[str, list[int]] = {}
    for p in cfg.flat.problems:
        if p.fatal and shown_per_file.get(p.source, 0) >= SYNTAX_SHOWN:
            rest.setdefault(p.source, []).append(p.line)
            continue
        if p.fatal:
            shown_per_file[p.source] = shown_per_file.get(p.source, 0) + 1
        out.add(Severity.ERROR if p.fatal else Severity.WARNING, "pgbouncer/syntax", p.message,
                file=p.source, line=p.line,
                fix=None if not p.fatal else "PgBouncer refuses to start (or a RELOAD fails) "
                                             "until this line is fixed")
    for source, lines in rest.items():
        shown = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
        out.add(Severity.ERROR, "pgbouncer/syntax",
                f"{len(lines)} more line(s) PgBouncer cannot parse: {shown}", file=source,
                line=lines[0])


def check_sections(cfg: PgbConfig, out: Out, v: Version) -> None:
    """Unknown sections, [peers] before 1.19, a file without [pgbouncer]."""
    for s in cfg.flat.sections:
        if s.name not in SECTIONS:
            near = did_you_mean(s.name.lower(), SECTIONS)
            out.add(Severity.ERROR, "pgbouncer/unknown-section",
                    f"unknown section [{s.name}]: PgBouncer refuses to load the file",
                    file=s.source, line=s.line,
                    fix=f"did you mean [{near}]?" if near else "sections are [databases], "
                        "[users], [peers] and [pgbouncer] (lower case)")
        elif s.name == "peers" and v < PEERS_SINCE:
            out.add(Severity.ERROR, "pgbouncer/version",
                    f"[peers] needs PgBouncer {version_text(PEERS_SINCE)}+ "
                    f"(validating for {version_text(v)})", file=s.source, line=s.line)
    if "pgbouncer" not in {s.name for s in cfg.flat.sections}:
        out.add(Severity.WARNING, "pgbouncer/unknown-section",
                "no [pgbouncer] section: every setting is at its default (md5 auth, no "
                "auth_file, listening only on the Unix socket)", line=1)


def check_params(cfg: PgbConfig, out: Out, v: Version) -> None:
    """Every [pgbouncer] line: known, in this version, a value PgBouncer accepts (each
    line is parsed when read, even one a later duplicate or header overrides)."""
    for e in cfg.flat.entries:
        if e.section != "pgbouncer":
            continue
        key = e.key
        param = PARAMS.get(key)
        if key in WINDOWS_ONLY:
            out.add(Severity.ERROR, "pgbouncer/unknown-key",
                    f"{key} exists only in Windows builds; elsewhere it is an unknown "
                    "parameter and PgBouncer refuses to start", file=e.source, line=e.line,
                    key=key, fix=f"use {WINDOWS_ONLY[key]}")
            continue
        if param is None:
            near = did_you_mean(key, PARAMS) or did_you_mean(key.lower(), PARAMS)
            where = ("a [databases] connection parameter" if key in DATABASE_KEYS else None)
            fix = f"did you mean {near!r}?" if near else (
                f"{key} is {where}, not a [pgbouncer] setting" if where else
                "remove it; PgBouncer refuses to start with an unknown parameter")
            out.add(Severity.ERROR, "pgbouncer/unknown-key",
                    f"unknown parameter {key!r}: PgBouncer refuses to start", file=e.source,
                    line=e.line, key=key, fix=fix)
            continue
        if not param.exists_in(v):
            if v < param.since:
                msg = (f"{key} was added in PgBouncer {version_text(param.since)}; "
                       f"{version_text(v)} refuses to start with it")
            else:
                msg = f"{key} was removed in PgBouncer {version_text(param.until or v)}"
            out.add(Severity.ERROR, "pgbouncer/version", msg, file=e.source, line=e.line,
                    key=key, fix="remove it or upgrade PgBouncer")
            continue
        err, value_fix, number = check_value(param, e.value)
        if err:
            out.add(Severity.ERROR, "pgbouncer/bad-value", err, file=e.source, line=e.line,
                    key=key, fix=value_fix)
            continue
        if number is not None:
            if (param.minimum is not None and number < param.minimum) or (
                    param.maximum is not None and number > param.maximum):
                if param.maximum is None:
                    allowed = f"at least {param.minimum:g}"
                elif param.minimum is None:
                    allowed = f"at most {param.maximum:g}"
                else:
                    allowed = f"from {param.minimum:g} to {param.maximum:g}"
                out.add(Severity.ERROR, "pgbouncer/out-of-range",
                        f"{e.value} is out of range: {key} must be {allowed}", file=e.source,
                        line=e.line, key=key, fix=f"use a value {allowed}")
            elif param.kind == "bool" and number not in (0, 1):
                out.add(Severity.WARNING, "pgbouncer/bad-value",
                        f"{e.value} is taken as true; this switch expects 0 or 1",
                        file=e.source, line=e.line, key=key, fix="write 1 or 0")
        elif param.kind in ("str", "list", "path") and re.search(r"\s[;#]", e.value):
            out.add(Severity.WARNING, "pgbouncer/value-text",
                    f"value {e.value!r} contains ' ;' or ' #': PgBouncer has no inline "
                    "comments, this text is part of the value", file=e.source, line=e.line,
                    key=key, fix="move the comment to its own line")
        if param.deprecated:
            out.add(Severity.WARNING, "pgbouncer/deprecated", param.deprecated,
                    file=e.source, line=e.line, key=key)
    auth_type = (cfg.value("auth_type", v) or "").lower()
    if auth_type == "ldap" and v < (1, 25):
        out.at(Severity.ERROR, "pgbouncer/version", "auth_type",
               f"auth_type ldap needs PgBouncer 1.25+ (validating for {version_text(v)})")
    if auth_type in BUILD_DEPENDENT_AUTH:
        out.at(Severity.INFO, "pgbouncer/auth", "auth_type",
               f"auth_type {auth_type} exists only in PgBouncer builds configured "
               f"{BUILD_DEPENDENT_AUTH[auth_type]}; check `pgbouncer -V` on the target host")
    if auth_type == "plain":
        out.at(Severity.WARNING, "pgbouncer/deprecated", "auth_type",
               "auth_type plain sends passwords in clear text and is deprecated",
               "use scram-sha-256")


def check_duplicates(cfg: PgbConfig, out: Out) -> None:
    """Keys set twice in one section: the later value wins. A second [pgbouncer] header
    is worse: every setting above it goes back to its default."""
    if cfg.reset:
        header = cfg.reset[0][1]
        keys = sorted({e.key for e, _ in cfg.reset})
        shown = ", ".join(keys[:6]) + (", ..." if len(keys) > 6 else "")
        out.add(Severity.ERROR, "pgbouncer/duplicate",
                f"[pgbouncer] again: PgBouncer resets every setting to its default at this "
                f"header, so the {len(cfg.reset)} setting(s) above it are lost ({shown})",
                file=header.source, line=header.line,
                fix="keep one [pgbouncer] section (or repeat the settings after the last one)")
    for old, new in cfg.duplicates:
        out.add(Severity.WARNING, "pgbouncer/duplicate",
                f"[{new.section}] {new.key} is also set at {old.source}:{old.line}; "
                "this later value wins", file=new.source, line=new.line, key=new.key,
                fix="keep one definition")
