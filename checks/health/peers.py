"""check_postgres' actions (2.25.0, all 60) and what dbgauge offers for each: the
table in docs/checks.md is made from this and the check registry (`docs`), and a unit
test holds every named check to the registry and every PostgreSQL/PgBouncer check to a
row here (or to DBGAUGE_ONLY), so neither side can drift unseen. Data only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Action:
    """One check_postgres action: the dbgauge check(s) doing its job ("" none), whether
    fully ("yes"), in part ("partly") or not ("no"), and what differs or why not."""

    action: str
    checks: tuple[str, ...]
    provided: str
    note: str = ""


def _a(action: str, checks: str, provided: str, note: str = "") -> Action:
    return Action(action, tuple(checks.split()), provided, note)


CHECK_POSTGRES: tuple[Action, ...] = (
    _a("archive_ready", "archiver", "yes", "reads pg_stat_archiver; a failing "
       "archive_command is CRITICAL (check_postgres looks in pg_xlog on PostgreSQL 10+)"),
    _a("autovac_freeze", "autovac-freeze", "yes", "same defaults 90%/95%"),
    _a("backends", "connections", "yes", "the count (`-w 200`), `80%` and `-10` (10 or "
       "fewer slots left) forms, --warning alone keeping the default critical; held against "
       "max_connections minus the reserved slots (superuser_reserved_connections, "
       "reserved_connections on 16+), which an application cannot use, not max_connections; "
       "client backends counted; alerts above a count, not at it"),
    _a("bloat", "bloat", "yes", "check_postgres' estimate and forms (`100 M`, `150%`, "
       "`'1 G and 150%'`, `or`); every relation judged (no top-10 or small-relation "
       "cut-off); a table the role may not read is UNKNOWN, not \"not bloated\""),
    _a("checkpoint", "checkpoint", "yes", "over the connection (pg_control_checkpoint), "
       "no --datadir on the server's host"),
    _a("cluster_id", "cluster-id", "yes", "the same identifier, over the connection "
       "(pg_control_system, pg_monitor) instead of pg_controldata on the server's host"),
    _a("commitratio", "commitratio", "yes", "`-w 90%` alerts below 90, as there"),
    _a("connection", "connection", "yes"),
    _a("custom_query", "custom-query", "yes", "--valtype integer/time/size are ranges of "
       "that unit, string compares as there, --reverse; alerts above a number's level "
       "(check_postgres: at it); runs read-only, on MySQL too"),
    _a("database_size", "database-size", "yes"),
    _a("dbstats", "", "no", "Cacti output: the exporter's pg_stat_database metrics"),
    _a("disabled_triggers", "disabled-triggers", "yes", "alerts above the level: "
       "check_postgres' `-w 1` is `-w 0`"),
    _a("disk_space", "", "no", "needs the server's file system: node_exporter's job"),
    _a("fsm_pages", "", "no", "obsolete: the free space map has no settings since 8.4"),
    _a("fsm_relations", "", "no", "obsolete: the free space map has no settings since 8.4"),
    _a("hitratio", "hitratio", "yes", "`-w 90%` alerts below 90, as there"),
    _a("hot_standby_delay", "lag", "yes", "0 on an idle primary (no false alarm)"),
    _a("index_size", "index-size", "yes"),
    _a("indexes_size", "indexes-size", "yes"),
    _a("last_analyze", "last-analyze", "yes", "user tables (catalogs are left out)"),
    _a("last_autoanalyze", "last-autoanalyze", "yes"),
    _a("last_autovacuum", "last-autovacuum", "yes"),
    _a("last_vacuum", "last-vacuum", "yes", "user tables (catalogs are left out)"),
    _a("listener", "", "no", "it reads pg_listener, gone since PostgreSQL 9.0, and no "
       "catalog shows another session's LISTEN channels"),
    _a("locks", "lock-count locks", "yes", "`lock-count` is check_postgres' locks: the same "
       "counts, its lock spec (`total=250;waiting=5;exclusive=2`, a bare number the total) "
       "alerting at N or more, defaults total=100/150, perfdata per database and type "
       "(`NODE:DATABASE:TYPE_locks`). `locks` is dbgauge's own: the oldest lock wait in "
       "seconds (`-w 100` there is 100 s; a lock spec is refused)"),
    _a("logfile", "", "no", "needs the server's file system and log settings"),
    _a("new_version_bc", "", "no", "obsolete: version checks against a web site"),
    _a("new_version_box", "", "no", "obsolete: version checks against a web site"),
    _a("new_version_cp", "", "no", "obsolete: version checks against a web site"),
    _a("new_version_pg", "", "no", "obsolete: version checks against a web site"),
    _a("new_version_tnm", "", "no", "obsolete: version checks against a web site"),
    _a("pgagent_jobs", "pgagent-jobs", "yes", "the same failed steps; a database without "
       "the pgagent schema, or a role that may not read it, is UNKNOWN saying so"),
    _a("pgb_pool_cl_active", "pgbouncer-pool", "yes", "`--stat cl_active`; alerts above the "
       "level (check_postgres: at it)"),
    _a("pgb_pool_cl_waiting", "pgbouncer-pool pgbouncer-pools", "yes", "`pgbouncer-pool "
       "--stat cl_waiting` counts them as there; `pgbouncer-pools` judges the longest wait"),
    _a("pgb_pool_maxwait", "pgbouncer-pools pgbouncer-pool", "yes", "`pgbouncer-pool --stat "
       "maxwait` per pool in whole seconds as there; `pgbouncer-pools` the longest, with "
       "maxwait_us"),
    _a("pgb_pool_sv_active", "pgbouncer-pool", "yes", "`--stat sv_active`; alerts above the "
       "level (check_postgres: at it)"),
    _a("pgb_pool_sv_idle", "pgbouncer-pool", "yes", "`--stat sv_idle`; alerts above the "
       "level (check_postgres: at it)"),
    _a("pgb_pool_sv_login", "pgbouncer-pool", "yes", "`--stat sv_login`; alerts above the "
       "level (check_postgres: at it)"),
    _a("pgb_pool_sv_tested", "pgbouncer-pool", "yes", "`--stat sv_tested`; alerts above the "
       "level (check_postgres: at it)"),
    _a("pgb_pool_sv_used", "pgbouncer-pool", "yes", "`--stat sv_used`; alerts above the "
       "level (check_postgres: at it)"),
    _a("pgbouncer_backends", "connections", "yes"),
    _a("pgbouncer_checksum", "pgbouncer-checksum", "yes", "the same checksum (a baseline "
       "carries over); `dbgauge validate pgbouncer` checks the settings themselves"),
    _a("prepared_txns", "prepared-txns", "yes", "same defaults 1 s / 30 s"),
    _a("query_runtime", "query-runtime", "yes", "--queryname as there, EXPLAIN ANALYZE's "
       "execution time, in a read-only transaction; alerts above the level (there: at it)"),
    _a("query_time", "query-time", "yes", "--includeuser/--excludeuser (session user) and "
       "--include/--exclude (its database), as there; count forms `+N` and "
       "`N for T` (N or more sessions in that state for T or longer; check_postgres counts "
       "them all once the oldest passes T)"),
    _a("relation_size", "relation-size", "yes"),
    _a("replicate_row", "replicate-row", "yes", "writes a token to dbgauge's own "
       "heartbeat table, never a user table (--repinfo is refused); waits for -c where "
       "check_postgres stops at -w"),
    _a("replication_slots", "replication-slots", "yes", "the same bytes per slot (every "
       "slot, active or not; a standby's from its received WAL), sizes as there, alerting "
       "above the level (check_postgres: at it); `dbgauge check replication` also names "
       "inactive slots"),
    _a("same_schema", "same-schema", "partly", "two or more databases (`--dbname a,b`, "
       "`--target`, `--node`), `--filter` as there; no `--suffix` snapshots over time; "
       "owners, permissions and column positions not compared; no superuser needed"),
    _a("sequence", "sequence", "yes", "the exact share, alerting above the level: "
       "check_postgres rounds (84.6 to 85) and alerts at the level, so its `-w 85` is "
       "`-w 84.5` here; cycling sequences left out (they wrap by design), as its "
       "--skipcycled; descending sequences measured right"),
    _a("settings_checksum", "settings-checksum", "yes", "the same checksum for the same "
       "server, role and database, so a baseline carries over (taken with check_postgres' "
       "default --timeout 30 and no PGAPPNAME/PGOPTIONS); --include/--exclude work "
       "(check_postgres 2.25 dies on them)"),
    _a("slony_status", "", "no", "obsolete: Slony is replaced by logical replication"),
    _a("table_size", "table-size", "yes"),
    _a("timesync", "time-sync", "yes", "the offset at the middle of the round trip, in "
       "fractions of a second (check_postgres: whole seconds after the answer); defaults 2 "
       "and 5 s as there; MySQL-family servers too"),
    _a("total_relation_size", "total-relation-size", "yes"),
    _a("txn_idle", "txn-idle", "yes", "--includeuser/--excludeuser (session user) and "
       "--include/--exclude (its database), as there; count forms `+N` and "
       "`N for T` (N or more sessions in that state for T or longer; check_postgres counts "
       "them all once the oldest passes T)"),
    _a("txn_time", "txn-time", "yes", "--includeuser/--excludeuser (session user) and "
       "--include/--exclude (its database), as there (PostgreSQL); count forms `+N` and "
       "`N for T` (N or more sessions in that state for T or longer; check_postgres counts "
       "them all once the oldest passes T)"),
    _a("txn_wraparound", "txn-wraparound", "yes"),
    _a("version", "version", "yes", "the given version's parts against the server's "
       "(`15` any 15.x, `15.4` exactly; check_postgres 2.25 reads 15.20 as 15.2, so its "
       "`-w 15` warns there); MySQL-family servers too"),
    _a("wal_files", "wal-files", "yes", "pg_ls_waldir (pg_monitor), no superuser"),
)

# dbgauge checks of PostgreSQL or PgBouncer with no check_postgres action
DBGAUGE_ONLY = frozenset({"uptime", "replication"})
