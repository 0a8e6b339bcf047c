"""libpq connection strings read by libpq itself (through psycopg's conninfo functions):
URIs, `key=value` strings, `service=NAME` and the PG* environment variables mean to
dbgauge exactly what they mean to psql. Imports nothing of dbgauge, so `toolkit.dsn`
can use it without a cycle; no I/O beyond what libpq reads for its defaults
(environment, pg_service.conf when PGSERVICE is set).
"""

from __future__ import annotations

from functools import cache

from psycopg import Error, pq
from psycopg.conninfo import conninfo_to_dict, make_conninfo

__all__ = ["is_keyword", "libpq_defaults", "merge_conninfo", "parse_conninfo"]


def parse_conninfo(text: str) -> dict[str, str]:
    """The keywords `text` sets (a postgresql:// URI or key=value pairs), as libpq's
    PQconninfoParse reads them; ValueError with libpq's reason when it refuses."""
    try:
        return {k: str(v) for k, v in conninfo_to_dict(text).items() if v is not None}
    except Error as exc:
        raise ValueError(str(exc).strip() or type(exc).__name__) from None


def libpq_defaults() -> dict[str, str]:
    """What libpq would use for keywords a connection string leaves out (PQconndefaults):
    PGHOST, PGPORT, PGUSER, PGDATABASE, PGSSLMODE..., the service PGSERVICE names, the
    compiled-in defaults and the OS user name. Read anew on every call: the environment
    may change between connections of a long-running process."""
    return {o.keyword.decode(): o.val.decode() for o in pq.Conninfo.get_defaults()
            if o.val is not None}


def merge_conninfo(text: str, **overrides: str) -> str:
    """`text` with keywords replaced (pg_prove's -h -p -U -d over a --dsn)."""
    try:
        return make_conninfo(text, **overrides)
    except Error as exc:
        raise ValueError(str(exc).strip() or type(exc).__name__) from None


@cache
def _keywords() -> frozenset[str]:
    return frozenset(o.keyword.decode() for o in pq.Conninfo.get_defaults())


def is_keyword(word: str) -> bool:
    """Whether libpq knows `word` as a connection keyword (host, service, sslmode...)."""
    return word in _keywords()
