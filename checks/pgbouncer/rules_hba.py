"""Rules on auth_type hba: the HBA file is set, readable, and has rules PgBouncer accepts.

PgBouncer skips an HBA line it cannot use (an unknown method or option, a method only
valid globally) and rejects every login when no line is left; a `trust` line for a
remote network opens the pooler to it. The parsed file comes from `Environment`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from dbgauge.checks.pgbouncer.hba import HbaFile, HbaRule
from dbgauge.checks.pgbouncer.model import Check, Out
from dbgauge.checks.pgbouncer.params import HBA_METHODS, HBA_OPTIONS_SINCE
from dbgauge.checks.pgbouncer.rules import HBA
from dbgauge.checks.validation import did_you_mean
from dbgauge.toolkit.db.version import version_text
from dbgauge.toolkit.result import Severity

GLOBAL_ONLY = ("pam", "any")  # methods that work only as the global auth_type


def _hba_file(c: Check) -> HbaFile | None:
    """The HBA file PgBouncer authenticates with: auth_type hba, set and read."""
    if c.auth_type == "hba" and c.value("auth_hba_file"):
        return c.hba
    return None


def _rules(c: Check) -> Iterator[tuple[HbaRule, str]]:
    """(rule, file) of every line of that HBA file that parsed as a rule."""
    hba = _hba_file(c)
    if hba is not None:
        yield from ((rule, hba.source) for rule in hba.rules)


def _usable_rules(c: Check) -> Iterator[tuple[HbaRule, str]]:
    """The rules whose method PgBouncer knows in some version (the others are skipped)."""
    return ((rule, source) for rule, source in _rules(c)
            if rule.method not in GLOBAL_ONLY and rule.method in HBA_METHODS)


@HBA.rule("pgbouncer/hba", "auth_hba_file problem")
def hba_file_not_set(c: Check, out: Out) -> None:
    """auth_type hba without auth_hba_file: PgBouncer rejects every login."""
    if c.auth_type == "hba" and not c.value("auth_hba_file"):
        out.at(Severity.ERROR, "auth_hba_file",
               "auth_type hba without auth_hba_file: PgBouncer rejects every login",
               "set auth_hba_file to a pg_hba.conf-style file")


@HBA.rule("pgbouncer/hba")
def hba_file_unreadable(c: Check, out: Out) -> None:
    """An auth_hba_file that does not exist or cannot be read: every login is rejected."""
    path = c.value("auth_hba_file")
    if c.auth_type == "hba" and path and isinstance(c.env.hba_file, str):
        out.at(Severity.ERROR, "auth_hba_file",
               f"cannot read auth_hba_file {path}: {c.env.hba_file}; PgBouncer rejects every "
               "login")


@HBA.rule("pgbouncer/hba")
def hba_lines_unread(c: Check, out: Out) -> None:
    """HBA lines PgBouncer cannot read (types, names, addresses and masks)."""
    hba = _hba_file(c)
    if hba is None:
        return
    for p in hba.problems:
        out.add(Severity.ERROR if p.fatal else Severity.WARNING, p.message,
                file=hba.source, line=p.line)


@HBA.rule("pgbouncer/hba")
def no_valid_hba_rule(c: Check, out: Out) -> None:
    """An HBA file without one valid rule: PgBouncer rejects every login."""
    hba = _hba_file(c)
    if hba is not None and not hba.rules:
        out.add(Severity.ERROR, "no valid rule: PgBouncer rejects every login",
                file=hba.source, line=1)


@HBA.rule("pgbouncer/hba")
def global_only_method(c: Check, out: Out) -> None:
    """pam or any in the HBA file: they work only as the global auth_type."""
    for rule, source in _rules(c):
        if rule.method in GLOBAL_ONLY:
            out.add(Severity.ERROR, f"method {rule.method} only works as a global auth_type, "
                    "not in the HBA file; PgBouncer skips this line", file=source,
                    line=rule.line)


@HBA.rule("pgbouncer/hba")
def unsupported_method(c: Check, out: Out) -> None:
    """A method PgBouncer does not know: the line is skipped."""
    for rule, source in _rules(c):
        if rule.method not in GLOBAL_ONLY and rule.method not in HBA_METHODS:
            near = did_you_mean(rule.method, HBA_METHODS)
            out.add(Severity.ERROR, f"unsupported method {rule.method!r}; PgBouncer skips this "
                    "line", file=source, line=rule.line,
                    fix=f"did you mean {near!r}?" if near else None)


@HBA.rule("pgbouncer/version")
def method_too_new(c: Check, out: Out) -> None:
    """An HBA method newer than the version validated for (scram-sha-256, ldap)."""
    for rule, source in _usable_rules(c):
        since = HBA_METHODS[rule.method]
        if c.v < since:
            out.add(Severity.ERROR, f"method {rule.method} needs PgBouncer "
                    f"{version_text(since)}+; this line is skipped", file=source,
                    line=rule.line)


@HBA.rule("pgbouncer/hba")
def option_too_new(c: Check, out: Out) -> None:
    """HBA options (map=, ldap...) before PgBouncer 1.23, which skips the whole line."""
    if c.v >= HBA_OPTIONS_SINCE:
        return
    for rule, source in _usable_rules(c):
        for opt in rule.options:
            out.add(Severity.ERROR, f"option {opt!r} needs PgBouncer "
                    f"{version_text(HBA_OPTIONS_SINCE)}+; older versions skip the whole line",
                    file=source, line=rule.line)


@HBA.rule("pgbouncer/hba")
def unsupported_option(c: Check, out: Out) -> None:
    """An HBA option other than map= (and ldap* options on ldap lines)."""
    if c.v < HBA_OPTIONS_SINCE:
        return
    for rule, source in _usable_rules(c):
        for opt in rule.options:
            name = opt.split("=", 1)[0]
            if name != "map" and not (rule.method == "ldap" and name.startswith("ldap")):
                out.add(Severity.ERROR, f"unsupported option {opt!r}", file=source,
                        line=rule.line)


@HBA.rule("pgbouncer/hba")
def peer_not_local(c: Check, out: Out) -> None:
    """peer on a host line: it works only on Unix sockets (warning)."""
    for rule, source in _usable_rules(c):
        if rule.method == "peer" and rule.type != "local":
            out.add(Severity.WARNING, f"peer works only on Unix sockets; this {rule.type} "
                    "rule never authenticates anyone", file=source, line=rule.line,
                    fix="use local")


@HBA.rule("pgbouncer/hba")
def cert_without_tls(c: Check, out: Out) -> None:
    """cert on a host or hostnossl line: plain connections fail (warning)."""
    for rule, source in _usable_rules(c):
        if rule.method == "cert" and rule.type in ("host", "hostnossl"):
            out.add(Severity.WARNING, f"cert needs a TLS connection; on a {rule.type} rule "
                    "plain connections fail", file=source, line=rule.line, fix="use hostssl")


@HBA.rule("pgbouncer/auth-open")
def trust_for_network(c: Check, out: Out) -> None:
    """A trust line for a non-loopback network while listening on one."""
    listeners = c.listeners
    for rule, source in _usable_rules(c) if listeners else ():
        if rule.method == "trust" and rule.network and \
                not ipaddress.ip_network(rule.network).is_loopback:
            out.add(Severity.ERROR, f"trust for {rule.network} while listening on "
                    f"{', '.join(listeners)}: anyone from that network logs in without a "
                    "password", file=source, line=rule.line,
                    fix="restrict to 127.0.0.1/32 or use scram-sha-256")
