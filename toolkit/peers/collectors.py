"""The peer exporters' collector switches, mapped to dbgauge's collectors.

mysqld_exporter turns its scrapers on and off with `--collect.NAME` / `--no-collect.NAME`,
postgres_exporter its collectors with `--collector.NAME` / `--no-collector.NAME`; both have
a few value flags under the same prefix (`--collect.heartbeat.table=...`). A unit file that
moves over keeps them: each peer collector is mapped to the dbgauge collectors whose data
it gives (or to none), in the tables below, which docs/compat.md shows.

What a switch does on the targets the peer's spellings make:

- `--no-...NAME` turns a dbgauge collector off only when every peer collector mapped to it
  is switched off (dbgauge's `mysql_innodb` also gives what `--collect.engine_innodb_status`
  does: `--no-collect.global_status` alone leaves it on). A peer collector mapped to none is
  simply not collected: nothing to turn off.
- `--...NAME` keeps its dbgauge collectors on, and turns on those that are opt-in in
  dbgauge too (the peer's own opt-in ones: `--collect.perf_schema.eventswaits` runs
  `mysql_perf_schema_waits`); a peer collector dbgauge has no equivalent of is accepted
  with a warning, so the unit file still starts, and the warning says the data is not
  there.
- A name the peer does not have is an error, as it is for the peer.

Value flags with an equivalent are mapped (the statement digests' top-N limit, the
heartbeat table), and so are switches (`--collect.mysql.user.privileges` sets
mysql_accounts' `privileges` to 1); the others are accepted with a warning that they change
nothing.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.redact import redact_dsn


@dataclass(frozen=True)
class PeerCollectors:
    """One peer's collector switches: the flag prefix, its collectors mapped to dbgauge's,
    its value and switch sub-options, and the sub-options dbgauge has an equivalent of
    (peer option -> (dbgauge collector, option))."""

    peer: str
    prefix: str  # "collect" (--collect.NAME) or "collector" (--collector.NAME)
    kind: str
    collectors: Mapping[str, tuple[str, ...]]
    values: frozenset[str] = frozenset()
    switches: frozenset[str] = frozenset()
    mapped: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def flag(self, name: str) -> str:
        return f"--{self.prefix}.{name}"


MYSQLD_EXPORTER = PeerCollectors(
    peer="mysqld_exporter", prefix="collect", kind="mysql",
    collectors={
        "global_status": ("mysql_global_status", "mysql_status", "mysql_innodb"),
        "global_variables": ("mysql_global_variables",),
        "slave_status": ("mysql_replication",),
        "slave_hosts": ("mysql_replication",),
        "info_schema.processlist": ("mysql_processlist",),
        "info_schema.tables": ("mysql_tables",),
        "info_schema.innodb_metrics": ("mysql_innodb",),
        "engine_innodb_status": ("mysql_innodb", "mysql_engine_innodb_status"),
        "info_schema.query_response_time": ("mariadb_query_response_time",),
        "info_schema.innodb_cmp": ("mysql_innodb_cmp",),
        "info_schema.innodb_cmpmem": ("mysql_innodb_cmpmem",),
        "binlog_size": ("mysql_binlog",),
        "heartbeat": ("mysql_heartbeat",),
        "perf_schema.eventsstatements": ("mysql_statements",),
        "perf_schema.eventswaits": ("mysql_perf_schema_waits",),
        "perf_schema.file_events": ("mysql_perf_schema_file_events",),
        "perf_schema.file_instances": ("mysql_perf_schema_file_instances",),
        "perf_schema.indexiowaits": ("mysql_perf_schema_index_io_waits",),
        "perf_schema.tablelocks": ("mysql_perf_schema_table_lock_waits",),
        "perf_schema.tableiowaits": ("mysql_tables",),
        "perf_schema.replication_group_members": ("mysql_group_replication",),
        "perf_schema.replication_group_member_stats": ("mysql_group_replication",),
        "auto_increment.columns": ("mysql_auto_increment",),
        "info_schema.userstats": ("mysql_user_statistics",),
        "info_schema.clientstats": ("mysql_user_statistics",),
        "info_schema.tablestats": ("mysql_user_statistics",),
        "info_schema.schemastats": ("mysql_user_statistics",),
        "mysql.user": ("mysql_accounts",),
        "info_schema.innodb_tablespaces": ("mysql_innodb_tablespaces",),
        "perf_schema.eventsstatementssum": ("mysql_statement_totals",),
        "perf_schema.memory_events": ("mysql_perf_schema_memory",),
        "sys.user_summary": ("mysql_sys_user_summary",),
        **{name: () for name in (
            "engine_tokudb_status", "info_schema.replica_host", "info_schema.rocksdb_perf_context",
            "perf_schema.replication_applier_status_by_worker")},
    },
    values=frozenset({
        "heartbeat.database", "heartbeat.table", "info_schema.processlist.min_time",
        "info_schema.tables.databases", "perf_schema.eventsstatements.limit",
        "perf_schema.eventsstatements.timelimit",
        "perf_schema.eventsstatements.digest_text_limit",
        "perf_schema.eventsstatements.exclude_schemas", "perf_schema.file_instances.filter",
        "perf_schema.file_instances.remove_prefix", "perf_schema.memory_events.remove_prefix"}),
    switches=frozenset({"heartbeat.utc", "info_schema.processlist.processes_by_user",
                        "info_schema.processlist.processes_by_host", "mysql.user.privileges"}),
    mapped={"perf_schema.eventsstatements.limit": ("mysql_statements", "limit"),
            "mysql.user.privileges": ("mysql_accounts", "privileges")},
)

POSTGRES_EXPORTER = PeerCollectors(
    peer="postgres_exporter", prefix="collector", kind="postgres",
    collectors={
        "database": ("postgres_server",),
        "database_wraparound": ("postgres_server",),
        "postmaster": ("postgres_server",),
        "locks": ("postgres_locks",),
        "long_running_transactions": ("postgres_activity",),
        "stat_activity_autovacuum": ("postgres_activity",),
        "process_idle": ("postgres_activity",),
        "buffercache_summary": ("postgres_buffercache",),
        "replication": ("postgres_replication",),
        "replication_slots": ("postgres_replication",),
        "stat_replication": ("postgres_replication",),
        "stat_wal_receiver": ("postgres_wal_receiver",),
        "settings": ("postgres_settings",),
        "stat_activity": ("postgres_database",),
        "stat_database": ("postgres_database",),
        "stat_archiver": ("postgres_checkpoints",),
        "stat_bgwriter": ("postgres_checkpoints",),
        "bgwriter": ("postgres_checkpoints",),  # 0.11's name of stat_bgwriter
        "stat_checkpointer": ("postgres_checkpoints",),
        "wal": ("postgres_checkpoints",),
        "stat_statements": ("postgres_statements",),
        "stat_user_tables": ("postgres_tables",),
        "statio_user_tables": ("postgres_tables",),
        "statio_user_indexes": ("postgres_indexes",),
        "roles": ("postgres_server",),
        "stat_progress_vacuum": ("postgres_vacuum_progress",),
        "xlog_location": (),
    },
    values=frozenset({"stat_statements.query_length", "stat_statements.limit",
                      "stat_statements.exclude_databases", "stat_statements.exclude_users"}),
    switches=frozenset({"stat_statements.include_query"}),
    mapped={"stat_statements.limit": ("postgres_statements", "limit")},
)

PEERS = (MYSQLD_EXPORTER, POSTGRES_EXPORTER)


@dataclass(frozen=True)
class Switches:
    """What a command line switched for one peer: each collector's or switch's last state
    (`--x` true, `--no-x` false, as the peer reads them) and each value flag's last value."""

    table: PeerCollectors
    states: Mapping[str, bool] = field(default_factory=dict)
    values: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.states or self.values)

    def on(self, name: str) -> bool:
        return self.states.get(name, False)

    def warnings(self) -> list[str]:
        """What the switches ask for that dbgauge cannot give (logged when serve starts)."""
        t = self.table
        out = [f"{t.flag(name)}: dbgauge has no equivalent of {t.peer}'s {name} collector; "
               "its series will be missing (docs/compat.md lists what each maps to)"
               for name, state in self.states.items()
               if state and name in t.collectors and not t.collectors[name]]
        given = [*self.values, *(n for n in self.states if n in t.switches)]
        out += [f"{t.flag(name)} changes nothing in dbgauge (docs/compat.md)"
                for name in given if name not in t.mapped and not name.startswith("heartbeat.")]
        if self.on("heartbeat") and not self.on("heartbeat.utc"):
            out.append(f"{t.flag('heartbeat')}: dbgauge reads the heartbeat's timestamps as "
                       "UTC, as with --collect.heartbeat.utc: run pt-heartbeat with --utc")
        return out

    def collectors(self, defaults: Sequence[str]) -> list[str] | None:
        """The dbgauge collectors to run (`defaults`: the kind's): those a peer collector
        maps to are dropped when every peer collector mapping to them was switched off,
        and an opt-in one (not in `defaults`, as the peer's own `--collect.perf_schema.*`)
        is added when a peer collector mapping to it is switched on. None: nothing
        changed, the defaults hold."""
        off = {name for name, state in self.states.items() if not state}
        sources: dict[str, list[str]] = {}
        for peer_name, ours in self.table.collectors.items():
            for name in ours:
                sources.setdefault(name, []).append(peer_name)
        dropped = {name for name, peers in sources.items() if all(p in off for p in peers)}
        added = [name for peer_name, state in self.states.items() if state
                 for name in self.table.collectors.get(peer_name, ()) if name not in defaults]
        if not dropped & set(defaults) and not added:
            return None
        return [*(name for name in defaults if name not in dropped), *dict.fromkeys(added)]

    def options(self) -> dict[str, dict[str, object]]:
        """collector_options from the value flags and switches dbgauge has an equivalent
        of (a switch sets its option to 1, or 0 when switched off)."""
        out: dict[str, dict[str, object]] = {}
        for name, state in self.states.items():
            if name in self.table.switches and name in self.table.mapped:
                collector, option = self.table.mapped[name]
                out.setdefault(collector, {})[option] = 1 if state else 0
        for name, value in self.values.items():
            if name in self.table.mapped:
                collector, option = self.table.mapped[name]
                if not value.isdigit() or len(value) > 9:
                    raise ConfigError(f"{self.table.flag(name)}={value[:20]!r}: not a whole "
                                      "number")
                out.setdefault(collector, {})[option] = int(value)
        return out

    def heartbeat(self) -> dict[str, object] | None:
        """mysqld_exporter's --collect.heartbeat: read lag from its table
        (--collect.heartbeat.database.table, heartbeat.heartbeat by default)."""
        if not self.on("heartbeat"):
            return None
        table = (f"{self.values.get('heartbeat.database', 'heartbeat')}."
                 f"{self.values.get('heartbeat.table', 'heartbeat')}")
        return {"mode": "read", "table": table}


