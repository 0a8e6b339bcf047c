"""mysqld_exporter's perf_schema.memory_events scraper (the same names in Debian's 0.14 and
upstream), from the facts of dbgauge's mysql_perf_schema_memory: merged into the
mysqld_exporter dialect (`FAMILIES`, `TRANSLATE`).

The peer strips `memory/` from the instrument names
(`--collect.perf_schema.memory_events.remove_prefix`'s default); so does the dialect.
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors._summary import Summary
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import Sample

_P = "mysql_perf_schema_memory_events_"
_TOP_N = ("dbgauge keeps the collector's top N (`limit`); the peer has no limit; "
          "`memory/` stripped from event_name, as the peer's default")
FAMILIES: tuple[PeerFamily, ...] = (
    PeerFamily(PeerSpec(f"{_P}alloc_bytes_total", "counter",
                        "The total number of bytes allocated by events.", ("event_name",)),
               "dbgauge_mysql_memory_allocated_bytes_total", _TOP_N),
    PeerFamily(PeerSpec(f"{_P}free_bytes_total", "counter",
                        "The total number of bytes freed by events.", ("event_name",)),
               "dbgauge_mysql_memory_freed_bytes_total", _TOP_N),
    PeerFamily(PeerSpec(f"{_P}used_bytes", "gauge",
                        "The number of bytes currently allocated by events.", ("event_name",)),
               "dbgauge_mysql_memory_used_bytes", _TOP_N),
)
_MINE = PeerFamilies(*FAMILIES)
PEER_PREFIX = "memory/"  # --collect.perf_schema.memory_events.remove_prefix


def memory_events(facts: Summary) -> Iterator[Sample]:
    """Per instrument the three families; a row with a NULL fails the peer's scan: left
    out."""
    for row in facts.rows:
        values = [row.values.get(c) for c in ("bytes_alloc", "bytes_free", "bytes_used")]
        if any(v is None for v in values):
            continue
        labels = {"event_name": row.keys[0].removeprefix(PEER_PREFIX)}
        for family, value in zip(FAMILIES, values, strict=True):
            yield _MINE.sample(family.spec.name, value or 0.0, labels)


TRANSLATE: dict[str, Translate] = {"mysql_perf_schema_memory": memory_events}
