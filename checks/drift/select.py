"""Which tables a run compares: pt-table-checksum's filters (--databases, --tables,
--ignore-*, --*-regex) and dbgauge's --exclude, applied to the tables the source lists.

Names and shell patterns are accepted wherever pt-table-checksum takes a list: `shop`,
`app.*`, `app.log_*`, and for tables a bare `orders` (any schema). A name or pattern given
to keep tables that matches none is an error, so a typo never turns into "no drift"
over zero tables. Regexes follow pt-table-checksum: searched (not anchored) in the schema
name or the table name alone.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence

from dbgauge.checks.drift.model import ChecksumOptions, DriftError
from dbgauge.toolkit.errors import ConfigError

_GLOB = re.compile(r"[*?\[]")

Found = Mapping[tuple[str, str], tuple[int, bool]]  # (schema, table) -> (estimate, readable)


def is_pattern(name: str) -> bool:
    return bool(_GLOB.search(name))


def table_matches(pattern: str, schema: str, table: str) -> bool:
    """`schema.table` patterns match the qualified name, bare ones the table in any
    schema (pt-table-checksum: "Table names may be qualified with the database name")."""
    if "." in pattern:
        return fnmatch.fnmatchcase(f"{schema}.{table}", pattern)
    return fnmatch.fnmatchcase(table, pattern)


def _regex(option: str, text: str | None) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise ConfigError(f"{option} {text!r} is not a valid regular expression: {exc}"
                          ) from None


def _unmatched(option: str, name: str, where: str, what: str) -> DriftError:
    return DriftError(f"{option} {name!r} matches no {what} {where} (or the "
                      "checking user cannot see it): check the spelling, or list the "
                      "tables with SHOW TABLES / \\dt")


def replicate_table(options: ChecksumOptions) -> tuple[str, str] | None:
    """The --replicate table (never compared itself, as in pt-table-checksum)."""
    if options.replicate is None:
        return None
    schema, _, table = options.replicate.partition(".")
    return schema, table


def select_tables(found: Found, options: ChecksumOptions, source: str,
                  grant_hint: Callable[[str], str], where: str | None = None
                  ) -> list[tuple[str, str]]:
    """The (schema, table) pairs to compare: in the order --tables names them, else in the
    source's (`where` the tables were listed, for messages: on the source by default)."""
    where = where or f"on source {source}"
    names = list(found)
    schemas = sorted({s for s, _ in names})
    for pattern in options.databases:
        if not any(fnmatch.fnmatchcase(s, pattern) for s in schemas):
            raise _unmatched("--databases", pattern, where, "database")
    for item in options.tables:
        if is_pattern(item) or "." not in item:
            if not any(table_matches(item, s, t) for s, t in names):
                raise _unmatched("--tables", item, where, "table")
            continue
        schema, _, table = item.partition(".")
        if not schema or not table:
            raise ConfigError(f"--tables {item!r}: write tables as schema.table, a bare "
                              "table name, or a pattern such as app.*")
        if (schema, table) not in found:
            raise DriftError(f"table {item} does not exist {where} (or the "
                             f"checking user cannot see it: {grant_hint(item)})")
        if not found[(schema, table)][1]:
            raise DriftError(f"no privilege to read {item} {where}: {grant_hint(item)}")
    db_re = _regex("--databases-regex", options.databases_regex)
    tbl_re = _regex("--tables-regex", options.tables_regex)
    ignore_db_re = _regex("--ignore-databases-regex", options.ignore_databases_regex)
    ignore_tbl_re = _regex("--ignore-tables-regex", options.ignore_tables_regex)
    skip = replicate_table(options)
    out = []
    for schema, table in names:
        if options.databases and not any(fnmatch.fnmatchcase(schema, p)
                                         for p in options.databases):
            continue
        if options.tables and not any(table_matches(p, schema, table) for p in options.tables):
            continue
        if (db_re and not db_re.search(schema)) or (tbl_re and not tbl_re.search(table)):
            continue
        if any(fnmatch.fnmatchcase(schema, p) for p in options.ignore_databases):
            continue
        if any(table_matches(p, schema, table) for p in options.exclude):
            continue
        if (ignore_db_re and ignore_db_re.search(schema)) or \
                (ignore_tbl_re and ignore_tbl_re.search(table)):
            continue
        if (schema, table) == skip:
            continue
        out.append((schema, table))
    if options.tables:  # in the order asked for (a pattern's matches in the source's)
        def rank(name: tuple[str, str]) -> int:
            return next(i for i, p in enumerate(options.tables) if table_matches(p, *name))
        out.sort(key=rank)
    keep = [*options.databases, *options.tables, options.databases_regex, options.tables_regex]
    if not out and any(k for k in keep):
        raise DriftError(f"no table {where} passes all the filters given "
                         "(--databases, --tables, their -regex forms, and the --ignore-* and "
                         "--exclude lists): nothing to compare")
    return out


def split_list(values: Sequence[str]) -> tuple[str, ...]:
    """Comma-separated, repeatable option values as one tuple (empty items dropped)."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())
