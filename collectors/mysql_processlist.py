"""mysql_processlist: what the server's threads are doing, counted (MySQL and MariaDB).

Threads by command and state from the processlist (information_schema.PROCESSLIST;
performance_schema.processlist on MySQL 8.0.22+, which takes no global mutex), dbgauge's
own connection left out. Both labels are bounded: commands come from the fixed list of
server commands (anything else is "other"); states are normalised to a fixed set the way
mysqld_exporter's processlist scraper does -- a known state is kept, related states map to
one (every "Waiting for ... lock" is `waiting_for_lock`), a Sleep thread without a state is
`idle`, any other running query `executing`, a binlog dump `replication_source`, and the
rest `other`. Every (command, state) pair seen is exported, plus the longest time a thread
of each command has been in its state, so "a query running for 10 minutes" needs no
per-thread series.

Threads are also counted by account user and by client host (the port removed), for the
`limit` users and hosts with the most threads each (default 1000);
`dbgauge_mysql_processlist_clients_truncated` is 1 when users or hosts were left out. The
facts keep the raw groups (user, host, command, state, threads, summed time), which the
mysqld_exporter dialect reads for its own, unnormalised, labels.

Without PROCESS the server answers with the account's own threads only: the collector then
fails naming the grant (asked of the server first, `require_process`), never counts those.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.privileges import PROCESS, query, require_process
from dbgauge.toolkit.db.values import number, text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Option, Sample

THREADS = MetricSpec(
    "dbgauge_mysql_processlist_threads", "gauge",
    "Client and replication threads by command and normalised state (processlist; "
    "dbgauge's own connection excluded; unknown states are \"other\").", ("command", "state"))
LONGEST = MetricSpec(
    "dbgauge_mysql_processlist_longest_seconds", "gauge",
    "Longest time a thread of this command has been in its current state (processlist "
    "TIME, whole seconds).", ("command",))
BY_USER = MetricSpec(
    "dbgauge_mysql_processlist_threads_by_user", "gauge",
    "Threads per account user (processlist USER; dbgauge's own connection excluded), for the "
    "top N users by threads.", ("user",))
BY_HOST = MetricSpec(
    "dbgauge_mysql_processlist_threads_by_host", "gauge",
    "Threads per client host (processlist HOST without the port; \"\" for the server's own "
    "threads), for the top N hosts by threads.", ("host",))
CLIENTS_TRUNCATED = MetricSpec(
    "dbgauge_mysql_processlist_clients_truncated", "gauge",
    "1 when more users or hosts had threads than the `limit` option (the rest left out of "
    "..._threads_by_user/_by_host), else 0.")
METRICS = MetricTable(THREADS, LONGEST, BY_USER, BY_HOST, CLIENTS_TRUNCATED)

COMMANDS = frozenset({
    "sleep", "query", "connect", "binlog_dump", "binlog_dump_gtid", "daemon", "killed",
    "execute", "prepare", "close_stmt", "fetch", "field_list", "init_db", "quit",
    "statistics", "ping", "refresh", "shutdown", "processlist", "debug", "reset_stmt",
    "set_option", "change_user", "create_db", "drop_db", "register_slave",
    "register_replica", "table_dump", "connect_out", "delayed_insert", "long_data",
    "slave_io", "slave_sql", "slave_worker", "group_replication_data_stream", "time",
    "error", "com_multi", "com_bulk_execute",
})
STATES = frozenset({
    "after_create", "altering_table", "analyzing", "checking_permissions", "checking_table",
    "cleaning_up", "closing_tables", "converting_heap_to_on_disk", "copying_to_tmp_table",
    "creating_sort_index", "creating_table", "creating_tmp_table", "deleting", "executing",
    "execution_of_init_command", "end", "freeing_items", "flushing_tables",
    "fulltext_initialization", "idle", "init", "killed", "waiting_for_lock",
    "logging_slow_query", "login", "manage_keys", "opening_tables", "optimizing",
    "preparing", "reading_from_net", "removing_duplicates", "removing_tmp_table",
    "reopen_tables", "repair_by_sorting", "repair_done", "repair_with_keycache",
    "replication_source", "replication_replica", "rolling_back",
    "searching_rows_for_update", "sending_data", "sorting_for_group", "sorting_for_order",
    "sorting_index", "sorting_result", "statistics", "updating", "waiting_for_tables",
    "waiting_for_table_flush", "waiting_on_cond", "writing_to_net", "other",
})
# Related states folded into one of STATES (keys as normalised).
STATE_ALIASES: Mapping[str, str] = {
    "user_sleep": "idle",
    "creating_index": "altering_table",
    "committing_alter_table_to_storage_engine": "altering_table",
    "discard_or_import_tablespace": "altering_table",
    "rename": "altering_table",
    "setup": "altering_table",
    "renaming_result_table": "altering_table",
    "preparing_for_alter_table": "altering_table",
    "copying_to_group_table": "copying_to_tmp_table",
    "copy_to_tmp_table": "copying_to_tmp_table",
    "converting_heap_to_myisam": "converting_heap_to_on_disk",
    "converting_heap_to_ondisk": "converting_heap_to_on_disk",
    "query_end": "end",
    "update": "updating",
    "updating_main_table": "updating",
    "updating_reference_tables": "updating",
    "system_lock": "waiting_for_lock",
    "user_lock": "waiting_for_lock",
    "table_lock": "waiting_for_lock",
    "deleting_from_main_table": "deleting",
    "deleting_from_reference_tables": "deleting",
    "sending_to_client": "writing_to_net",
    "waiting_for_handler_commit": "end",
}


def _norm(value: str) -> str:
    return "_".join(value.lower().replace("_", " ").split())


def normalise_command(command: str) -> str:
    """A processlist COMMAND as a bounded label value."""
    name = _norm(command)
    return name if name in COMMANDS else "other"


def normalise_state(command: str, state: str) -> str:
    """A processlist STATE as one of STATES."""
    cmd, name = _norm(command), _norm(state)
    if name in STATES:
        return name
    if name in STATE_ALIASES:
        return STATE_ALIASES[name]
    if name.startswith("waiting_for") and "lock" in name:
        return "waiting_for_lock"
    if cmd == "sleep" and not name:
        return "idle"
    if cmd.startswith("binlog_dump"):
        return "replication_source"
    if cmd in ("slave_io", "slave_sql", "slave_worker"):
        return "replication_replica"
    if cmd == "query":
        return "executing"
    return "other"


@dataclass(frozen=True)
class ThreadGroup:
    """One row of the summary, as the server spelled it: threads of one user, client host,
    command and state, and their summed time in that state (seconds; None for NULL)."""

    user: str
    host: str
    command: str
    state: str
    threads: float
    seconds: float | None


@dataclass(frozen=True)
class ProcesslistFacts:
    """Thread counts by (command, state) label and the longest time by command label; the
    raw groups they were made from."""

    threads: Mapping[tuple[str, str], float]
    longest: Mapping[str, float]
    groups: tuple[ThreadGroup, ...] = ()


def parse_processlist(rows: Iterable[Row]) -> ProcesslistFacts:
    """`processlist_summary` rows (user, host, command, state, threads, longest, seconds)
    -> ProcesslistFacts, groups that normalise to the same labels added up (longest: the
    maximum)."""
    threads: dict[tuple[str, str], float] = {}
    longest: dict[str, float] = {}
    groups: list[ThreadGroup] = []
    for row in rows:
        command, state = text(row.get("command")), text(row.get("state"))
        count = number(row.get("threads")) or 0.0
        key = (normalise_command(command), normalise_state(command, state))
        threads[key] = threads.get(key, 0.0) + count
        seconds = number(row.get("longest"))
        if seconds is not None:
            longest[key[0]] = max(longest.get(key[0], 0.0), seconds)
        groups.append(ThreadGroup(text(row.get("user")), text(row.get("host")), command, state,
                                  count, number(row.get("seconds"))))
    return ProcesslistFacts(threads, longest, tuple(groups))


def by_client(facts: ProcesslistFacts, field: str) -> dict[str, float]:
    """Threads per user or host (`field`) over all groups."""
    out: dict[str, float] = {}
    for group in facts.groups:
        key = getattr(group, field)
        out[key] = out.get(key, 0.0) + group.threads
    return out


def _top(counts: Mapping[str, float], limit: int) -> list[tuple[str, float]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


def processlist_samples(facts: ProcesslistFacts, limit: int = 1000) -> Iterator[Sample]:
    for (command, state), count in sorted(facts.threads.items()):
        yield Sample(THREADS.name, count, {"command": command, "state": state})
    for command, seconds in sorted(facts.longest.items()):
        yield Sample(LONGEST.name, seconds, {"command": command})
    users, hosts = by_client(facts, "user"), by_client(facts, "host")
    for user, count in _top(users, limit):
        yield Sample(BY_USER.name, count, {"user": user})
    for host, count in _top(hosts, limit):
        yield Sample(BY_HOST.name, count, {"host": host})
    truncated = len(users) > limit or len(hosts) > limit
    yield Sample(CLIENTS_TRUNCATED.name, 1.0 if truncated else 0.0)


class MySQLProcesslist(Collector[ProcesslistFacts]):
    name = "mysql_processlist"
    help = ("Threads by command and normalised state from the processlist, the longest "
            "time in a state per command, and threads per user and per client host.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    metrics = METRICS
    options = {"limit": Option(1000, "How many users and how many client hosts, the most "
                                     "threads first.", maximum=100_000)}

    def read(self, conn: Connection) -> ProcesslistFacts:
        require_process(conn, "processlist_summary")  # else: its own threads, not a count
        return parse_processlist(query(conn, "processlist_summary", PROCESS))

    def samples(self, facts: ProcesslistFacts) -> Iterable[Sample]:
        return processlist_samples(facts, int(self.setting("limit")))