def parse_switches(args: Sequence[str]) -> dict[str, Switches]:
    """The peers' collector flags among `args` (the command line's leftovers), by peer;
    ConfigError for anything else, as a command line's unknown option."""
    states: dict[str, dict[str, bool]] = {t.peer: {} for t in PEERS}
    values: dict[str, dict[str, str]] = {t.peer: {} for t in PEERS}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        flag, eq, value = arg.partition("=")
        negated = flag.startswith("--no-")
        table, name = _which(("--" + flag[5:]) if negated else flag, arg)
        if name in table.values:
            if negated:
                raise ConfigError(f"{flag} takes no --no- form: {table.flag(name)}=VALUE")
            if not eq:
                if not rest:
                    raise ConfigError(f"{flag} needs a value")
                value = rest.pop(0)
            values[table.peer][name] = value
        elif eq:
            if value.lower() not in ("true", "false"):
                raise ConfigError(f"{flag}={value[:20]!r}: a switch is true or false")
            states[table.peer][name] = (value.lower() == "true") != negated
        else:
            states[table.peer][name] = not negated
    return {t.peer: Switches(t, states[t.peer], values[t.peer]) for t in PEERS}


def _which(flag: str, arg: str) -> tuple[PeerCollectors, str]:
    """The peer table a `--collect.NAME` / `--collector.NAME` flag belongs to, and NAME."""
    for table in PEERS:
        prefix = f"--{table.prefix}."
        if flag.startswith(prefix):
            name = flag[len(prefix):]
            known = [*table.collectors, *table.values, *table.switches]
            if name in known:
                return table, name
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {table.flag(close[0])}?)" if close else ""
            raise ConfigError(f"{flag}: {table.peer} has no such collector or option{hint}")
    shown = redact_dsn(arg, 60)  # masked, then shortened
    raise ConfigError(f"no such option: {shown!r} (peer collector flags are "
                      "--[no-]collect.NAME and --[no-]collector.NAME)")


def switch_table() -> str:
    """docs/compat.md's table of the switches: each peer collector, the dbgauge collectors
    it maps to (a unit test keeps the page equal to this)."""
    lines = ["| peer flag | dbgauge collectors giving its data |", "|---|---|"]
    for table in PEERS:
        for name, ours in sorted(table.collectors.items()):
            mapped = ", ".join(f"`{o}`" for o in ours) or "none: `--...` warns, `--no-...` is fine"
            lines.append(f"| `{table.flag(name)}` | {mapped} |")
        for name, (collector, option) in sorted(table.mapped.items()):
            value = "" if name in table.switches else "=N"
            lines.append(f"| `{table.flag(name)}{value}` | `{collector}` option `{option}`"
                         f"{' 1' if not value else ''} |")
    return "\n".join(lines)
