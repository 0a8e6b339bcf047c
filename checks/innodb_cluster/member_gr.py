"""Rules on one voting member's Group Replication options in its files.

mysqld refuses to start on a group_replication_* option it does not know: a typo, or
any of them without the plugin loaded (unless written loose-). The options that must
agree across members are judged in `group_rules`; these read one member's files only
(a live member's variables are what the server accepted).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

from dbgauge.checks.innodb_cluster.model import MEMBER, Member, Out, Setting, port_of
from dbgauge.checks.innodb_cluster.options import GR_VARIABLES, PLUGIN_ACTIVATION
from dbgauge.checks.innodb_cluster.rules import MEMBER_GR
from dbgauge.checks.validation import did_you_mean
from dbgauge.toolkit.result import Severity

_PLUGIN_FIX = "add plugin_load_add = group_replication.so"


def plugin_loaded(m: Member) -> bool:
    """Whether the member's settings load the Group Replication plugin."""
    for key in ("plugin_load_add", "plugin_load"):
        if "group_replication" in (m.text(key) or ""):
            return True
    if m.cnf is not None:  # plugin_load_add may repeat: any occurrence counts
        return any(o.name in ("plugin_load_add", "plugin_load") and
                   "group_replication" in (o.value or "") for o in m.cnf.options)
    return False


def _files(m: Member) -> bool:
    """A voting member read from option files: the rules of this module apply."""
    return m.role == MEMBER and not m.live


def _gr_options(m: Member) -> Iterator[tuple[str, Setting]]:
    """group_replication_* options of the files (not the plugin-activation option)."""
    return ((k, s) for k, s in m.values.items()
            if k.startswith("group_replication") and k != "group_replication")


def _activation(m: Member) -> Setting | None:
    """--group_replication=ON|OFF|FORCE|FORCE_PLUS_PERMANENT in a file."""
    activation = m.get("group_replication")
    return activation if activation is not None and activation.option is not None else None


@MEMBER_GR.rule("mycnf/bad-value")
def bad_plugin_activation(m: Member, out: Out) -> None:
    """group_replication= with a value the plugin-activation option does not take."""
    activation = _activation(m) if _files(m) else None
    if activation is not None and \
            (activation.value or "ON").strip().upper() not in PLUGIN_ACTIVATION:
        out.about(m, Severity.ERROR, "group_replication",
                  f"group_replication={activation.value}: the plugin-activation option "
                  f"takes {', '.join(PLUGIN_ACTIVATION)}; mysqld refuses to start")


@MEMBER_GR.rule("mycnf/plugin", "Group Replication options without the plugin")
def activation_without_plugin(m: Member, out: Out) -> None:
    """group_replication=... without the plugin loaded (and without loose-)."""
    activation = _activation(m) if _files(m) else None
    if activation is None or activation.option is None or activation.option.loose:
        return
    value = (activation.value or "ON").strip().upper()
    if value in PLUGIN_ACTIVATION and not plugin_loaded(m):
        out.about(m, Severity.ERROR, "group_replication",
                  f"group_replication={value} (plugin activation) without "
                  "plugin_load_add=group_replication.so: mysqld refuses to start ('unknown "
                  "variable') unless the plugin is installed",
                  f"{_PLUGIN_FIX}, or write loose-group_replication")


@MEMBER_GR.rule("mycnf/bad-value")
def unknown_gr_option(m: Member, out: Out) -> None:
    """A group_replication_* option mysqld does not know (did-you-mean; loose-: warning)."""
    for name, s in _gr_options(m) if _files(m) else ():
        if name not in GR_VARIABLES:
            near = did_you_mean(name, GR_VARIABLES)
            loose = bool(s.option and s.option.loose)
            out.about(m, Severity.WARNING if loose else Severity.ERROR, name,
                      f"unknown Group Replication option {name}" +
                      ("" if loose else ": mysqld refuses to start"),
                      f"did you mean {near}?" if near else None, name=name)


