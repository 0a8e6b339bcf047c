"""mysqld_exporter's global_status and global_variables scrapers (collector/global_status.go,
global_variables.go), from the facts of dbgauge's mysql_global_status and
mysql_global_variables collectors.

global_status: every variable whose value mysqld_exporter reads as a number, named
`mysql_global_status_<name>` (validPrometheusName) and untyped, except the groups it
reshapes: Com_* -> commands_total{command}, Handler_* -> handlers_total{handler},
Connection_errors_* -> connection_errors_total{error}, Innodb_buffer_pool_pages_{data,free,
misc,old} -> buffer_pool_pages{state}, ..._dirty -> buffer_pool_dirty_pages, ..._total
dropped, the other ..._pages_* -> buffer_pool_page_changes_total{operation}, Innodb_rows_*
-> innodb_row_ops_total{operation}, Performance_schema_* ->
performance_schema_lost_total{instrumentation}. Galera: mysql_galera_status_info (the uuids
and provider version as labels) and mysql_galera_evs_repl_latency_*.

global_variables: every numeric variable as the gauge `mysql_global_variables_<name>`,
mysql_version_info, mysql_transaction_isolation{level}, and with Galera
mysql_galera_variables_info{wsrep_cluster_name} and mysql_galera_gcache_size_bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache

from dbgauge.collectors.dialects._mysqld_values import parse_float, parse_status, valid_name
from dbgauge.collectors.mysql_global_status import GlobalStatusFacts
from dbgauge.collectors.mysql_global_variables import GlobalVariablesFacts
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec
from dbgauge.toolkit.metrics import MetricType, Sample

_STATUS = "dbgauge_mysql_global_status_"
_VARS = "dbgauge_mysql_global_variables_"


def _labelled(name: str, type_: MetricType, help_: str, label: str, ours: str,
              note: str = "") -> PeerFamily:
    return PeerFamily(PeerSpec(name, type_, help_, (label,)), ours, note)


COMMANDS = "mysql_global_status_commands_total"
HANDLERS = "mysql_global_status_handlers_total"
CONNECTION_ERRORS = "mysql_global_status_connection_errors_total"
POOL_PAGES = "mysql_global_status_buffer_pool_pages"
DIRTY_PAGES = "mysql_global_status_buffer_pool_dirty_pages"
PAGE_CHANGES = "mysql_global_status_buffer_pool_page_changes_total"
ROW_OPS = "mysql_global_status_innodb_row_ops_total"
PS_LOST = "mysql_global_status_performance_schema_lost_total"
GALERA_STATUS = "mysql_galera_status_info"
EVS = "mysql_galera_evs_repl_latency_"
EVS_PARTS = (("min_seconds", "Min value."), ("avg_seconds", "Avg value."),
             ("max_seconds", "Max value."), ("stdev", "Standard Deviation."),
             ("sample_size", "Sample Size."))
VERSION_INFO = "mysql_version_info"
ISOLATION = "mysql_transaction_isolation"
GALERA_VARIABLES = "mysql_galera_variables_info"
GCACHE = "mysql_galera_gcache_size_bytes"

DECLARED: tuple[PeerFamily, ...] = (
    _labelled(COMMANDS, "counter", "Total number of executed MySQL commands.", "command",
              _STATUS + "com_<command>_total"),
    _labelled(HANDLERS, "counter", "Total number of executed MySQL handlers.", "handler",
              _STATUS + "handler_<handler>_total"),
    _labelled(CONNECTION_ERRORS, "counter", "Total number of MySQL connection errors.",
              "error", _STATUS + "connection_errors_<error>_total"),
    _labelled(POOL_PAGES, "gauge", "Innodb buffer pool pages by state.", "state",
              _STATUS + "innodb_buffer_pool_pages_<state>"),
    PeerFamily(PeerSpec(DIRTY_PAGES, "gauge", "Innodb buffer pool dirty pages."),
               _STATUS + "innodb_buffer_pool_pages_dirty"),
    _labelled(PAGE_CHANGES, "counter", "Innodb buffer pool page state changes.",
              "operation", _STATUS + "innodb_buffer_pool_pages_<operation>_total"),
    _labelled(ROW_OPS, "counter", "Total number of MySQL InnoDB row operations.",
              "operation", _STATUS + "innodb_rows_<operation>_total"),
    _labelled(PS_LOST, "counter", "Total number of MySQL instrumentations that could not be "
              "loaded or created due to memory constraints.", "instrumentation",
              _STATUS + "performance_schema_<instrumentation>_total",
              "mysqld_exporter files every Performance_schema_* variable here, "
              "session_connect_attrs_longest_seen (a gauge) included"),
    PeerFamily(PeerSpec("mysql_global_status_*", "untyped",
                        "Generic metric from SHOW GLOBAL STATUS."),
               _STATUS + "<name>",
               "dbgauge's own families are typed (counters end in _total) and lint-clean"),
    PeerFamily(PeerSpec(GALERA_STATUS, "gauge", "PXC/Galera status information.",
                        ("wsrep_local_state_uuid", "wsrep_cluster_state_uuid",
                         "wsrep_provider_version"))),
    *(PeerFamily(PeerSpec(EVS + part, "gauge",
                          f"PXC/Galera group communication latency. {what}"))
      for part, what in EVS_PARTS),
    PeerFamily(PeerSpec("mysql_global_variables_*", "gauge",
                        "Generic gauge metric from SHOW GLOBAL VARIABLES."),
               _VARS + "<name>",
               "read every `refresh` (60 s), not every scrape; HELP is generic where "
               "mysqld_exporter describes MyRocks variables"),
    PeerFamily(PeerSpec(VERSION_INFO, "gauge", "MySQL version and distribution.",
                        ("innodb_version", "version", "version_comment")),
               "dbgauge_target_info", "read every `refresh` (60 s), as the variables"),
    PeerFamily(PeerSpec(ISOLATION, "gauge", "MySQL transaction isolation.", ("level",))),
    PeerFamily(PeerSpec(GALERA_VARIABLES, "gauge", "PXC/Galera variables information.",
                        ("wsrep_cluster_name",))),
    PeerFamily(PeerSpec(GCACHE, "gauge", "PXC/Galera gcache size.")),
)
_FAMILIES = PeerFamilies(*DECLARED)
_STATIC = frozenset(f.spec.name for f in DECLARED if not f.spec.name.endswith("*"))

# Status variables mysqld_exporter keeps as text for mysql_galera_status_info and the EVS
# latency gauges.
_STATUS_TEXT = ("wsrep_local_state_uuid", "wsrep_cluster_state_uuid",
                "wsrep_provider_version", "wsrep_evs_repl_latency")
_GROUPS = re.compile(r"(com|handler|connection_errors|innodb_buffer_pool_pages|innodb_rows|"
                     r"performance_schema)_(.*)", re.DOTALL)
_GROUP_FAMILY = {"com": (COMMANDS, "command"), "handler": (HANDLERS, "handler"),
                 "connection_errors": (CONNECTION_ERRORS, "error"),
                 "innodb_rows": (ROW_OPS, "operation"),
                 "performance_schema": (PS_LOST, "instrumentation")}


def _values(values: Mapping[str, float], texts: Mapping[str, str]
            ) -> Iterator[tuple[str, str, float | None]]:
    """(server's name, the value as written or "", the number mysqld_exporter reads) of
    every variable: a plain number dbgauge read is the number Go's ParseFloat reads; a
    value kept as text is read as mysqld_exporter reads it."""
    for name, value in values.items():
        if name not in texts:
            yield name, "", value
    for name, text in texts.items():
        yield name, text, _parse_text(text)


_parse_text = lru_cache(maxsize=4096)(parse_status)  # the same words come back each scrape
# (family, labels, spec, key telling apart two variables that name the same series)
Shape = tuple[str, Mapping[str, str], PeerSpec, tuple[str, str]]


@lru_cache(maxsize=8192)
def _status_shape(variable: str) -> Shape | None:
    """Where mysqld_exporter files one numeric status variable (by validPrometheusName);
    None for Innodb_buffer_pool_pages_total, which it drops. Worked out once per name."""
    key = valid_name(variable)
    m = _GROUPS.fullmatch(key)
    labels: dict[str, str] = {}
    if m is None:
        name = "mysql_global_status_" + key
        if name in _STATIC:
            return None
    else:
        group, rest = m.groups()
        if group != "innodb_buffer_pool_pages":
            name, label = _GROUP_FAMILY[group]
            labels[label] = rest
        elif rest in ("data", "free", "misc", "old"):
            name, labels["state"] = POOL_PAGES, rest
        elif rest == "dirty":
            name = DIRTY_PAGES
        elif rest == "total":
            return None
        else:
            name, labels["operation"] = PAGE_CHANGES, rest
    return name, labels, _FAMILIES.spec(name), (name, next(iter(labels.values()), ""))


def global_status(facts: GlobalStatusFacts) -> Iterator[Sample]:
    """mysqld_exporter's global_status scraper."""
    kept: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for variable, text, value in _values(facts.values, facts.text):
        if value is None:
            if variable in _STATUS_TEXT:
                kept[variable] = text
            continue
        shape = _status_shape(variable)
        if shape is None or shape[3] in seen:  # dropped, or named like one already seen
            continue
        seen.add(shape[3])
        yield Sample(shape[0], value, shape[1], shape[2])
    yield from _galera_status(kept)


def _galera_status(kept: Mapping[str, str]) -> Iterator[Sample]:
    if kept.get("wsrep_local_state_uuid"):
        yield _FAMILIES.sample(GALERA_STATUS, 1.0, {
            "wsrep_local_state_uuid": kept["wsrep_local_state_uuid"],
            "wsrep_cluster_state_uuid": kept.get("wsrep_cluster_state_uuid", ""),
            "wsrep_provider_version": kept.get("wsrep_provider_version", "")})
    latency = kept.get("wsrep_evs_repl_latency", "")
    parts = latency.split("/") if latency else []
    numbers = [parse_float(p) for p in parts]
    if len(numbers) == len(EVS_PARTS) and all(n is not None for n in numbers):
        for (part, _what), number in zip(EVS_PARTS, numbers, strict=True):
            assert number is not None
            yield _FAMILIES.sample(EVS + part, number)


# Variables mysqld_exporter keeps as text for its info families.
_VARIABLE_TEXT = ("innodb_version", "version", "version_comment", "wsrep_cluster_name",
                  "wsrep_provider_options", "tx_isolation", "transaction_isolation")
_GCACHE = re.compile(r"gcache.size = (\d+)([MG]?);")


def gcache_size(options: str) -> float:
    """gcache.size in bytes from wsrep_provider_options (parseWsrepProviderOptions; 0 when
    it is not there)."""
    m = _GCACHE.search(options)
    if m is None:
        return 0.0
    return float(m.group(1)) * {"M": 2**20, "G": 2**30}.get(m.group(2), 1)


@lru_cache(maxsize=8192)
def _variable_shape(variable: str) -> tuple[str, PeerSpec]:
    name = "mysql_global_variables_" + valid_name(variable)
    return name, _FAMILIES.spec(name)


def global_variables(facts: GlobalVariablesFacts) -> Iterator[Sample]:
    """mysqld_exporter's global_variables scraper."""
    kept = dict.fromkeys(_VARIABLE_TEXT, "")
    seen: set[str] = set()
    for name, text, value in _values(facts.values, facts.text):
        metric, spec = _variable_shape(name)
        if value is None:
            key = metric.removeprefix("mysql_global_variables_")
            if key in kept:
                kept[key] = text
            continue
        if metric not in seen:
            seen.add(metric)
            yield Sample(metric, value, {}, spec)
    yield _FAMILIES.sample(VERSION_INFO, 1.0, {
        "innodb_version": kept["innodb_version"], "version": kept["version"],
        "version_comment": kept["version_comment"]})
    if kept["wsrep_cluster_name"]:
        yield _FAMILIES.sample(GALERA_VARIABLES, 1.0,
                               {"wsrep_cluster_name": kept["wsrep_cluster_name"]})
    if kept["wsrep_provider_options"]:
        yield _FAMILIES.sample(GCACHE, gcache_size(kept["wsrep_provider_options"]))
    level = kept["transaction_isolation"] or kept["tx_isolation"]
    if level:
        yield _FAMILIES.sample(ISOLATION, 1.0, {"level": level})
