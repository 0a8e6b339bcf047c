"""pgbouncer_clients: client connections per application (SHOW CLIENTS).

Which application holds the connections of a pool, and in which state: the clients are
counted by (database, user, application_name, state), as pgbouncer_exporter's
`pgbouncer_client_connections` does. application_name is whatever a client sends, so
dbgauge's family keeps at most `max_applications` names (default 50: those with the most
connections, ties by name) and counts the others under "(other)";
`dbgauge_pgbouncer_client_applications` says how many names there were. `read` returns
`ClientsFacts`: every group, uncut (one entry per distinct group, at most one per client).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.toolkit.db import Connection, Row
from dbgauge.toolkit.db.values import text
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Option, Sample

OTHER = "(other)"
CONNECTIONS = MetricSpec(
    "dbgauge_pgbouncer_client_connections", "gauge",
    "Client connections by database, user, application_name (as the client set it; at most "
    "max_applications names, the rest under \"(other)\") and state (SHOW CLIENTS).",
    ("database", "user", "application_name", "state"))
APPLICATIONS = MetricSpec(
    "dbgauge_pgbouncer_client_applications", "gauge",
    "Distinct application_name values among the client connections (\"\" counts as one); "
    "more than max_applications means some are counted under \"(other)\".")
METRICS = MetricTable(CONNECTIONS, APPLICATIONS)
OPTIONS: Mapping[str, Option] = {
    "max_applications": Option(50, "Most application_name values kept as series (those with "
                                   "the most connections); the rest are counted under "
                                   "\"(other)\"", 1, 10_000),
}


@dataclass(frozen=True)
class ClientGroup:
    """The client connections sharing database, user, application_name and state."""

    database: str
    user: str
    application_name: str
    state: str
    count: int


@dataclass(frozen=True)
class ClientsFacts:
    """The facts: every group of client connections, in the order SHOW CLIENTS first
    lists a member."""

    groups: tuple[ClientGroup, ...]

    def applications(self) -> Counter[str]:
        """Connections per application_name."""
        out: Counter[str] = Counter()
        for group in self.groups:
            out[group.application_name] += group.count
        return out


def parse_clients(rows: Iterable[Row]) -> ClientsFacts:
    """SHOW CLIENTS rows -> connections counted by (database, user, application_name,
    state); a row without application_name (no such column) counts under ""."""
    counts: Counter[tuple[str, str, str, str]] = Counter()
    for row in rows:
        counts[(text(row.get("database")), text(row.get("user")),
                text(row.get("application_name")), text(row.get("state")))] += 1
    return ClientsFacts(tuple(ClientGroup(*key, count) for key, count in counts.items()))


def read_clients(conn: Connection) -> ClientsFacts:
    return parse_clients(conn.query("show_clients"))


def kept_applications(facts: ClientsFacts, limit: int) -> frozenset[str]:
    """The `limit` application names with the most connections (ties: by name)."""
    ranked = sorted(facts.applications().items(), key=lambda item: (-item[1], item[0]))
    return frozenset(name for name, _ in ranked[:limit])


def client_samples(facts: ClientsFacts, limit: int) -> Iterator[Sample]:
    """Connections per group, the names past `limit` folded into "(other)"; then the
    number of distinct names."""
    kept = kept_applications(facts, limit)
    counts: Counter[tuple[str, str, str, str]] = Counter()
    for g in facts.groups:
        name = g.application_name if g.application_name in kept else OTHER
        counts[(g.database, g.user, name, g.state)] += g.count
    for (database, user, name, state), count in counts.items():
        yield Sample(CONNECTIONS.name, float(count), {
            "database": database, "user": user, "application_name": name, "state": state})
    yield Sample(APPLICATIONS.name, float(len(facts.applications())))


class PgBouncerClients(Collector[ClientsFacts]):
    name = "pgbouncer_clients"
    help = ("Client connections per database, user, application_name and state, at most "
            "max_applications names (SHOW CLIENTS).")
    kind = "pgbouncer"
    flavors = frozenset({"pgbouncer"})
    metrics = METRICS
    options = OPTIONS

    def read(self, conn: Connection) -> ClientsFacts:
        return read_clients(conn)

    def samples(self, facts: ClientsFacts) -> Iterable[Sample]:
        return client_samples(facts, int(self.setting("max_applications")))
