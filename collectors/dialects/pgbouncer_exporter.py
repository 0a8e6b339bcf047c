"""pgbouncer_exporter's names: upstream prometheus-community/pgbouncer_exporter (Go) and
Debian's prometheus-pgbouncer-exporter 1.7 (Python), from dbgauge's facts.

Upstream (collector.go, 0.12) runs SHOW VERSION, LISTS, CONFIG, CLIENTS, DATABASES,
STATS_TOTALS and POOLS on every scrape; its names, labels, types and unit conversions
(microseconds -> seconds, maxwait in whole seconds) are kept exactly. Its counters of
SHOW STATS_TOTALS are `pgbouncer_stats_totals_*` since 0.11 and were `pgbouncer_stats_*`
(from SHOW STATS) up to 0.10, the names GitLab's dashboards and the mixins query: both are
spoken. Debian's exporter names a few families its own way (`pgbouncer_active_clients`,
`pgbouncer_pool_size`, `pgbouncer_dns_*`): those are spoken too. Its SHOW STATS families
are not: it reads a column PgBouncer dropped in 1.8 and dies at start-up (docs/compat.md).
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors.pgbouncer_clients import ClientsFacts
from dbgauge.collectors.pgbouncer_config import ConfigFacts
from dbgauge.collectors.pgbouncer_databases import DatabasesFacts
from dbgauge.collectors.pgbouncer_lists import ListsFacts
from dbgauge.collectors.pgbouncer_pools import CLIENT_STATES, SERVER_STATES, PoolsFacts
from dbgauge.collectors.pgbouncer_stats import StatsFacts
from dbgauge.toolkit.dialect import Dialect, PeerFamilies, PeerFamily, PeerSpec
from dbgauge.toolkit.metrics import Sample

P = "pgbouncer_"
UP = PeerSpec(P + "up", "gauge", "The pgbouncer scrape succeeded")
VERSION = PeerSpec(P + "version_info", "gauge", "The pgbouncer version info", ("version",))
CLIENTS = PeerSpec(P + "client_connections", "gauge",
                   "Number of client connections grouped by database, user, application "
                   "name, and state", ("database", "user", "application_name", "state"))

# SHOW LISTS: list -> (upstream's name, help); Debian names every list pgbouncer_<list>.
LISTS = {
    "databases": ("databases", "Count of databases"),
    "users": ("users", "Count of users"),
    "pools": ("pools", "Count of pools"),
    "free_clients": ("free_clients", "Count of free clients"),
    "used_clients": ("used_clients", "Count of used clients"),
    "login_clients": ("login_clients", "Count of clients in login state"),
    "free_servers": ("free_servers", "Count of free servers"),
    "used_servers": ("used_servers", "Count of used servers"),
    "dns_names": ("cached_dns_names", "Count of DNS names in the cache"),
    "dns_zones": ("cached_dns_zones", "Count of DNS zones in the cache"),
    "dns_queries": ("in_flight_dns_queries", "Count of in-flight DNS queries"),
}
DEBIAN_LISTS = {"dns_names": "", "dns_zones": "", "dns_queries": "", "dns_pending": ""}

# SHOW CONFIG key -> (ConfigFacts field, family, help)
CONFIG = {
    "max_client_conn": ("max_client_connections",
                        "Config maximum number of client connections"),
    "max_user_connections": ("max_user_connections",
                             "Config maximum number of server connections per user"),
}

# SHOW POOLS column -> (family, help); labels database, user
_POOL = ("database", "user")
POOLS = {
    "cl_active": ("client_active_connections", "Client connections linked to server "
                  "connection and able to process queries, shown as connection"),
    "cl_active_cancel_req": ("client_active_cancel_connections", "Client connections that "
                             "have forwarded query cancellations to the server and are "
                             "waiting for the server response"),
    "cl_waiting": ("client_waiting_connections", "Client connections waiting on a server "
                   "connection, shown as connection"),
    "cl_waiting_cancel_req": ("client_waiting_cancel_connections", "Client connections that "
                              "have not forwarded query cancellations to the server yet"),
    "sv_active": ("server_active_connections", "Server connections linked to a client "
                  "connection, shown as connection"),
    "sv_active_cancel": ("server_active_cancel_connections", "Server connections that are "
                         "currently forwarding a cancel request."),
    "sv_being_canceled": ("server_being_canceled_connections", "Servers that normally could "
                          "become idle but are waiting to do so until all in-flight cancel "
                          "requests have completed that were sent to cancel a query on this "
                          "server."),
    "sv_idle": ("server_idle_connections", "Server connections idle and ready for a client "
                "query, shown as connection"),
    "sv_used": ("server_used_connections", "Server connections idle more than "
                "server_check_delay, needing server_check_query, shown as connection"),
    "sv_tested": ("server_testing_connections", "Server connections currently running "
                  "either server_reset_query or server_check_query, shown as connection"),
    "sv_login": ("server_login_connections", "Server connections currently in the process "
                 "of logging in, shown as connection"),
}
MAXWAIT = PeerSpec(P + "pools_client_maxwait_seconds", "gauge",
                   "Age of oldest unserved client connection, shown as second", _POOL)
DEBIAN_POOLS = {"cl_active": ("active_clients", "Client connections that are linked to "
                              "server connection and can process queries (cl_active)"),
                "cl_waiting": ("waiting_clients", "Client connections have sent queries but "
                               "have not yet got a server connection (cl_waiting)")}
_STATE_OF = {**{c: ("client", s) for c, s in CLIENT_STATES.items()},
             **{c: ("server", s) for c, s in SERVER_STATES.items()}}

# SHOW DATABASES: PgBouncerDatabase field -> (family, help); labels as upstream has them
_ENTRY = ("name", "host", "port", "database", "force_user", "pool_mode")
DATABASES = {
    "pool_size": ("pool_size", "Maximum number of server connections"),
    "reserve_pool_size": ("reserve_pool", "Maximum number of additional connections for "
                          "this database"),
    "max_connections": ("max_connections", "Maximum number of allowed connections for this "
                        "database"),
    "current_connections": ("current_connections", "Current number of connections for this "
                            "database"),
    "paused": ("paused", "1 if this database is currently paused, else 0"),
    "disabled": ("disabled", "1 if this database is currently disabled, else 0"),
}
DEBIAN_DATABASES = {"pool_size": "pool_size", "reserve_pool_size": "reserve_pool"}

# Normalised SHOW STATS(_TOTALS) counter -> (family, help); seconds from microseconds
# where the family says so. The first seven are also upstream 0.4-0.10's pgbouncer_stats_*.
STATS = {
    "xact_count": ("sql_transactions_pooled_total", "Total number of SQL transactions pooled"),
    "query_count": ("queries_pooled_total", "Total number of SQL queries pooled"),
    "bytes_received": ("received_bytes_total", "Total volume in bytes of network traffic "
                       "received by pgbouncer, shown as bytes"),
    "bytes_sent": ("sent_bytes_total", "Total volume in bytes of network traffic sent by "
                   "pgbouncer, shown as bytes"),
    "xact_time": ("server_in_transaction_seconds_total", "Total number of seconds spent by "
                  "pgbouncer when connected to PostgreSQL in a transaction, either idle in "
                  "transaction or executing queries"),
    "query_time": ("queries_duration_seconds_total", "Total number of seconds spent by "
                   "pgbouncer when actively connected to PostgreSQL, executing queries"),
    "wait_time": ("client_wait_seconds_total", "Time spent by clients waiting for a server "
                  "in seconds"),
    "server_assignment_count": ("server_assignments_total", "Total number of client "
                                "connections which have been served since process start"),
    "client_parse_count": ("client_parses_total", "Total number of prepared statement Parse "
                           "messages received from clients"),
    "server_parse_count": ("server_parses_total", "Total number of prepared statement Parse "
                           "messages sent by pgbouncer to PostgreSQL"),
    "bind_count": ("binds_total", "Total number of prepared statements readied for execution "
                   "with a Bind message"),
}
OLD_STATS = tuple(STATS)[:7]
_MICROSECONDS = frozenset({"xact_time", "query_time", "wait_time"})


def _families() -> Iterator[PeerFamily]:
    yield PeerFamily(UP, "dbgauge_up", "1 when dbgauge reached PgBouncer in this scrape; the "
                     "peer's is 0 when any of its queries failed (dbgauge_collector_success "
                     "says which)")
    yield PeerFamily(VERSION, "dbgauge_target_info")
    for key, (name, help_) in LISTS.items():
        yield PeerFamily(PeerSpec(P + name, "gauge", help_),
                         f'dbgauge_pgbouncer_list_items{{list="{key}"}}')
    for key in DEBIAN_LISTS:
        yield PeerFamily(PeerSpec(P + key, "gauge", f" ({key})"),  # Debian's 1.7
                         f'dbgauge_pgbouncer_list_items{{list="{key}"}}')
    for name, help_ in CONFIG.values():
        yield PeerFamily(PeerSpec(P + "config_" + name, "gauge", help_),
                         "dbgauge_pgbouncer_config_" + name)
    yield PeerFamily(CLIENTS, "dbgauge_pgbouncer_client_connections")
    for column, (name, help_) in POOLS.items():
        side, state = _STATE_OF[column]
        yield PeerFamily(PeerSpec(P + "pools_" + name, "gauge", help_, _POOL),
                         f'dbgauge_pgbouncer_pool_{side}_connections{{state="{state}"}}')
    yield PeerFamily(MAXWAIT, "dbgauge_pgbouncer_pool_client_maxwait_seconds")
    for column, (name, help_) in DEBIAN_POOLS.items():
        side, state = _STATE_OF[column]
        yield PeerFamily(PeerSpec(P + name, "gauge", help_, _POOL),  # Debian's 1.7
                         f'dbgauge_pgbouncer_pool_{side}_connections{{state="{state}"}}')
    for field, (name, help_) in DATABASES.items():
        yield PeerFamily(PeerSpec(P + "databases_" + name, "gauge", help_, _ENTRY),
                         "dbgauge_pgbouncer_database_" + field)
    for field, name in DEBIAN_DATABASES.items():
        yield PeerFamily(PeerSpec(P + name, "gauge", f" ({name})", ("database",)),
                         "dbgauge_pgbouncer_database_" + field,
                         "Debian's 1.7 labels it with the backend database only, so two "
                         "entries for one database repeat a series there: dbgauge writes the "
                         "first, the one Prometheus keeps")
    for column, (name, help_) in STATS.items():
        ours = "dbgauge_pgbouncer_stats_" + _OURS_STATS.get(column, name)
        yield PeerFamily(PeerSpec(P + "stats_totals_" + name, "counter", help_, ("database",)),
                         ours)  # upstream 0.11+
        if column in OLD_STATS:  # upstream 0.4-0.10
            yield PeerFamily(PeerSpec(P + "stats_" + name, "counter", help_, ("database",)),
                             ours)


# dbgauge's own names of the stats counters, where they differ from the peer's
_OURS_STATS = {"xact_count": "transactions_total", "query_count": "queries_total",
               "xact_time": "transaction_seconds_total", "query_time": "query_seconds_total"}

FAMILIES = PeerFamilies(*_families())


def _lists(facts: ListsFacts) -> Iterator[Sample]:
    if facts.version:
        yield FAMILIES.sample(VERSION.name, 1.0, {"version": facts.version})
    for key, value in facts.items.items():
        if key in LISTS:
            yield FAMILIES.sample(P + LISTS[key][0], value)
        if key in DEBIAN_LISTS:
            yield FAMILIES.sample(P + key, value)


def _config(facts: ConfigFacts) -> Iterator[Sample]:
    for key, (name, _) in CONFIG.items():
        value = getattr(facts, key)
        if value is not None:
            yield FAMILIES.sample(P + "config_" + name, value)


def _clients(facts: ClientsFacts) -> Iterator[Sample]:
    for g in facts.groups:
        yield FAMILIES.sample(CLIENTS.name, float(g.count), {
            "database": g.database, "user": g.user, "application_name": g.application_name,
            "state": g.state})


def _pools(facts: PoolsFacts) -> Iterator[Sample]:
    for pool in facts.pools:
        labels = {"database": pool.database, "user": pool.user}
        for column, (side, state) in _STATE_OF.items():
            value = (pool.clients if side == "client" else pool.servers).get(state)
            if value is None:
                continue
            yield FAMILIES.sample(P + "pools_" + POOLS[column][0], value, labels)
            if column in DEBIAN_POOLS:
                yield FAMILIES.sample(P + DEBIAN_POOLS[column][0], value, labels)
        if pool.maxwait is not None:
            yield FAMILIES.sample(MAXWAIT.name, pool.maxwait, labels)


def _databases(facts: DatabasesFacts) -> Iterator[Sample]:
    debian_seen: set[str] = set()
    for db in facts.databases:
        labels = {"name": db.name, "host": db.host, "port": db.port,
                  "database": db.backend_database, "force_user": db.force_user,
                  "pool_mode": db.pool_mode}
        first = db.backend_database not in debian_seen
        debian_seen.add(db.backend_database)
        for field, (name, _) in DATABASES.items():
            value = getattr(db, field)
            if value is None:
                continue
            yield FAMILIES.sample(P + "databases_" + name, value, labels)
            if first and field in DEBIAN_DATABASES:
                yield FAMILIES.sample(P + DEBIAN_DATABASES[field], value,
                                      {"database": db.backend_database})


def _stats(facts: StatsFacts) -> Iterator[Sample]:
    for db in facts.databases:
        labels = {"database": db.database}
        for column, value in db.counters.items():
            if column not in STATS:
                continue
            scaled = value * 1e-6 if column in _MICROSECONDS else value
            name = STATS[column][0]
            yield FAMILIES.sample(P + "stats_totals_" + name, scaled, labels)
            if column in OLD_STATS:
                yield FAMILIES.sample(P + "stats_" + name, scaled, labels)


DIALECT = Dialect(
    name="pgbouncer_exporter", kind="pgbouncer",
    help="pgbouncer_exporter's pgbouncer_* names, labels and values (upstream and Debian's)",
    up=UP, families=FAMILIES,
    translate={"pgbouncer_lists": _lists, "pgbouncer_config": _config,
               "pgbouncer_clients": _clients, "pgbouncer_pools": _pools,
               "pgbouncer_databases": _databases, "pgbouncer_stats": _stats},
    collectors=("pgbouncer_lists", "pgbouncer_config", "pgbouncer_clients",
                "pgbouncer_pools", "pgbouncer_databases", "pgbouncer_stats"),
)
