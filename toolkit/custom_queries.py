"""Custom queries in postgres_exporter's `queries.yaml` format, read and checked (pure
apart from `load_queries`, which reads the file).

An operator moving from postgres_exporter (`--extend.query-path`) keeps the file they
have: each top-level key is a metric-name prefix with a `query`, a `metrics` list of
one-key maps (column -> usage and description) and optional `master`, `cache_seconds`
and `runonserver`. Every problem is reported as `file:line: yaml.path: what is wrong`
through the config's own reader (`toolkit.config.parse_yaml_model`), and checks that the
format itself does not make (unknown usages, duplicate names, labels dbgauge reserves)
happen here, at config load, instead of as silently missing series at scrape time.

Differences from postgres_exporter 0.11, on purpose: an unknown `usage` is an error
(postgres_exporter silently discards the column); so is listing a HISTOGRAM's companion
column (`<col>_bucket`, `_sum`, `_count`) with a usage other than DISCARD (0.11 then makes
one or the other at random); `runonserver` and a column's `pg_version` are honoured (0.11
parses and ignores both for user queries). MAPPEDMETRIC, DURATION and HISTOGRAM columns
keep 0.11's names; how their values are read is in `collectors._queries`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    StrictBool,
    StrictInt,
    StrictStr,
    model_validator,
)

from dbgauge.toolkit.config import _line_of, parse_yaml_model
from dbgauge.toolkit.db.version import Version
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.files import read_text
from dbgauge.toolkit.yamltree import format_loc

MAX_FILE_BYTES = 1 << 20  # 1 MiB: a queries file is a few KiB; more is a mistake
MAX_CACHE_SECONDS = 366 * 86400
Usage = Literal["LABEL", "COUNTER", "GAUGE", "DISCARD", "MAPPEDMETRIC", "DURATION",
                "HISTOGRAM"]
USAGES: tuple[Usage, ...] = ("LABEL", "COUNTER", "GAUGE", "DISCARD", "MAPPEDMETRIC",
                             "DURATION", "HISTOGRAM")
# A HISTOGRAM column <col> holds the buckets' upper bounds (an array); these companion
# columns hold the cumulative counts (an array), the sum and the count.
HISTOGRAM_PARTS = ("_bucket", "_sum", "_count")
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
COLUMN_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# Labels dbgauge sets itself (the exporter's, and postgres_exporter's `server`).
RESERVED_LABELS = frozenset({"target", "collector", "job", "instance", "server"})


# ------------------------------------------------------------------ version ranges

_COMPARATOR = re.compile(r"\s*(>=|<=|!=|==|=|>|<|!)?\s*v?(\d+(?:\.\d+){0,2})(?=\s|$)\s*")


@dataclass(frozen=True)
class VersionRange:
    """A blang/semver range as postgres_exporter writes them: comparators joined by
    spaces (all must hold), alternatives by `||`; versions may omit minor and patch."""

    text: str
    alternatives: tuple[tuple[tuple[str, Version], ...], ...]

    def matches(self, version: Version) -> bool:
        have = (*version, 0, 0, 0)[:3]
        return any(all(_compare(have, op, want) for op, want in alt)
                   for alt in self.alternatives)


def _compare(have: Version, op: str, want: Version) -> bool:
    if op in ("", "=", "=="):
        return have == want
    if op in ("!", "!="):
        return have != want
    return {">": have > want, ">=": have >= want, "<": have < want,
            "<=": have <= want}[op]


def parse_range(text: str) -> VersionRange:
    """'>=10.0.0 <16' -> VersionRange; ValueError says what a range looks like."""
    alternatives = []
    for part in text.split("||"):
        comparators = []
        pos = 0
        while pos < len(part) and part[pos:].strip():
            m = _COMPARATOR.match(part, pos)
            if m is None:
                raise ValueError(f"{_shown(text)} is not a version range like "
                                 "'>=10.0.0' or '>=9.6.0 <13.0.0'")
            version = tuple(int(p) for p in m.group(2).split("."))
            comparators.append((m.group(1) or "", (*version, 0, 0, 0)[:3]))
            pos = m.end()
        if not comparators:
            raise ValueError(f"{_shown(text)} has an empty alternative")
        alternatives.append(tuple(comparators))
    return VersionRange(text, tuple(alternatives))


def _shown(value: str) -> str:
    """A user's value quoted for a message, cut short (a file may hold anything)."""
    return repr(value if len(value) <= 40 else value[:40] + "...")


# ------------------------------------------------------------------ the model


