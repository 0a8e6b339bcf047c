"""The YAML configuration: targets and daemon settings, validated by pydantic.

Every validation error is reported with the file, the line and the YAML path of the
offending key (``dbgauge.yaml:12: targets[1].dsn: ...``) so an operator can fix it
without guessing. Passwords come from env vars or files, never from the YAML itself
(an inline DSN password is accepted but discouraged).

What only the layers above know (collector names per kind, which checks can be
scheduled) comes in a `Catalog` that the composition root (`dbgauge.app`) passes to
`parse_config`; the config module imports neither `collectors/` nor `checks/`. Targets
leave this module as `toolkit.targets.Target`, the one type the rest of dbgauge uses.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from dbgauge.toolkit import DEFAULT_HEARTBEAT_TABLE, ENV_CONFIG, yamltree
from dbgauge.toolkit.dsn import is_pt_dsn, parse_dsn, pt_as_mysql
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.files import read_text
from dbgauge.toolkit.targets import (
    KINDS,
    NAME_PATTERN,
    TABLE_PATTERN,
    Heartbeat,
    Target,
    TargetKind,
)
from dbgauge.toolkit.units import MAX_INTERVAL, MAX_TIMEOUT, at_most, parse_duration
from dbgauge.toolkit.yamltree import format_loc as _format_loc

DEFAULT_LISTEN = "127.0.0.1:9860"
RESERVED_LABELS = frozenset({"target", "collector", "job", "dbgauge_job", "instance"})
# Timeouts (and other waits) up to a day, job intervals up to a month: anything longer is
# a typo that would otherwise pass `config check` and break every scrape.
Duration = Annotated[float, BeforeValidator(parse_duration), Field(gt=0),
                     AfterValidator(at_most(MAX_TIMEOUT))]
DurationOrZero = Annotated[float, BeforeValidator(parse_duration), Field(ge=0),
                           AfterValidator(at_most(MAX_TIMEOUT))]
Interval = Annotated[float, BeforeValidator(parse_duration), Field(gt=0),
                     AfterValidator(at_most(MAX_INTERVAL))]
MAX_CONFIG_BYTES = 1 << 20  # a config (or web config) file larger than 1 MiB is a mistake


@dataclass(frozen=True)
class Catalog:
    """What the config is checked against that the core does not know itself."""

    collectors: Callable[[str], frozenset[str]]  # kind -> collector names
    # (collector name, options) -> raises ValueError naming a bad option or value.
    collector_options: Callable[[str, Mapping[str, object]], None]
    # (check, warning, critical, options) -> raises ValueError when a `checks:` entry
    # names an unknown check, or gives thresholds or options it cannot mean.
    check_job: Callable[[str, float | str | None, float | str | None,
                         Mapping[str, object]], None]
    # dialect name -> the target kind it speaks for (`compat:`)
    dialects: Callable[[], Mapping[str, str]] = dict


def _catalog(info: ValidationInfo) -> Catalog:
    catalog = info.context.get("catalog") if isinstance(info.context, dict) else None
    if not isinstance(catalog, Catalog):
        raise RuntimeError("parse_config needs the catalog from dbgauge.app")
    return catalog


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class HeartbeatConfig(_Model):
    """pt-heartbeat-compatible lag measurement (MySQL family).

    `write`: the daemon updates this server's row every `interval`, unless the server is
    read-only (`allow_read_only` writes there anyway); `read`: the heartbeat collector
    reads the source's row and exposes the lag.
    """

    mode: Literal["write", "read"]
    interval: Duration = 1.0
    table: str = Field(default=DEFAULT_HEARTBEAT_TABLE, pattern=TABLE_PATTERN)
    source_server_id: int | None = Field(default=None, ge=1, le=2**32 - 1)
    allow_read_only: bool = False

    def heartbeat(self) -> Heartbeat:
        return Heartbeat(self.mode, self.interval, self.table, self.source_server_id,
                         self.allow_read_only)


class TargetConfig(_Model):
    """One database endpoint the daemon scrapes."""

    name: str = Field(pattern=NAME_PATTERN)
    kind: TargetKind
    dsn: str
    password_env: str | None = None
    password_file: Path | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    collectors: list[str] | None = None
    # collector name -> {option: value}; merged over daemon.collector_options.
    collector_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    connect_timeout: Duration = 5.0
    query_timeout: Duration = 5.0
    lock_timeout: Duration = 2.0
    heartbeat: HeartbeatConfig | None = None
    # Peer exporters' names to speak for this target; None: daemon.compat's of this kind.
    compat: list[str] | None = None
    # Peer families (names, or `prefix_*`) this target does not serve: what a peer's
    # --disable-default-metrics leaves out of collectors that also give what it keeps.
    compat_exclude: list[str] = Field(default_factory=list, max_length=100)

    @field_validator("dsn")
    @classmethod
    def _dsn_parses(cls, value: str) -> str:
        try:
            parse_dsn(value)
            return pt_as_mysql(value) if is_pt_dsn(value) else value  # one spelling
        except ConfigError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("compat_exclude")
    @classmethod
    def _family_patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            if not re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]{0,200}\*?", pattern):
                raise ValueError(f"compat_exclude: {pattern[:60]!r} is not a metric name, "
                                 "or a prefix ending in * (pg_stat_archiver_*)")
        return value

    @field_validator("labels")
    @classmethod
    def _label_names(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", key) or key.startswith("__"):
                raise ValueError(f"{key!r} is not a valid Prometheus label name")
            if key in RESERVED_LABELS:
                raise ValueError(f"label {key!r} is reserved by dbgauge")
        return value

    @model_validator(mode="after")
    def _checks(self, info: ValidationInfo) -> TargetConfig:
        params = parse_dsn(self.dsn)
        expected = "mysql" if self.kind == "mysql" else "postgres"
        if params.family != expected:
            scheme = "mysql://" if expected == "mysql" else "postgresql://"
            raise ValueError(f"kind {self.kind!r} needs a {scheme} DSN")
        if self.heartbeat is not None and self.kind != "mysql":
            raise ValueError("heartbeat is supported on kind mysql only")
        if self.password_env and self.password_file:
            raise ValueError("set password_env or password_file, not both")
        if self.collectors is not None:
            known = _catalog(info).collectors(self.kind)
            unknown = [c for c in self.collectors if c not in known]
            if unknown:
                raise ValueError(
                    f"unknown collector(s) {', '.join(unknown)} for kind {self.kind}; "
                    f"available: {', '.join(sorted(known))}"
                )
        _check_collector_options(self.collector_options, info,
                                 _catalog(info).collectors(self.kind), f"kind {self.kind}")
        if self.compat is not None:
            check_compat(self.compat, _catalog(info).dialects(), self.kind)
        return self

    def target(self, defaults: Mapping[str, Mapping[str, Any]] | None = None,
               compat: Sequence[str] = (), compat_only: bool = False) -> Target:
        """This entry as the Target the rest of dbgauge uses; `defaults` are the daemon's
        collector options, which this target's own override key by key, and `compat` the
        daemon's dialects, which this target's own list replaces."""
        options = {name: dict(opts) for name, opts in (defaults or {}).items()}
        for name, opts in self.collector_options.items():
            options[name] = {**options.get(name, {}), **opts}
        return Target(
            name=self.name, kind=self.kind, dsn=self.dsn, password_env=self.password_env,
            password_file=self.password_file, labels=dict(self.labels),
            collectors=None if self.collectors is None else tuple(self.collectors),
            collector_options=options,
            connect_timeout=self.connect_timeout, query_timeout=self.query_timeout,
            lock_timeout=self.lock_timeout,
            heartbeat=None if self.heartbeat is None else self.heartbeat.heartbeat(),
            compat=tuple(compat if self.compat is None else self.compat),
            compat_only=compat_only, compat_exclude=tuple(self.compat_exclude))


def check_compat(names: Sequence[str], dialects: Mapping[str, str],
                 kind: str | None = None) -> None:
    """ValueError unless every name is a dialect (of `kind`, when given)."""
    for name in names:
        if name not in dialects:
            raise ValueError(f"compat: unknown exporter {name!r}; dbgauge speaks "
                             f"{', '.join(sorted(dialects))}")
        if kind is not None and dialects[name] != kind:
            raise ValueError(f"compat: {name} speaks for kind {dialects[name]} targets, "
                             f"not {kind}")


def _check_collector_options(given: Mapping[str, Mapping[str, Any]], info: ValidationInfo,
                             known: frozenset[str], where: str) -> None:
    catalog = _catalog(info)
    for name, options in given.items():
        if name not in known:
            raise ValueError(f"collector_options: unknown collector {name!r} for {where}; "
                             f"available: {', '.join(sorted(known))}")
        catalog.collector_options(name, options)


class DaemonConfig(_Model):
    """Settings of `dbgauge serve`."""

    listen: str = DEFAULT_LISTEN
    scrape_timeout: Duration = 10.0
    scrape_timeout_offset: DurationOrZero = 0.5
    # Requests answered at once (worker threads); more wait for a free worker. Connections
    # still sending their request headers hold no worker, only a socket.
    max_requests: int = Field(default=32, ge=1, le=1024)
    # Time a client gets to send a whole request's headers (TLS handshake included).
    header_timeout: Duration = 10.0
    # The status page (/, /status.json) reads the targets at most once per this interval,
    # however many views it gets; the page reloads itself as often.
    status_refresh: Duration = 10.0
    log_format: Literal["text", "json"] = "text"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # TLS and basic auth, in the Prometheus exporter-toolkit web-config format
    # (toolkit/exporter/webconfig.py); `serve --web.config.file` overrides it.
    web_config_file: Path | None = None
    # collector name -> {option: value}: defaults for every target (a target's own win).
    collector_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # Peer exporters whose metric names every target of their kind also speaks
    # (mysqld_exporter, postgres_exporter, pgbouncer_exporter); `serve --compat` overrides.
    compat: list[str] = Field(default_factory=list)
    # Only the peers' names: a target speaking a dialect runs the peer's default collectors
    # (unless it lists its own) and serves the peer's families for what the dialect
    # translates, not dbgauge's (`serve --compat-only`).
    compat_only: bool = False

    @model_validator(mode="after")
    def _options(self, info: ValidationInfo) -> DaemonConfig:
        if not self.collector_options and not self.compat:
            return self  # also built without a context, as the default daemon section
        catalog = _catalog(info)
        check_compat(self.compat, catalog.dialects())
        known = frozenset().union(*(catalog.collectors(k) for k in KINDS))
        _check_collector_options(self.collector_options, info, known, "any kind")
        return self

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str) -> str:
        parse_listen(value)
        return value


CheckOptionValue = StrictBool | StrictStr | StrictInt | StrictFloat | list[StrictStr]


class CheckJobConfig(_Model):
    """A health check the daemon runs on a schedule (`dbgauge check NAME` semantics)."""

    check: str
    targets: list[str] | None = None  # default: every target the check applies to
    interval: Interval = 60.0
    warning: float | str | None = None  # a monitoring-plugin range: 10, 10:, ~:10, @10:20
    critical: float | str | None = None
    # A target that is down: CRITICAL (as check_postgres, check_pgsql, check_mysql), or
    # UNKNOWN (`dbgauge check --unreachable-state unknown`).
    unreachable_state: Literal["critical", "unknown"] = "critical"
    # A node without a result by then (a server that stops answering mid-check) is UNKNOWN
    # and named, the others' results kept (`dbgauge check -t`): a job never hangs.
    timeout: Duration = 10.0
    # The command's other options by long name without dashes ({include: [orders],
    # stat: maxwait, query: "SELECT ..."}), meaning what they mean on its command line.
    options: dict[str, CheckOptionValue] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_check(self, info: ValidationInfo) -> CheckJobConfig:
        _catalog(info).check_job(self.check, self.warning, self.critical, self.options)
        return self


class ChecksumJobConfig(_Model):
    """A drift check the daemon runs on a schedule (`dbgauge checksum` semantics)."""

    source: str
    replicas: list[str] = Field(min_length=1)
    tables: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)
    method: Literal["replicated", "direct"] | None = None
    interval: Interval = 3600.0
    chunk_time: Duration = 0.5
    whole_table_time: DurationOrZero = 2.0  # MariaDB: CHECKSUM TABLE pre-check; 0: off
    max_lag: Duration = 1.0
    # How long a side may stop answering, or a replica lag past max_lag, before the run
    # ends with an error (`dbgauge checksum --max-wait`): a job never hangs.
    max_wait: Duration = 600.0
    allow_read_only: bool = False  # replicated: write on a read_only source anyway
    different_databases: bool = False  # PostgreSQL sides on differently named databases


class Config(_Model):
    """A whole configuration file."""

    daemon: DaemonConfig = Field(default_factory=DaemonConfig)
    targets: list[TargetConfig] = Field(min_length=1)
    checks: list[CheckJobConfig] = Field(default_factory=list)
    checksums: list[ChecksumJobConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _jobs_name_targets(self) -> Config:
        names = {t.name for t in self.targets}
        for job in self.checks:
            for name in job.targets or []:
                if name not in names:
                    raise ValueError(f"check {job.check!r} names unknown target {name!r}")
        for cs in self.checksums:
            for name in [cs.source, *cs.replicas]:
                if name not in names:
                    raise ValueError(f"checksum job names unknown target {name!r}")
        return self

    @field_validator("targets")
    @classmethod
    def _unique_names(cls, value: list[TargetConfig]) -> list[TargetConfig]:
        seen: set[str] = set()
        for target in value:
            if target.name in seen:
                raise ValueError(f"target name {target.name!r} is used twice")
            seen.add(target.name)
        return value

    def target(self, name: str) -> Target:
        """The configured target `name`, or a ConfigError listing the configured ones."""
        for target in self.targets:
            if target.name == name:
                return target.target(self.daemon.collector_options, self.daemon.compat,
                                     self.daemon.compat_only)
        names = ", ".join(t.name for t in self.targets)
        raise ConfigError(f"no target named {name!r}; configured: {names}")

    def all_targets(self) -> tuple[Target, ...]:
        """Every configured target, in config order."""
        return tuple(t.target(self.daemon.collector_options, self.daemon.compat,
                              self.daemon.compat_only) for t in self.targets)

    def with_compat(self, names: Sequence[str] | None, only: bool = False) -> Config:
        """This config with daemon.compat replaced by `names` (`--compat` on the command
        line; None keeps the config's) and compat_only set when `only` (`--compat-only`);
        the names were checked by the caller."""
        update: dict[str, Any] = {"compat_only": True} if only else {}
        if names is not None:
            update["compat"] = list(names)
        if only and not (names if names is not None else self.daemon.compat) \
                and not any(t.compat for t in self.targets):
            raise ConfigError("--compat-only serves the peer exporters' names alone, and no "
                              "target speaks one: add --compat NAME (mysqld_exporter, "
                              "postgres_exporter, pgbouncer_exporter)")
        daemon = self.daemon.model_copy(update=update)
        return self.model_copy(update={"daemon": daemon})


def parse_listen(value: str) -> tuple[str, int]:
    """'HOST:PORT', ':PORT' or '[v6]:PORT' -> (host, port)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:9860 or :9860)")
    return host.strip("[]") or "0.0.0.0", int(port)


