"""mysqld_exporter's optional collectors (its `--collect.*` flags) and the default
info_schema.innodb_cmp/innodb_cmpmem, from dbgauge's facts: merged into the mysqld_exporter
dialect (`FAMILIES`, `TRANSLATE`).

Each translation follows the peer's scraper (prometheus/mysqld_exporter collector/*.go,
v0.14.0 as Debian ships it): the same names, label names and values, types and value
semantics, including where the peer's own units are off (`note`). docs/compat.md lists what
is covered and where dbgauge's facts bound what the peer leaves unbounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from dbgauge.collectors._summary import PICOSECONDS, Keyed, Summary
from dbgauge.collectors.mysql_binlog import BinlogFacts
from dbgauge.collectors.mysql_engine_innodb_status import EngineStatusFacts
from dbgauge.collectors.mysql_innodb import InnodbFacts
from dbgauge.collectors.mysql_processlist import ProcesslistFacts
from dbgauge.collectors.mysql_statements import StatementsFacts
from dbgauge.collectors.mysql_tables import TablesFacts
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import MetricType, Sample

_IS = "mysql_info_schema_"
_PS = "mysql_perf_schema_"
_STATEMENT = ("schema", "digest", "digest_text")
_TOP_N = "dbgauge keeps the collector's top N (`limit`); the peer has no limit"
# info_schema.tables: sys's views are not opened (no bytes to report; most of the scan's work)
_TABLES = _TOP_N + "; the sys schema is left out, the peer lists its views"


def _family(name: str, type_: MetricType, help_: str, labels: tuple[str, ...] = (),
            ours: str = "", note: str = "") -> PeerFamily:
    return PeerFamily(PeerSpec(name, type_, help_, labels), ours, note)


_STATEMENT_COLUMNS = {  # peer family suffix -> (digest column, peer help)
    "total": ("calls", "The total count of events statements by digest."),
    "seconds_total": ("timer_wait", "The total time of events statements by digest."),
    "errors_total": ("errors", "The errors of events statements by digest."),
    "warnings_total": ("warnings", "The warnings of events statements by digest."),
    "rows_affected_total": ("rows_affected",
                            "The total rows affected of events statements by digest."),
    "rows_sent_total": ("rows_sent", "The total rows sent of events statements by digest."),
    "rows_examined_total": ("rows_examined",
                            "The total rows examined of events statements by digest."),
    "tmp_tables_total": ("tmp_tables", "The total tmp tables of events statements by digest."),
    "tmp_disk_tables_total": ("tmp_disk_tables",
                              "The total tmp disk tables of events statements by digest."),
    "sort_merge_passes_total": ("sort_merge_passes", "The total number of merge passes by "
                                "the sort algorithm performed by digest."),
    "sort_rows_total": ("sort_rows", "The total number of sorted rows by digest."),
    "no_index_used_total": ("no_index_used", "The total number of statements that used full "
                            "table scans by digest."),
}
_OURS_STATEMENT = {"calls": "calls_total", "timer_wait": "seconds_total"}
_STATEMENTS_NOTE = ("only digests within dbgauge's top N by latency over all schemas "
                    "(`limit`, 250 as the peer's) that pass the peer's filter (a schema "
                    "outside mysql, performance_schema, information_schema; seen in the "
                    "last 86400 s)")
_TMP_NOTE = ("; as upstream since 0.16 (prometheus/mysqld_exporter#853): 0.14 swaps "
             "tmp_tables_total and tmp_disk_tables_total")

FAMILIES: tuple[PeerFamily, ...] = (
    # info_schema.innodb_metrics (collector mysql_innodb)
    _family(f"{_IS}innodb_metrics_buffer_page_read_total", "counter",
            "Total number of buffer pages read total.", ("type",),
            "dbgauge_mysql_innodb_metrics_total"),
    _family(f"{_IS}innodb_metrics_buffer_page_written_total", "counter",
            "Total number of buffer pages written total.", ("type",),
            "dbgauge_mysql_innodb_metrics_total"),
    _family(f"{_IS}innodb_metrics_buffer_pool_pages", "gauge",
            "Total number of buffer pool pages by state.", ("state",),
            "dbgauge_mysql_innodb_metrics_value"),
    _family(f"{_IS}innodb_metrics_buffer_pool_dirty_pages", "gauge",
            "Total number of dirty pages in the buffer pool.", (),
            "dbgauge_mysql_innodb_metrics_value"),
    _family(f"{_IS}innodb_metrics_*_total", "counter",
            "An INNODB_METRICS counter (its COMMENT in the peer's help).", (),
            "dbgauge_mysql_innodb_metrics_total",
            "typed by the row's TYPE alone as the peer does; dbgauge's own family also "
            "reads the COMMENT (levels and averages are gauges there)"),
    _family(f"{_IS}innodb_metrics_*", "gauge",
            "An INNODB_METRICS value (its COMMENT in the peer's help).", (),
            "dbgauge_mysql_innodb_metrics_value"),
    # perf_schema.tableiowaits and info_schema.tables (collector mysql_tables)
    _family(f"{_PS}table_io_waits_total", "counter",
            "The total number of table I/O wait events for each table and operation.",
            ("schema", "name", "operation"), "dbgauge_mysql_table_io_waits_total", _TOP_N),
    _family(f"{_PS}table_io_waits_seconds_total", "counter",
            "The total time of table I/O wait events for each table and operation.",
            ("schema", "name", "operation"), "dbgauge_mysql_table_io_wait_seconds_total",
            _TOP_N),
    _family(f"{_IS}table_version", "gauge", "The version number of the table's .frm file",
            ("schema", "table", "type", "engine", "row_format", "create_options"), "", _TABLES),
    _family(f"{_IS}table_rows", "gauge",
            "The estimated number of rows in the table from information_schema.tables",
            ("schema", "table"), "dbgauge_mysql_table_rows", _TABLES),
    _family(f"{_IS}table_size", "gauge",
            "The size of the table components from information_schema.tables",
            ("schema", "table", "component"), "dbgauge_mysql_table_data_bytes", _TABLES),
    # engine_innodb_status (collector mysql_engine_innodb_status)
    _family("mysql_engine_innodb_queries_inside_innodb", "gauge", "Queries inside InnoDB.",
            (), "dbgauge_mysql_innodb_queries_inside"),
    _family("mysql_engine_innodb_queries_in_queue", "gauge", "Queries in queue.", (),
            "dbgauge_mysql_innodb_queries_queued"),
    _family("mysql_engine_innodb_read_views_open_inside_innodb", "gauge",
            "Read views open inside InnoDB.", (), "dbgauge_mysql_innodb_read_views_open"),
    # binlog_size (collector mysql_binlog)
    _family("mysql_binlog_size_bytes", "gauge", "Combined size of all registered binlog files.",
            (), "dbgauge_mysql_binlog_bytes"),
    _family("mysql_binlog_files", "gauge", "Number of registered binlog files.", (),
            "dbgauge_mysql_binlog_files"),
    _family("mysql_binlog_file_number", "gauge", "The last binlog file number.", (),
            "dbgauge_mysql_binlog_file_number"),
    # info_schema.processlist (collector mysql_processlist)
    _family(f"{_IS}processlist_threads", "gauge",
            "The number of threads split by current state.", ("command", "state"),
            "dbgauge_mysql_processlist_threads",
            "the server's own command and state names, lowercased (dbgauge's family "
            "normalises states to a fixed set)"),
    _family(f"{_IS}processlist_seconds", "gauge",
            "The number of seconds threads have used split by current state.",
            ("command", "state"), "dbgauge_mysql_processlist_longest_seconds",
            "a sum over the group's threads (dbgauge's family has the longest)"),
    _family(f"{_IS}processlist_processes_by_user", "gauge", "The number of processes by user.",
            ("mysql_user",), "dbgauge_mysql_processlist_threads_by_user"),
    _family(f"{_IS}processlist_processes_by_host", "gauge", "The number of processes by host.",
            ("client_host",), "dbgauge_mysql_processlist_threads_by_host"),
    # perf_schema.eventsstatements (collector mysql_statements)
    *(_family(f"{_PS}events_statements_{suffix}", "counter", help_, _STATEMENT,
              f"dbgauge_mysql_statements_{_OURS_STATEMENT.get(column, column + '_total')}",
              _STATEMENTS_NOTE + (_TMP_NOTE if column.startswith("tmp_") else ""))
      for suffix, (column, help_) in _STATEMENT_COLUMNS.items()),
    # perf_schema.eventswaits (collector mysql_perf_schema_waits)
    _family(f"{_PS}events_waits_total", "counter", "The total events waits by event name.",
            ("event_name",), "dbgauge_mysql_wait_events_total"),
    _family(f"{_PS}events_waits_seconds_total", "counter",
            "The total seconds of events waits by event name.", ("event_name",),
            "dbgauge_mysql_wait_event_seconds_total"),
    # perf_schema.file_events (collector mysql_perf_schema_file_events)
    _family(f"{_PS}file_events_total", "counter", "The total file events by event name/mode.",
            ("event_name", "mode"), "dbgauge_mysql_file_io_operations_total"),
    _family(f"{_PS}file_events_seconds_total", "counter",
            "The total seconds of file events by event name/mode.", ("event_name", "mode"),
            "dbgauge_mysql_file_io_seconds_total"),
    _family(f"{_PS}file_events_bytes_total", "counter",
            "The total bytes of file events by event name/mode.", ("event_name", "mode"),
            "dbgauge_mysql_file_io_bytes_total"),
    # perf_schema.file_instances (collector mysql_perf_schema_file_instances)
    _family(f"{_PS}file_instances_total", "counter",
            "The total number of file read/write operations.",
            ("file_name", "event_name", "mode"), "dbgauge_mysql_file_instance_operations_total",
            _TOP_N + "; file_name without the peer's default prefix /var/lib/mysql/"),
    _family(f"{_PS}file_instances_bytes", "counter",
            "The number of bytes processed by file read/write operations.",
            ("file_name", "event_name", "mode"), "dbgauge_mysql_file_instance_bytes_total",
            _TOP_N),
    # perf_schema.indexiowaits (collector mysql_perf_schema_index_io_waits)
    _family(f"{_PS}index_io_waits_total", "counter",
            "The total number of index I/O wait events for each index and operation.",
            ("schema", "name", "index", "operation"), "dbgauge_mysql_index_io_waits_total",
            _TOP_N + "; dbgauge's index=\"\" is the peer's NONE"),
    _family(f"{_PS}index_io_waits_seconds_total", "counter",
            "The total time of index I/O wait events for each index and operation.",
            ("schema", "name", "index", "operation"),
            "dbgauge_mysql_index_io_wait_seconds_total", _TOP_N),
    # perf_schema.tablelocks (collector mysql_perf_schema_table_lock_waits)
    _family(f"{_PS}sql_lock_waits_total", "counter",
            "The total number of SQL lock wait events for each table and operation.",
            ("schema", "name", "operation"), "dbgauge_mysql_table_lock_waits_total", _TOP_N),
    _family(f"{_PS}external_lock_waits_total", "counter",
            "The total number of external lock wait events for each table and operation.",
            ("schema", "name", "operation"), "dbgauge_mysql_table_lock_waits_total", _TOP_N),
    _family(f"{_PS}sql_lock_waits_seconds_total", "counter",
            "The total time of SQL lock wait events for each table and operation.",
            ("schema", "name", "operation"), "dbgauge_mysql_table_lock_wait_seconds_total",
            _TOP_N),
    _family(f"{_PS}external_lock_waits_seconds_total", "counter",
            "The total time of external lock wait events for each table and operation.",
            ("schema", "name", "operation"), "dbgauge_mysql_table_lock_wait_seconds_total",
            _TOP_N),
    # auto_increment.columns (collector mysql_auto_increment)
    _family(f"{_IS}auto_increment_column", "gauge",
            "The current value of an auto_increment column from information_schema.",
            ("schema", "table", "column"), "dbgauge_mysql_auto_increment_next_value", _TOP_N),
    _family(f"{_IS}auto_increment_column_max", "gauge",
            "The max value of an auto_increment column from information_schema.",
            ("schema", "table", "column"), "dbgauge_mysql_auto_increment_max_value", _TOP_N),
    # info_schema.innodb_cmp and innodb_cmpmem (collectors mysql_innodb_cmp, _cmpmem)
    *(_family(f"{_IS}innodb_cmp_{name}", "counter", help_, ("page_size",), ours)
      for name, help_, ours in (
          ("compress_ops_total", "Number of times a B-tree page of the size PAGE_SIZE has "
           "been compressed.", "dbgauge_mysql_innodb_cmp_compress_ops_total"),
          ("compress_ops_ok_total", "Number of times a B-tree page of the size PAGE_SIZE has "
           "been successfully compressed.", "dbgauge_mysql_innodb_cmp_compress_ok_ops_total"),
          ("compress_time_seconds_total", "Total time in seconds spent in attempts to "
           "compress B-tree pages.", "dbgauge_mysql_innodb_cmp_compress_seconds_total"),
          ("uncompress_ops_total", "Number of times a B-tree page of the size PAGE_SIZE has "
           "been uncompressed.", "dbgauge_mysql_innodb_cmp_uncompress_ops_total"),
          ("uncompress_time_seconds_total", "Total time in seconds spent in uncompressing "
           "B-tree pages.", "dbgauge_mysql_innodb_cmp_uncompress_seconds_total"))),
    _family(f"{_IS}innodb_cmpmem_pages_used_total", "counter",
            "Number of blocks of the size PAGE_SIZE that are currently in use.",
            ("page_size", "buffer_pool"), "dbgauge_mysql_innodb_cmpmem_used_pages",
            "a current level the peer types counter (dbgauge: gauge)"),
    _family(f"{_IS}innodb_cmpmem_pages_free_total", "counter",
            "Number of blocks of the size PAGE_SIZE that are currently available for "
            "allocation.", ("page_size", "buffer_pool"),
            "dbgauge_mysql_innodb_cmpmem_free_pages",
            "a current level the peer types counter (dbgauge: gauge)"),
    _family(f"{_IS}innodb_cmpmem_relocation_ops_total", "counter",
            "Number of times a block of the size PAGE_SIZE has been relocated.",
            ("page_size", "buffer_pool"), "dbgauge_mysql_innodb_cmpmem_relocation_ops_total"),
    _family(f"{_IS}innodb_cmpmem_relocation_time_seconds_total", "counter",
            "Total time in seconds spent in relocating blocks.", ("page_size", "buffer_pool"),
            "dbgauge_mysql_innodb_cmpmem_relocation_seconds_total",
            "the peer divides RELOCATION_TIME (microseconds) by 1000: its \"seconds\" are "
            "milliseconds, kept here; dbgauge's family is in seconds"),
)
_MINE = PeerFamilies(*FAMILIES)

_BUFFER_PAGE = re.compile(r"^buffer_page_(read|written)_(.*)$")
_BUFFER_POOL = re.compile(r"^buffer_pool_pages_(.*)$")
_INNODB_COUNTER_TYPES = ("counter", "status_counter")


def innodb_metrics(facts: InnodbFacts) -> Iterator[Sample]:
    """info_schema.innodb_metrics: buffer_page_io rows by type, buffer pool pages by state,
    every other enabled row as `..._<subsystem>_<name>[_total]`."""
    for m in facts.metrics:
        if m.subsystem == "buffer_page_io":
            if match := _BUFFER_PAGE.match(m.name):
                yield _MINE.sample(f"{_IS}innodb_metrics_buffer_page_{match[1]}_total",
                                   m.value, {"type": match[2]})
            continue
        if m.subsystem == "buffer" and (match := _BUFFER_POOL.match(m.name)):
            if match[1] == "dirty":
                yield _MINE.sample(f"{_IS}innodb_metrics_buffer_pool_dirty_pages", m.value)
            elif match[1] != "total":
                yield _MINE.sample(f"{_IS}innodb_metrics_buffer_pool_pages", m.value,
                                   {"state": match[1]})
            continue
        counter = m.type in _INNODB_COUNTER_TYPES and m.value >= 0
        name = f"{_IS}innodb_metrics_{m.subsystem}_{m.name}{'_total' if counter else ''}"
        yield _MINE.sample(name, m.value)


_IO_OPERATIONS = ("fetch", "insert", "update", "delete")


def tables(facts: TablesFacts) -> Iterator[Sample]:
    """perf_schema.tableiowaits and info_schema.tables (NULLs as the peer's IFNULL)."""
    for io in facts.io:
        for op in _IO_OPERATIONS:
            labels = {"schema": io.schema, "name": io.table, "operation": op}
            if op in io.counts:
                yield _MINE.sample(f"{_PS}table_io_waits_total", io.counts[op], labels)
            if op in io.picoseconds:
                yield _MINE.sample(f"{_PS}table_io_waits_seconds_total",
                                   io.picoseconds[op] * PICOSECONDS, labels)
    for t in facts.sizes:
        table = {"schema": t.schema, "table": t.table}
        yield _MINE.sample(f"{_IS}table_version", t.version or 0.0, {
            **table, "type": t.type, "engine": _none(t.engine),
            "row_format": _none(t.row_format), "create_options": _none(t.create_options)})
        yield _MINE.sample(f"{_IS}table_rows", t.values.get("table_rows", 0.0), table)
        for component in ("data_length", "index_length", "data_free"):
            yield _MINE.sample(f"{_IS}table_size", t.values.get(component, 0.0),
                               {**table, "component": component})


def _none(value: str | None) -> str:
    return "NONE" if value is None else value


def engine_innodb_status(facts: EngineStatusFacts) -> Iterator[Sample]:
    if facts.queries_inside is not None and facts.queries_queued is not None:
        yield _MINE.sample("mysql_engine_innodb_queries_inside_innodb", facts.queries_inside)
        yield _MINE.sample("mysql_engine_innodb_queries_in_queue", facts.queries_queued)
    if facts.read_views is not None:
        yield _MINE.sample("mysql_engine_innodb_read_views_open_inside_innodb",
                           facts.read_views)


def binlog(facts: BinlogFacts) -> Iterator[Sample]:
    """binlog_size: nothing while log_bin is off; the file number is the part of the newest
    name after its first dot, 0 when that is not a number (as the peer parses it)."""
    if not facts.enabled:
        return
    yield _MINE.sample("mysql_binlog_size_bytes", facts.bytes or 0.0)
    yield _MINE.sample("mysql_binlog_files", float(facts.files))
    if facts.last_file:
        parts = facts.last_file.split(".")
        number = parts[1] if len(parts) > 1 else ""
        yield _MINE.sample("mysql_binlog_file_number",
                           float(number) if number.isdigit() else 0.0)


_SANITIZE = str.maketrans({";": "", ",": "", ":": "", ".": "", "(": "", ")": "", " ": "_",
                           "-": "_"})


def sanitize_state(value: str) -> str:
    """The peer's label value for a processlist command or state."""
    return (value or "unknown").lower().translate(_SANITIZE)


def processlist(facts: ProcesslistFacts) -> Iterator[Sample]:
    """info_schema.processlist: threads and summed seconds by (command, state), threads by
    user and by client host ("unknown" when empty)."""
    threads: dict[tuple[str, str], float] = {}
    seconds: dict[tuple[str, str], float] = {}
    users: dict[str, float] = {}
    hosts: dict[str, float] = {}
    for g in facts.groups:
        key = (sanitize_state(g.command), sanitize_state(g.state))
        threads[key] = threads.get(key, 0.0) + g.threads
        seconds[key] = seconds.get(key, 0.0) + (g.seconds or 0.0)
        users[g.user] = users.get(g.user, 0.0) + g.threads
        host = g.host or "unknown"
        hosts[host] = hosts.get(host, 0.0) + g.threads
    for (command, state), count in sorted(threads.items()):
        labels = {"command": command, "state": state}
        yield _MINE.sample(f"{_IS}processlist_threads", count, labels)
        yield _MINE.sample(f"{_IS}processlist_seconds", seconds[(command, state)], labels)
    for host, count in sorted(hosts.items()):
        yield _MINE.sample(f"{_IS}processlist_processes_by_host", count, {"client_host": host})
    for user, count in sorted(users.items()):
        yield _MINE.sample(f"{_IS}processlist_processes_by_user", count, {"mysql_user": user})


_PEER_SKIPS_SCHEMAS = frozenset({"mysql", "performance_schema", "information_schema"})
_PEER_TIME_LIMIT = 86400  # --collect.perf_schema.eventsstatements.timelimit's default


def statements(facts: StatementsFacts) -> Iterator[Sample]:
    """perf_schema.eventsstatements: the digests the peer's filter keeps."""
    for d in facts.digests:
        if d.schema_null or d.schema in _PEER_SKIPS_SCHEMAS or d.last_seen_age is None \
                or d.last_seen_age >= _PEER_TIME_LIMIT:
            continue
        labels = {"schema": d.schema, "digest": d.digest, "digest_text": d.digest_text}
        for suffix, (column, _) in _STATEMENT_COLUMNS.items():
            if (value := d.values.get(column)) is not None:
                scale = PICOSECONDS if column == "timer_wait" else 1.0
                yield _MINE.sample(f"{_PS}events_statements_{suffix}", value * scale, labels)


def _columns(facts: Summary, labels: tuple[str, ...],
             families: Mapping[str, tuple[str, str, float]]) -> Iterator[Sample]:
    """A peer sample per (row, column): `families` maps a column to (peer family, value of
    the last label or "" for none, scale); the row's keys fill the other labels."""
    for row in facts.rows:
        base = dict(zip(labels, row.keys, strict=False))
        for column, (family, extra, scale) in families.items():
            if (value := row.values.get(column)) is not None:
                out = {**base, labels[-1]: extra} if extra else base
                yield _MINE.sample(family, value * scale, out)


def waits(facts: Summary) -> Iterator[Sample]:
    return _columns(facts, ("event_name",), {
        "count_star": (f"{_PS}events_waits_total", "", 1.0),
        "sum_timer_wait": (f"{_PS}events_waits_seconds_total", "", PICOSECONDS)})


def file_events(facts: Summary) -> Iterator[Sample]:
    ops, secs, nbytes = (f"{_PS}file_events_total", f"{_PS}file_events_seconds_total",
                         f"{_PS}file_events_bytes_total")
    return _columns(facts, ("event_name", "mode"), {
        "count_read": (ops, "read", 1.0), "sum_timer_read": (secs, "read", PICOSECONDS),
        "sum_number_of_bytes_read": (nbytes, "read", 1.0),
        "count_write": (ops, "write", 1.0), "sum_timer_write": (secs, "write", PICOSECONDS),
        "sum_number_of_bytes_write": (nbytes, "write", 1.0),
        "count_misc": (ops, "misc", 1.0), "sum_timer_misc": (secs, "misc", PICOSECONDS)})


_PEER_FILE_PREFIX = "/var/lib/mysql/"  # --collect.perf_schema.file_instances.remove_prefix


def file_instances(facts: Summary) -> Iterator[Sample]:
    trimmed = Summary(tuple(Keyed((r.keys[0].removeprefix(_PEER_FILE_PREFIX), *r.keys[1:]),
                                  r.values) for r in facts.rows), facts.truncated)
    ops, nbytes = f"{_PS}file_instances_total", f"{_PS}file_instances_bytes"
    return _columns(trimmed, ("file_name", "event_name", "mode"), {
        "count_read": (ops, "read", 1.0), "count_write": (ops, "write", 1.0),
        "sum_number_of_bytes_read": (nbytes, "read", 1.0),
        "sum_number_of_bytes_write": (nbytes, "write", 1.0)})


def index_io_waits(facts: Summary) -> Iterator[Sample]:
    """perf_schema.indexiowaits: INDEX_NAME NULL is NONE, the only index with inserts."""
    for row in facts.rows:
        schema, table, index = row.keys
        index = index or "NONE"
        for op in _IO_OPERATIONS:
            if op == "insert" and index != "NONE":
                continue
            labels = {"schema": schema, "name": table, "index": index, "operation": op}
            if (count := row.values.get(f"count_{op}")) is not None:
                yield _MINE.sample(f"{_PS}index_io_waits_total", count, labels)
            if (timer := row.values.get(f"timer_{op}")) is not None:
                yield _MINE.sample(f"{_PS}index_io_waits_seconds_total", timer * PICOSECONDS,
                                   labels)


_SQL_LOCKS = ("read_normal", "read_with_shared_locks", "read_high_priority", "read_no_insert",
              "write_normal", "write_allow_write", "write_concurrent_insert",
              "write_low_priority")


def table_lock_waits(facts: Summary) -> Iterator[Sample]:
    """perf_schema.tablelocks: SQL locks by lock type, external locks as read/write."""
    families: dict[str, tuple[str, str, float]] = {}
    for lock in _SQL_LOCKS:
        families[f"count_{lock}"] = (f"{_PS}sql_lock_waits_total", lock, 1.0)
        families[f"timer_{lock}"] = (f"{_PS}sql_lock_waits_seconds_total", lock, PICOSECONDS)
    for mode in ("read", "write"):
        families[f"count_{mode}_external"] = (f"{_PS}external_lock_waits_total", mode, 1.0)
        families[f"timer_{mode}_external"] = (f"{_PS}external_lock_waits_seconds_total", mode,
                                              PICOSECONDS)
    return _columns(facts, ("schema", "name", "operation"), families)


def auto_increment(facts: Summary) -> Iterator[Sample]:
    """auto_increment.columns: rows whose type has a maximum (the peer cannot scan NULL)."""
    for row in facts.rows:
        value, top = row.values.get("auto_increment"), row.values.get("max_value")
        if value is None or top is None:
            continue
        labels = dict(zip(("schema", "table", "column"), row.keys, strict=True))
        yield _MINE.sample(f"{_IS}auto_increment_column", value, labels)
        yield _MINE.sample(f"{_IS}auto_increment_column_max", top, labels)


def innodb_cmp(facts: Summary) -> Iterator[Sample]:
    return _columns(facts, ("page_size",), {
        column: (f"{_IS}innodb_cmp_{name}", "", 1.0) for column, name in (
            ("compress_ops", "compress_ops_total"),
            ("compress_ops_ok", "compress_ops_ok_total"),
            ("compress_time", "compress_time_seconds_total"),
            ("uncompress_ops", "uncompress_ops_total"),
            ("uncompress_time", "uncompress_time_seconds_total"))})


def innodb_cmpmem(facts: Summary) -> Iterator[Sample]:
    return _columns(facts, ("page_size", "buffer_pool"), {
        "pages_used": (f"{_IS}innodb_cmpmem_pages_used_total", "", 1.0),
        "pages_free": (f"{_IS}innodb_cmpmem_pages_free_total", "", 1.0),
        "relocation_ops": (f"{_IS}innodb_cmpmem_relocation_ops_total", "", 1.0),
        "relocation_time": (f"{_IS}innodb_cmpmem_relocation_time_seconds_total", "", 1e-3)})


TRANSLATE: dict[str, Translate] = {
    "mysql_innodb": innodb_metrics,
    "mysql_tables": tables,
    "mysql_binlog": binlog,
    "mysql_engine_innodb_status": engine_innodb_status,
    "mysql_processlist": processlist,
    "mysql_statements": statements,
    "mysql_perf_schema_waits": waits,
    "mysql_perf_schema_file_events": file_events,
    "mysql_perf_schema_file_instances": file_instances,
    "mysql_perf_schema_index_io_waits": index_io_waits,
    "mysql_perf_schema_table_lock_waits": table_lock_waits,
    "mysql_auto_increment": auto_increment,
    "mysql_innodb_cmp": innodb_cmp,
    "mysql_innodb_cmpmem": innodb_cmpmem,
}