@dataclass(frozen=True)
class Column:
    """One entry of a query's `metrics` list."""

    name: str
    usage: Usage
    description: str = ""
    mapping: Mapping[str, float] = field(default_factory=dict)  # MAPPEDMETRIC only
    versions: VersionRange | None = None  # pg_version: the column counts only there

    def metric(self, prefix: str) -> str:
        """The family name postgres_exporter gives this column (a HISTOGRAM's samples add
        `_bucket`, `_sum` and `_count` to it)."""
        suffix = "_milliseconds" if self.usage == "DURATION" else ""
        return f"{prefix}_{self.name}{suffix}"

    def sample_names(self, prefix: str) -> tuple[str, ...]:
        """The sample names this column makes."""
        family = self.metric(prefix)
        if self.usage == "HISTOGRAM":
            return tuple(family + part for part in HISTOGRAM_PARTS)
        return (family,)


@dataclass(frozen=True)
class CustomQuery:
    """One top-level entry: `name` is the metric-name prefix."""

    name: str
    sql: str
    columns: tuple[Column, ...]
    master: bool = False  # accepted; every query runs on the target's own database
    cache_seconds: int = 0
    runonserver: VersionRange | None = None

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.usage == "LABEL")

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def histogram_of(self, name: str) -> Column | None:
        """The HISTOGRAM column whose companion (`<col>_bucket`, `_sum`, `_count`) the
        column `name` is, if any."""
        for part in HISTOGRAM_PARTS:
            owner = self.column(name.removesuffix(part)) if name.endswith(part) else None
            if owner is not None and owner.usage == "HISTOGRAM":
                return owner
        return None


@dataclass(frozen=True)
class QueriesFile:
    """A whole file: its path as given and its queries in file order."""

    source: str
    queries: tuple[CustomQuery, ...]


def _usage(value: str) -> str:
    if value not in USAGES:
        raise ValueError(f"{_shown(value)} is not one of {', '.join(USAGES)}")
    return value


_Fail = Callable[[list[int | str], str], ConfigError]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _ColumnModel(_Model):
    usage: Annotated[StrictStr, AfterValidator(_usage)]
    description: StrictStr = ""
    metric_mapping: dict[StrictStr, float] | None = None
    pg_version: StrictStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _comma_in_description(cls, data: object) -> object:
        """`{usage: GAUGE, description: Disk space, in bytes}` (postgres_exporter's own
        example file): in a YAML flow mapping the comma ends the description and makes
        `in bytes` a key without a value, which the Go exporter ignores. Such keys are put
        back into the description, as its author meant; a key with a value stays an
        error."""
        if not isinstance(data, dict) or not isinstance(data.get("description"), str):
            return data
        cut = [k for k, v in data.items()
               if v is None and isinstance(k, str) and k not in cls.model_fields]
        if not cut:
            return data
        kept = {k: v for k, v in data.items() if k not in cut}
        kept["description"] = ", ".join([data["description"], *cut])
        return kept


class _QueryModel(_Model):
    query: StrictStr = Field(min_length=1)
    metrics: list[dict[StrictStr, _ColumnModel]] = Field(min_length=1)
    master: StrictBool = False
    cache_seconds: StrictInt = Field(default=0, ge=0, le=MAX_CACHE_SECONDS)
    runonserver: StrictStr | None = None


class _FileModel(RootModel[dict[StrictStr, _QueryModel]]):
    pass


def parse_queries(text: str, source: str = "<queries>") -> QueriesFile:
    """Check a queries file's text; ConfigError names `source:line: yaml.path: problem`.

    An empty file has no queries (as in postgres_exporter)."""
    try:
        model = parse_yaml_model(
            _FileModel, text, source,
            "the top level must be a mapping of metric-name prefixes to queries "
            "(postgres_exporter's queries.yaml format)", empty={})
        tree = yaml.compose(text)
    except RecursionError:
        raise ConfigError("invalid YAML: nested too deeply", source=source) from None
    _no_duplicate_keys(tree, [], source)

    def fail(loc: list[int | str], message: str) -> ConfigError:
        return ConfigError(message, source=source, path=format_loc(loc),
                           line=_line_of(tree, loc))

    queries: list[CustomQuery] = []
    families: dict[str, str] = {}  # sample name -> where it was declared
    for name, entry in model.root.items():
        if not METRIC_NAME.fullmatch(name):
            raise fail([name], f"{_shown(name)} is not a valid metric name prefix "
                               "(letters, digits, '_' and ':', not starting with a digit)")
        runonserver = None
        if entry.runonserver is not None:
            try:
                runonserver = parse_range(entry.runonserver)
            except ValueError as exc:
                raise fail([name, "runonserver"], str(exc)) from None
        columns: list[Column] = []
        where: dict[str, list[int | str]] = {}  # column -> its place in the file
        for i, item in enumerate(entry.metrics):
            if not item:
                raise fail([name, "metrics", i], "an entry needs a column name")
            for column, spec in item.items():
                if column in where:
                    raise fail([name, "metrics", i, column],
                               f"column {column!r} is listed twice in {name}")
                where[column] = [name, "metrics", i, column]
                columns.append(_column(column, spec, where[column], fail))
        query = CustomQuery(name, entry.query, tuple(columns), entry.master,
                            entry.cache_seconds, runonserver)
        _check_columns(query, where, families, fail)
        queries.append(query)
    return QueriesFile(source, tuple(queries))


