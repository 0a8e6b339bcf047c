"""What the sandbox creates inside its PostgreSQL instances: roles, databases, the drift
publication and subscription.

Each step runs once per instance (a mark file in its home records it), over the
superuser's unix-socket connection, which needs no password (trust). Passwords go into
CREATE/ALTER ROLE and the subscription's conninfo as values bound on the client: utility
statements take no server-side parameters.
"""

from __future__ import annotations

import contextlib
from urllib.parse import quote, urlencode

from dbgauge.toolkit.db import Connection, connect_dsn
from dbgauge.toolkit.sandbox.core import Sandbox, run_sql
from dbgauge.toolkit.sandbox.model import (
    ADMIN_USER,
    APP_DATABASE,
    DRIFT_DATABASE,
    MONITOR_USER,
    PUBLICATION,
    REPL_USER,
    STANDBY_SLOT,
    SUBSCRIPTION,
)
from dbgauge.toolkit.sandbox.process import START_TIMEOUT

PRIMARY, STANDBY, SUBSCRIBER = "pg-primary", "pg-standby", "pg-subscriber"
MONITOR_SCHEMA = "dbgauge"
EXTENSIONS = ("pgtap", "pg_stat_statements")


def local_conn(sb: Sandbox, name: str, dbname: str = "postgres") -> Connection:
    """Superuser connection over the unix socket (trust), needing no password."""
    where = urlencode({"host": str(sb.layout.home(name))})
    return connect_dsn(
        f"postgresql://postgres@localhost:{sb.port(name)}/{quote(dbname, safe='')}?{where}",
        kind="postgres",
        connect_timeout=5,
        query_timeout=START_TIMEOUT,
        lock_timeout=START_TIMEOUT,
        client_binding=True,
        application_name="dbgauge-sandbox",
    )


def create_roles(sb: Sandbox, conn: Connection, subscriber: bool = False) -> None:
    """The sandbox's roles, with their passwords (the replication role on pg-primary)."""
    roles = [
        ("postgres", sb.pw["pg-postgres"], "sandbox_role_superuser"),
        (ADMIN_USER, sb.pw["pg-admin"], "sandbox_role_superuser"),
        (MONITOR_USER, sb.pw["dbgauge"], "sandbox_role_login"),
    ]
    if not subscriber:
        roles.insert(2, (REPL_USER, sb.pw["pg-repl"], "sandbox_role_replication"))
    for role, password, attributes in roles:
        if not run_sql(conn, "sandbox_role_exists", (role,)):
            run_sql(conn, "sandbox_create_role", role=role)
        run_sql(conn, attributes, (password,), role=role)
    run_sql(conn, "sandbox_grant_pg_monitor", role=MONITOR_USER)


def create_database(conn: Connection, name: str) -> None:
    """Create database `name` owned by the admin account; dbgauge may connect."""
    if not run_sql(conn, "sandbox_database_exists", (name,)):
        run_sql(conn, "sandbox_create_database", database=name, owner=ADMIN_USER)
    run_sql(conn, "sandbox_grant_connect", database=name, role=MONITOR_USER)


def setup_primary(sb: Sandbox) -> None:
    """Roles, the `app` database with pgTAP and dbgauge's schema, pg-standby's slot."""
    mark = sb.layout.setup_mark(PRIMARY)
    if mark.exists():
        return
    with contextlib.closing(local_conn(sb, PRIMARY)) as conn:
        create_roles(sb, conn)
        create_database(conn, APP_DATABASE)
        if not run_sql(conn, "sandbox_replication_slot", (STANDBY_SLOT,)):
            run_sql(conn, "sandbox_create_slot", (STANDBY_SLOT,))
    with contextlib.closing(local_conn(sb, PRIMARY, APP_DATABASE)) as conn:
        for extension in EXTENSIONS:
            run_sql(conn, "sandbox_create_extension", extension=extension)
        run_sql(conn, "sandbox_create_schema", schema=MONITOR_SCHEMA, owner=MONITOR_USER)
    mark.write_text("")


def setup_publication(sb: Sandbox) -> None:
    """The `drift` database on pg-primary and its publication FOR ALL TABLES."""
    mark = sb.layout.home(PRIMARY) / "publication.done"
    if mark.exists():
        return
    with contextlib.closing(local_conn(sb, PRIMARY)) as conn:
        create_database(conn, DRIFT_DATABASE)
    with contextlib.closing(local_conn(sb, PRIMARY, DRIFT_DATABASE)) as conn:
        if not run_sql(conn, "sandbox_publication_exists", (PUBLICATION,)):
            run_sql(conn, "sandbox_create_publication", publication=PUBLICATION)
    mark.write_text("")


def setup_subscriber(sb: Sandbox) -> None:
    """Roles, databases and the subscription to pg-primary's `drift` publication.

    Logical replication copies rows, not DDL: a test creates a table on both sides, then
    runs ALTER SUBSCRIPTION drift_sub REFRESH PUBLICATION on the subscriber.
    """
    mark = sb.layout.setup_mark(SUBSCRIBER)
    if mark.exists():
        return
    with contextlib.closing(local_conn(sb, SUBSCRIBER)) as conn:
        create_roles(sb, conn, subscriber=True)
        for database in (APP_DATABASE, DRIFT_DATABASE):
            create_database(conn, database)
    conninfo = (
        f"host=127.0.0.1 port={sb.port(PRIMARY)} dbname={DRIFT_DATABASE} "
        f"user={ADMIN_USER} password={sb.pw['pg-admin']} application_name={SUBSCRIPTION}"
    )
    with contextlib.closing(local_conn(sb, SUBSCRIBER, DRIFT_DATABASE)) as conn:
        if not run_sql(conn, "sandbox_subscription_exists", (SUBSCRIPTION,)):
            run_sql(conn, "sandbox_create_subscription", (conninfo,),
                    subscription=SUBSCRIPTION, publication=PUBLICATION)
    mark.write_text("")
