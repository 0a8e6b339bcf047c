"""What a PostgreSQL role without pg_read_all_stats is shown, counted and named with the
grant (toolkit/db/privileges.py): CONSTRUCTED rows with the columns of sql/postgres/*.sql
as such a role gets them (NULL state for another role's session, NULL phase for another
role's vacuum)."""

from __future__ import annotations

import pytest

from dbgauge.collectors.postgres_database import parse_activity, parse_connections
from dbgauge.collectors.postgres_locks import parse_summary
from dbgauge.collectors.postgres_vacuum_progress import parse_progress
from dbgauge.toolkit.db.privileges import pg_cannot_see, pg_denied_hint, pg_grant
from dbgauge.toolkit.errors import NotVisible

LIMITS = {"max_connections": 100, "reserved_connections": 3, "role": "watcher"}
GRANT = 'GRANT pg_monitor TO "watcher" (or at least pg_read_all_stats)'


def test_the_grant_line() -> None:
    assert pg_grant("watcher") == 'GRANT pg_monitor TO "watcher"'
    assert pg_grant("") == "GRANT pg_monitor TO ..."
    assert pg_grant("we'ird") == "GRANT pg_monitor TO ..."  # never formats odd names
    assert pg_cannot_see("x", "watcher") == f"the role watcher cannot see x: {GRANT}"
    denied = "permission denied for function pg_ls_waldir"
    assert pg_denied_hint("42501", denied, "watcher") == '; GRANT pg_monitor TO "watcher"'
    assert pg_denied_hint("42501", "permission denied for table orders", "watcher") == ""
    assert pg_denied_hint("42P01", denied, "watcher") == ""
    # PostgreSQL 13's wording (captured from 13.23 as a role without pg_read_all_settings:
    # SELECT current_setting('shared_preload_libraries'))
    old = ('must be superuser or a member of pg_read_all_settings to examine '
           '"shared_preload_libraries"')
    assert pg_denied_hint("42501", old, "watcher") == '; GRANT pg_monitor TO "watcher"'
    # and 18's (18.4, the same statement)
    new = 'permission denied to examine "shared_preload_libraries"'
    assert pg_denied_hint("42501", new, "watcher") == '; GRANT pg_monitor TO "watcher"'


def test_sessions_the_role_cannot_see_are_no_connection_count() -> None:
    rows = [{**LIMITS, "state": "active", "connections": 1},
            {**LIMITS, "state": None, "connections": 7}]
    connections = parse_connections(rows, rows[0])
    assert connections.hidden == 7.0 and connections.used == 1.0
    assert connections.unseen == ("the role watcher cannot see 7 other session(s) "
                                  f"(pg_stat_activity): {GRANT}")
    activity, conns = parse_activity([
        {**LIMITS, "datname": "app", "state": "active", "client": True, "backends": 1},
        {**LIMITS, "datname": "app", "state": None, "client": None, "backends": 2},
        {**LIMITS, "datname": None, "state": None, "client": None, "backends": 5}])
    assert [a.state for a in activity] == ["active"] and conns.hidden == 7.0


def test_a_lock_summary_with_unseen_sessions_is_not_a_fact() -> None:
    summary = parse_summary({"role": "watcher", "hidden_sessions": 3, "waiting_backends": 0})
    with pytest.raises(NotVisible, match="cannot see 3 other session"):
        summary.seen()
    assert parse_summary({"role": "watcher", "hidden_sessions": 0}).seen().unseen == ""


def test_another_roles_vacuum_is_counted_apart() -> None:
    facts = parse_progress([
        {"datname": "app", "relname": "t", "phase": "scanning heap", "role": "watcher"},
        {"datname": "app", "relname": None, "phase": None, "role": "watcher"}])
    assert len(facts.vacuums) == 1 and facts.hidden == 1
    assert "cannot see 1 running vacuum(s)" in facts.unseen
    assert parse_progress([]).unseen == ""