def _line_of(node: yaml.Node | None, loc: Sequence[int | str]) -> int | None:
    """1-based line of the deepest YAML node that `loc` reaches."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if node is None:
            break
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                    child = value
                    line = key.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) \
                and 0 <= part < len(node.value):
            child = node.value[part]
            line = child.start_mark.line + 1
        node = child
    return line


def parse_config(text: str, catalog: Catalog, source: str = "<config>") -> Config:
    """Validate YAML text; raise ConfigError naming source:line and the YAML path."""
    return parse_yaml_model(Config, text, source,
                            "the top level must be a mapping with a 'targets' list",
                            context={"catalog": catalog})


_M = TypeVar("_M", bound=BaseModel)


def parse_yaml_model(model: type[_M], text: str, source: str, not_a_mapping: str,
                     *, empty: dict[str, Any] | None = None,
                     context: dict[str, Any] | None = None) -> _M:
    """Validate YAML text against `model` with file:line and YAML-path errors.

    Shared by the main config and the web config so both report problems the same way;
    `empty` is what an empty document means (None: an empty document is an error).
    """
    try:
        tree = yamltree.compose(text, source)  # bounded: no alias bombs, no huge numbers
        data = yamltree.construct(tree)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise ConfigError(
            f"invalid YAML: {exc.problem}", source=source,
            line=mark.line + 1 if mark is not None else None,
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", source=source) from None
    except RecursionError:
        raise ConfigError("invalid YAML: nested too deeply", source=source) from None
    except ValueError as exc:  # a date like 2024-02-30 (long numbers were refused above)
        raise ConfigError(f"invalid YAML: a value cannot be read ({exc})",
                          source=source) from None
    if data is None and empty is not None:
        data = empty
    if not isinstance(data, dict):
        raise ConfigError(not_a_mapping, source=source)
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        # A misspelt key also shows up as a missing one: name the misspelling first.
        errors.sort(key=lambda e: e["type"] != "extra_forbidden")
        lines = [_describe(err, source, tree) for err in errors[:10]]
        if len(errors) > 10:
            lines.append(f"... and {len(errors) - 10} more errors")
        first = errors[0]
        loc = _loc(first)
        raise ConfigError(
            _message(first) + "".join(f"\n{line}" for line in lines[1:]),
            source=source, path=_format_loc(loc) or None, line=_line_of(tree, loc),
        ) from None


def _loc(err: Any) -> list[int | str]:
    # Drop pydantic's synthetic steps (e.g. 'function-after[...]').
    return [p for p in err["loc"] if not (isinstance(p, str) and "[" in p)]


def _message(err: Any) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown key (check the spelling; see the config example in the README)"
    if err["type"] == "missing":
        return "required key is missing"
    return str(err["msg"]).removeprefix("Value error, ")


def _describe(err: Any, source: str, tree: yaml.Node | None) -> str:
    loc = _loc(err)
    line = _line_of(tree, loc)
    where = source if line is None else f"{source}:{line}"
    return f"{where}: {_format_loc(loc)}: {_message(err)}"


def load_config(path: str | os.PathLike[str] | None, catalog: Catalog) -> Config:
    """Load the file at `path` or $DBGAUGE_CONFIG."""
    if path is None:
        path = os.environ.get(ENV_CONFIG)
        if not path:
            raise ConfigError(f"no config given: pass --config FILE or set {ENV_CONFIG}")
    file = Path(path)
    return parse_config(read_config_file(file, "config"), catalog, source=str(file))


def read_config_file(file: Path, what: str) -> str:
    """The text of a config file (config, web config, my.cnf): a regular file of at most
    MAX_CONFIG_BYTES in UTF-8 (toolkit.files)."""
    return read_text(file, what, MAX_CONFIG_BYTES)