def _check_columns(query: CustomQuery, where: Mapping[str, list[int | str]],
                   families: dict[str, str], fail: _Fail) -> None:
    """A HISTOGRAM's companions are not listed as metrics of their own, no `le` label
    beside a histogram, and no sample name is made twice in the file (`families`: sample
    name -> where it was declared)."""
    for col in query.columns:
        if col.usage == "DISCARD":
            continue
        owner = query.histogram_of(col.name)
        if owner is not None:
            raise fail(where[col.name], f"column {col.name!r} is part of HISTOGRAM "
                                        f"{owner.name!r} (its bucket counts, sum or count): "
                                        "list it as DISCARD or not at all")
        if col.usage == "LABEL":
            continue
        for family in dict.fromkeys((col.metric(query.name), *col.sample_names(query.name))):
            if family in families:
                raise fail(where[col.name],
                           f"metric {family} is also made by {families[family]}")
            families[family] = f"{query.name}.{col.name}"
    if "le" in query.labels and any(c.usage == "HISTOGRAM" for c in query.columns):
        raise fail([query.name, "metrics"], "a query with a HISTOGRAM column cannot have a "
                                            "LABEL column named 'le' (the buckets' label)")


def _column(name: str, spec: _ColumnModel, loc: list[int | str],
            fail: _Fail) -> Column:
    if not COLUMN_NAME.fullmatch(name):
        raise fail(loc, f"{_shown(name)} is not a usable column name (letters, digits "
                        "and '_', not starting with a digit)")
    usage: Usage = next(u for u in USAGES if u == spec.usage)
    if usage == "LABEL" and (name in RESERVED_LABELS or name.startswith("__")):
        raise fail(loc, f"label {name!r} is set by dbgauge itself: rename the column "
                        "(e.g. with AS in the query)")
    if spec.metric_mapping is not None and usage != "MAPPEDMETRIC":
        raise fail([*loc, "metric_mapping"], "metric_mapping is for MAPPEDMETRIC columns")
    versions = None
    if spec.pg_version is not None:
        try:
            versions = parse_range(spec.pg_version)
        except ValueError as exc:
            raise fail([*loc, "pg_version"], str(exc)) from None
    return Column(name, usage, spec.description, dict(spec.metric_mapping or {}), versions)


def _no_duplicate_keys(node: yaml.Node | None, loc: list[int | str], source: str) -> None:
    """YAML lets a key repeat and keeps the last one; a repeated prefix or column is
    an operator's mistake, so it is named instead (only the levels the format has)."""
    if not isinstance(node, yaml.MappingNode) or len(loc) > 4:
        return
    seen: set[str] = set()
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        if key.value in seen:
            raise ConfigError(f"{_shown(key.value)} is defined twice", source=source,
                              path=format_loc([*loc, key.value]) or None,
                              line=key.start_mark.line + 1)
        seen.add(key.value)
        child = [*loc, key.value]
        if len(loc) in (0, 3):  # a query's keys; a column's usage, description...
            _no_duplicate_keys(value, child, source)
        elif len(loc) == 1 and key.value == "metrics" and isinstance(value, yaml.SequenceNode):
            for i, item in enumerate(value.value):
                _no_duplicate_keys(item, [*child, i], source)


# ------------------------------------------------------------------ the file


def read_text_file(path: str, limit: int = MAX_FILE_BYTES) -> str:
    """A queries file's text: a regular file of at most `limit` bytes in UTF-8."""
    return read_text(path, "queries file", limit)


def load_queries(path: str) -> QueriesFile:
    """Read and check the queries file at `path`."""
    return parse_queries(read_text_file(path), path)
