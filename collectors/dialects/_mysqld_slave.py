"""mysqld_exporter's slave_status scraper (collector/slave_status.go), from the facts of
dbgauge's mysql_replication collector.

One series per column of each SHOW SLAVE STATUS row whose value mysqld_exporter reads as a
number (Yes 1, No and Connecting 0, NULL and text nothing: a NULL Seconds_Behind_Master
drops that series), named `mysql_slave_status_<column, lower-cased>`, untyped, labelled
master_host, master_uuid, channel_name (MySQL) and connection_name (MariaDB). Upstream
also exports MariaDB's Gtid_IO_Pos and Gtid_Slave_Pos per GTID domain
(`mysql_slave_status_gtid_io_pos{domain_id,server_id}` = the sequence number).

Column names follow the statement mysqld_exporter runs: MariaDB's SHOW ALL SLAVES STATUS
(what dbgauge runs too); MySQL's SHOW SLAVE STATUS up to 8.3, whose columns keep the
Master/Slave names even where dbgauge runs SHOW REPLICA STATUS (8.0.22+), so those are
named back; MySQL 8.4 has only SHOW REPLICA STATUS, and upstream exports its
Source/Replica names as they are (`mysql_slave_status_replica_io_running`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

from dbgauge.collectors.dialects._mysqld_values import parse_status
from dbgauge.collectors.mysql_replication import ReplicationFacts
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec
from dbgauge.toolkit.metrics import Sample

LABELS = ("master_host", "master_uuid", "channel_name", "connection_name")
GTID_LABELS = (*LABELS, "domain_id", "server_id")
GTID_COLUMNS = ("Gtid_IO_Pos", "Gtid_Slave_Pos")
_OURS = "dbgauge_mysql_replica_"

DECLARED: tuple[PeerFamily, ...] = (
    PeerFamily(PeerSpec("mysql_slave_status_*", "untyped",
                        "Generic metric from SHOW SLAVE STATUS.", LABELS),
               _OURS + "*",
               "dbgauge's own series keep a NULL Seconds_Behind_Source visible "
               "(..._seconds_behind_source_unknown) and are labelled by channel"),
    *(PeerFamily(PeerSpec("mysql_slave_status_" + column.lower(), "gauge",
                          f"{column} metric from SHOW SLAVE STATUS.", GTID_LABELS),
                 _OURS + "gtid_pending_transactions",
                 "upstream's since 0.18 (Debian's 0.14 has no such series)")
      for column in GTID_COLUMNS),
)
_FAMILIES = PeerFamilies(*DECLARED)
_GTID_FAMILIES = frozenset("mysql_slave_status_" + c.lower() for c in GTID_COLUMNS)


@lru_cache(maxsize=1024)
def _old_name(column: str) -> str:
    """A SHOW REPLICA STATUS column by its SHOW SLAVE STATUS name (Source_Host ->
    Master_Host, Replica_IO_Running -> Slave_IO_Running, Get_Source_public_key ->
    Get_master_public_key); Replicate_* columns stay."""
    parts = column.split("_")
    for i, part in enumerate(parts):
        lower = part.lower()
        if lower in ("source", "replica"):
            old = "master" if lower == "source" else "slave"
            parts[i] = old.capitalize() if part[:1].isupper() else old
    return "_".join(parts)


def slave_status_names(server: ServerInfo | None) -> bool:
    """True when mysqld_exporter would read SHOW SLAVE STATUS where dbgauge read SHOW
    REPLICA STATUS (MySQL 8.0.22 to 8.3)."""
    return server is not None and server.flavor == "mysql" and \
        (8, 0, 22) <= server.version < (8, 4)


def _column(columns: Sequence[tuple[str, str | None]], name: str) -> str:
    """columnValue: the column's text, "" when NULL or absent."""
    for column, value in columns:
        if column == name:
            return value or ""
    return ""


def _gtids(family: str, position: str, labels: dict[str, str],
           seen: set[tuple[str, str, str]]) -> Iterator[Sample]:
    """parseMariaDBGtid: one gauge per domain-server-seq of a MariaDB GTID position."""
    for gtid in position.split(",") if position else ():
        parts = gtid.split("-")
        if len(parts) != 3 or not parts[2].isdigit() or not parts[2].isascii() \
                or int(parts[2]) >= 2**64:
            continue
        key = (family, parts[0], parts[1])
        if key in seen:
            continue
        seen.add(key)
        yield _FAMILIES.sample(family, float(int(parts[2])),
                               {**labels, "domain_id": parts[0], "server_id": parts[1]})


def slave_status(facts: ReplicationFacts) -> Iterator[Sample]:
    """mysqld_exporter's slave_status scraper."""
    rename = slave_status_names(facts.server)
    for channel in facts.channels:
        columns = [(_old_name(c) if rename else c, v) for c, v in channel.columns]
        labels = {
            "master_host": _column(columns, "Master_Host") or _column(columns, "Source_Host"),
            "master_uuid": _column(columns, "Master_UUID") or _column(columns, "Source_UUID"),
            "channel_name": _column(columns, "Channel_Name"),
            "connection_name": _column(columns, "Connection_name")}
        seen: set[str] = set()
        for column, text in columns:
            value = parse_status(text or "")
            name = "mysql_slave_status_" + column.lower()
            if value is None or name in seen or name in _GTID_FAMILIES:
                continue
            seen.add(name)
            yield _FAMILIES.sample(name, value, labels)
        gtids: set[tuple[str, str, str]] = set()
        for column in GTID_COLUMNS:
            yield from _gtids("mysql_slave_status_" + column.lower(),
                              _column(columns, column), labels, gtids)