@MEMBER_GR.rule("mycnf/plugin")
def option_without_plugin(m: Member, out: Out) -> None:
    """A Group Replication option without the plugin loaded and without loose-."""
    if not _files(m) or plugin_loaded(m):
        return
    for name, s in _gr_options(m):
        if name in GR_VARIABLES and s.option is not None and not s.option.loose:
            out.about(m, Severity.ERROR, name,
                      f"{name} without plugin_load_add=group_replication.so: mysqld refuses "
                      "to start ('unknown variable') unless the plugin is already installed "
                      "(INSTALL PLUGIN) and the option is written loose-" + name,
                      f"{_PLUGIN_FIX}, or prefix the option with loose-", name=name)


@MEMBER_GR.rule("gr/group")
def bootstrap_group_on(m: Member, out: Out) -> None:
    """group_replication_bootstrap_group ON in a file: every restart bootstraps a new group."""
    if _files(m) and m.flag("group_replication_bootstrap_group"):
        out.about(m, Severity.ERROR, "group_replication_bootstrap_group",
                  "group_replication_bootstrap_group is ON in the file: every restart would "
                  "bootstrap a new group from this member (split brain)",
                  "bootstrap once with SET GLOBAL, keep the file at OFF")


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text.strip().strip("'\""))
        return bool(re.fullmatch(r"[0-9a-fA-F-]{36}", text.strip().strip("'\"")))
    except ValueError:
        return False


@MEMBER_GR.rule("mycnf/bad-value")
def group_name_not_uuid(m: Member, out: Out) -> None:
    """A group_replication_group_name that is not a UUID."""
    group_name = m.text("group_replication_group_name")
    if _files(m) and group_name is not None and not _is_uuid(group_name):
        out.about(m, Severity.ERROR, "group_replication_group_name",
                  f"group_replication_group_name {group_name!r} is not a UUID",
                  "generate one with SELECT UUID()")


@MEMBER_GR.rule("mycnf/bad-value")
def local_address_not_host_port(m: Member, out: Out) -> None:
    """A group_replication_local_address that is not host:port."""
    local = m.text("group_replication_local_address")
    if _files(m) and local is not None and port_of(local) is None:
        out.about(m, Severity.ERROR, "group_replication_local_address",
                  f"group_replication_local_address {local!r} is not host:port")


@MEMBER_GR.rule("gr/requirement")
def local_address_port(m: Member, out: Out) -> None:
    """The local address on the MySQL port with the XCOM stack (error), or off it with
    the MYSQL stack (warning)."""
    port = port_of(m.text("group_replication_local_address") or "") if _files(m) else None
    stack = (m.text("group_replication_communication_stack") or "XCOM").upper()
    if port is not None and stack == "XCOM" and port == m.port:
        out.about(m, Severity.ERROR, "group_replication_local_address",
                  f"group_replication_local_address uses port {port}, the MySQL port: "
                  "with the XCOM stack it needs its own port", "use e.g. port 33061")
    elif port is not None and stack == "MYSQL" and port != m.port:
        out.about(m, Severity.WARNING, "group_replication_local_address",
                  f"with group_replication_communication_stack MYSQL the local address "
                  f"should use the MySQL port {m.port}, not {port}")


@MEMBER_GR.rule("gr/recommendation")
def multi_primary_without_checks(m: Member, out: Out) -> None:
    """Multi-primary mode without enforce_update_everywhere_checks (warning)."""
    if _files(m) and m.flag("group_replication_single_primary_mode") is False and \
            not m.flag("group_replication_enforce_update_everywhere_checks"):
        out.about(m, Severity.WARNING, "group_replication_enforce_update_everywhere_checks",
                  "multi-primary mode without group_replication_enforce_update_everywhere_"
                  "checks: conflicting DDL/foreign-key writes are not refused",
                  "group_replication_enforce_update_everywhere_checks = ON")
