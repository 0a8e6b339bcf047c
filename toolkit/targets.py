"""Targets: the one description of a server dbgauge talks to, how a command line names
one, and how work fans out over several.

A `Target` comes from the YAML config (`toolkit.config`) or from a DSN on the command line
(`target_from_dsn`); `resolve` takes either spelling ("a DSN or a configured name"), so
every command accepts the same things. A plain frozen dataclass: a one-shot command given
DSNs never loads the config machinery (pydantic, YAML).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Literal, TypeVar, get_args
from urllib.parse import quote

from dbgauge.toolkit import DEFAULT_HEARTBEAT_TABLE
from dbgauge.toolkit.dsn import (
    ConnParams,
    is_dsn,
    is_libpq_keyword,
    is_pt_dsn,
    looks_like_conninfo,
    parse_dsn,
    pt_as_mysql,
    resolve_password,
)
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.redact import redact_dsn

if TYPE_CHECKING:
    from concurrent.futures import Future
    from queue import SimpleQueue

# The kinds of server dbgauge talks to, in the order listings show them: the config's
# `kind:`, the collectors' `kind`, every check's kinds are these.
TargetKind = Literal["mysql", "postgres", "pgbouncer"]
KINDS: tuple[TargetKind, ...] = get_args(TargetKind)
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,62}$"
TABLE_PATTERN = r"^[A-Za-z0-9_$]{1,63}\.[A-Za-z0-9_$]{1,63}$"
_NAMED_DSN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.:-]{0,62})=(?P<dsn>.*)$", re.DOTALL)


@dataclass(frozen=True)
class Heartbeat:
    """pt-heartbeat-compatible lag measurement on a MySQL-family target: `write` keeps this
    server's row fresh every `interval`; `read` measures the source's row."""

    mode: str  # write | read
    interval: float = 1.0
    table: str = DEFAULT_HEARTBEAT_TABLE
    source_server_id: int | None = None
    # write even while the server is read_only (toolkit.write_guard); never by default
    allow_read_only: bool = False


@dataclass(frozen=True)
class Target:
    """One server: where it is, what it is, how long to wait for it, how to label it."""

    name: str
    kind: str  # one of KINDS
    dsn: str
    password_env: str | None = None
    password_file: Path | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    collectors: tuple[str, ...] | None = None  # None: the kind's default collectors
    # Per collector, its settings (top-N limits, files): checked when the config loaded.
    collector_options: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    connect_timeout: float = 5.0
    query_timeout: float = 5.0
    lock_timeout: float = 2.0
    heartbeat: Heartbeat | None = None
    # Peer exporters whose names this target's scrape also speaks (`--compat`); a dialect
    # of another kind is ignored here.
    compat: tuple[str, ...] = ()
    # Only the peers' names for what a dialect of this target translates (`--compat-only`).
    compat_only: bool = False
    # Peer families not served here (names, or prefixes ending in *).
    compat_exclude: tuple[str, ...] = ()

    def excludes_family(self, name: str) -> bool:
        """Whether the peer family `name` is left out here (`compat_exclude`)."""
        return any(name.startswith(p[:-1]) if p.endswith("*") else name == p
                   for p in self.compat_exclude)

    @property
    def reads_heartbeat(self) -> bool:
        """Whether lag is read from a heartbeat table here (`heartbeat: {mode: read}`)."""
        return self.heartbeat is not None and self.heartbeat.mode == "read"

    def connection_params(self) -> ConnParams:
        """The DSN's parameters with the password resolved (env, file, else the DSN's own).

        Read at connect time, so a rotated secret file is picked up on reconnect.
        """
        return resolve_password(parse_dsn(self.dsn), f"target {self.name}", self.password_env,
                                self.password_file)


@dataclass(frozen=True)
class Selection:
    """The targets one command works on. `named` are those the user named (on the command
    line, or with --target): a check that cannot apply to one of them says so as UNKNOWN,
    while configured targets it was not asked about are simply left out."""

    targets: tuple[Target, ...]
    named: frozenset[str] = frozenset()

    def of_kinds(self, kinds: Collection[str]) -> tuple[tuple[Target, ...], tuple[Target, ...]]:
        """(targets of these kinds, named targets of other kinds)."""
        fit = tuple(t for t in self.targets if t.kind in kinds)
        misfit = tuple(t for t in self.targets if t.kind not in kinds and t.name in self.named)
        return fit, misfit


def dsn_name(params: ConnParams) -> str:
    """A target name for a DSN given without one: its address, e.g. 'db2:3306'."""
    name = "".join(ch if ch.isalnum() or ch in "_.:-" else "_" for ch in params.address)
    return name[-63:].strip("_.:-") or "dsn"


def split_named(spec: str) -> tuple[str | None, str]:
    """'NAME=DSN' -> (NAME, DSN); a bare DSN -> (None, DSN). A libpq key=value DSN
    starts with a keyword and '=' too: a NAME is never a libpq keyword (host, service)."""
    m = _NAMED_DSN.match(spec)
    if m is None:
        return None, spec
    rest = m.group("dsn")
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", rest) or (looks_like_conninfo(rest)
                                          and not is_libpq_keyword(m.group("name"))):
        return m.group("name"), rest
    return None, spec


def with_defaults_file(dsn: str, defaults_file: str | None, group: str | None = None) -> str:
    """A mysql:// DSN reading `defaults_file` (--defaults-file) and the option group
    `group` (--defaults-group) unless it names its own; other DSNs unchanged."""
    if dsn.split("://", 1)[0].lower() not in ("mysql", "mariadb"):
        return dsn
    for key, value in (("read_default_file", defaults_file), ("read_default_group", group)):
        if value is not None and f"{key}=" not in dsn:
            dsn = f"{dsn}{'&' if '?' in dsn else '?'}{key}={quote(value, safe='/')}"
    return dsn


def target_from_dsn(spec: str, *, password_file: Path | None = None,
                    password_env: str | None = None,
                    heartbeat_table: str | None = None,
                    defaults_file: str | None = None,
                    heartbeat_source: int | None = None,
                    defaults_group: str | None = None) -> Target:
    """'[NAME=]DSN' from the command line -> Target (named by its address without NAME).

    The kind follows the scheme (a postgresql:// DSN to the database `pgbouncer` is
    PgBouncer's admin console). A password in the DSN wins; --password-file and
    --password-env are for DSNs that carry none. `heartbeat_table` makes a MySQL-family
    target read lag from that table (the row of server_id `heartbeat_source` when given,
    pt-heartbeat's --master-server-id).
    """
    if password_file is not None and password_env is not None:
        raise ConfigError(f"--node {redact_dsn(spec)}: set password_env or password_file, not both")
    name, dsn = split_named(spec)
    if is_pt_dsn(dsn):  # one spelling downstream: the mysql:// DSN it means
        dsn = pt_as_mysql(dsn)
    dsn = with_defaults_file(dsn, defaults_file, defaults_group)
    params = parse_dsn(dsn)
    heartbeat = None
    if heartbeat_table is not None and params.kind == "mysql":
        if not re.fullmatch(TABLE_PATTERN, heartbeat_table):
            raise ConfigError(f"heartbeat table {heartbeat_table!r}: write it as schema.table "
                              "(letters, digits, _ or $)")
        heartbeat = Heartbeat("read", table=heartbeat_table, source_server_id=heartbeat_source)
    own = params.password is not None
    return Target(name=name or dsn_name(params), kind=params.kind, dsn=dsn,
                  password_env=None if own else password_env,
                  password_file=None if own else password_file,
                  heartbeat=heartbeat)


def resolve(arg: str, configured: Mapping[str, Target] | None, *,
            password_file: Path | None = None, password_env: str | None = None,
            heartbeat_table: str | None = None) -> Target:
    """A command-line server: '[NAME=]DSN', or the name of a configured target."""
    if is_dsn(arg):
        return target_from_dsn(arg, password_file=password_file, password_env=password_env,
                               heartbeat_table=heartbeat_table)
    if configured is None:
        raise ConfigError(f"{redact_dsn(arg)!r} is neither a DSN (mysql://..., postgresql://..., "
                          "host=... dbname=...) "
                          "nor a target name: pass --config FILE to use target names")
    if arg not in configured:
        raise ConfigError(f"no target named {arg!r}; configured: {', '.join(configured)}")
    return configured[arg]


def split_names(values: Sequence[str]) -> list[str]:
    """'a,b' and repeated options -> ['a', 'b'] (target names, tables, patterns)."""
    return [n.strip() for item in values for n in item.split(",") if n.strip()]


def needs_config(names: Sequence[str], dsns: Sequence[str]) -> bool:
    """Whether `select` needs the configured targets: when --target names some, or when
    no --node is given."""
    return bool(split_names(names)) or not dsns


def select(names: Sequence[str], dsns: Sequence[str],
           configured: Sequence[Target] | None, *, password_file: Path | None = None,
           password_env: str | None = None, heartbeat_table: str | None = None,
           defaults_file: str | None = None, heartbeat_source: int | None = None,
           defaults_group: str | None = None) -> Selection:
    """The servers of a command line: the --target names among `configured` (every
    configured target when none is named), then the --node DSNs. Named ones (DSNs and
    --target names) are the Selection's `named`. With `defaults_file` (--defaults-file)
    (or `defaults_group`, --defaults-group) and nothing else, the one MySQL server the
    option files describe."""
    wanted = split_names(names)
    if (defaults_file or defaults_group) is not None and not dsns and not wanted \
            and configured is None:
        dsns = ["mysql://"]
    nodes = [target_from_dsn(d, password_file=password_file, password_env=password_env,
                             heartbeat_table=heartbeat_table, defaults_file=defaults_file,
                             heartbeat_source=heartbeat_source, defaults_group=defaults_group)
             for d in dsns]
    named = {n.name for n in nodes} | set(wanted)
    if wanted or not nodes:
        if configured is None:
            raise ConfigError("nothing to check: give --node DSN (repeatable) or --config FILE"
                              " (or set DBGAUGE_CONFIG)")
        by_name = {t.name: t for t in configured}
        chosen = [resolve(n, by_name) for n in wanted] if wanted else list(configured)
        nodes = chosen + nodes
    twice = sorted(name for name, n in Counter(n.name for n in nodes).items() if n > 1)
    if twice:
        raise ConfigError(f"two nodes are named {twice[0]!r}: name them as NAME=DSN")
    return Selection(tuple(nodes), frozenset(named))


def unique_names(targets: Sequence[Target]) -> list[str]:
    """The targets' names, a repeated one suffixed #2, #3... (the same DSN given twice)."""
    names: list[str] = []
    for target in targets:
        name, n = target.name, 2
        while name in names:
            name = f"{target.name}#{n}"
            n += 1
        names.append(name)
    return names


# ------------------------------------------------------------------------ fan-out

_T = TypeVar("_T")
_R = TypeVar("_R")


class Unfinished(Exception):
    """In a fan-out's results: the item's work had not finished by the deadline."""


@dataclass(frozen=True)
class Deadline:
    """When a fan-out stops waiting for its items (`at`, monotonic), and how to name it to
    the user (`said`, e.g. "3 s (-t/--timeout)"): the items that finished keep their
    results, the others are `Unfinished`."""

    at: float
    said: str

    @classmethod
    def within(cls, seconds: float, said: str) -> Deadline:
        return cls(time.monotonic() + seconds, said)

    def left(self) -> float:
        """Seconds until the deadline (0 once it passed)."""
        return max(0.0, self.at - time.monotonic())

    def part(self, fraction: float) -> Deadline:
        """A deadline `fraction` of the time left from now: one round of several, so a
        node that hangs in it leaves the later rounds their time."""
        return Deadline(min(self.at, time.monotonic() + fraction * self.left()), self.said)


class FanOut(Generic[_T, _R]):
    """Run one call per item on a bounded pool of threads, results in item order.

    Servers answer in parallel, so checks, checksums, the scraper and the pgTAP runner
    all spread their per-server work this way. An exception is returned in its item's
    place (one bad server cannot hide the others); an item still running at `deadline`
    is an `Unfinished` there. Use as a context manager, or call `close()`.
    """

    def __init__(self, max_workers: int, name: str) -> None:
        # Imported here: commands that never fan out (an offline validation) start faster.
        from concurrent.futures import ThreadPoolExecutor

        self._pool = ThreadPoolExecutor(max_workers=max(1, max_workers),
                                        thread_name_prefix=name)

    def map(self, items: Sequence[_T], work: Callable[[_T], _R], *,
            deadline_in: float | None = None,
            on_done: Callable[[int, _R | Exception], None] | None = None,
            ) -> list[_R | Exception]:
        """`work` on every item; `on_done(index, outcome)` as each finishes (in the calling
        thread); wait at most `deadline_in` seconds, then cancel what has not started."""
        import functools
        import queue

        finished: queue.SimpleQueue[int] = queue.SimpleQueue()
        end = None if deadline_in is None else time.monotonic() + deadline_in
        futures: list[Future[_R]] = []
        for i, item in enumerate(items):
            future = self._pool.submit(work, item)
            # Each future says when it is done: one queue, where waiting on every pending
            # future at each turn (concurrent.futures.wait) costs O(n) per finished item,
            # seconds of CPU at a deadline when thousands finish at once.
            future.add_done_callback(functools.partial(_put, finished, i))
            futures.append(future)
        outcomes: list[_R | Exception] = [Unfinished("not finished")] * len(futures)
        left = len(futures)
        while left:
            try:
                i = finished.get(timeout=None if end is None
                                 else max(0.0, end - time.monotonic()))
            except queue.Empty:  # the deadline passed
                for future in futures:
                    future.cancel()
                break
            left -= 1
            outcomes[i] = _outcome(futures[i])
            if on_done is not None:
                on_done(i, outcomes[i])
        return outcomes

    def submit(self, call: Callable[[], _R]) -> Future[_R]:
        """One call in the background (e.g. a pre-flight beside the main work)."""
        return self._pool.submit(call)

    def close(self) -> None:
        """Let running calls finish in the background; start no new ones."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> FanOut[_T, _R]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _put(finished: SimpleQueue[int], index: int, _future: object) -> None:
    finished.put(index)


def _outcome(future: Future[_R]) -> _R | Exception:
    if future.cancelled():  # the pool was shut down before the call started
        return Unfinished("cancelled")
    exc = future.exception()
    if exc is None:
        return future.result()
    if isinstance(exc, Exception):
        return exc
    raise exc  # KeyboardInterrupt, SystemExit: not an item's outcome


def fan_out(items: Sequence[_T], work: Callable[[_T], _R], *, max_workers: int = 8,
            name: str = "fanout", deadline: Deadline | None = None) -> list[_R | Exception]:
    """`work` on every item in threads (at most `max_workers` at once), results in order,
    an exception in its item's place; with a `deadline`, an item not finished by then is
    `Unfinished` and its thread is left to end on its own (a call blocked on a frozen
    server cannot be interrupted: the caller must not wait for it at exit either)."""
    if not items:
        return []
    if deadline is None:
        with FanOut[_T, _R](min(max_workers, len(items)), name) as pool:
            return pool.map(items, work)
    pool = FanOut[_T, _R](min(max_workers, len(items)), name)
    outcomes: list[_R | Exception] = []
    try:
        outcomes = pool.map(items, work, deadline_in=deadline.left())
    finally:
        if any(isinstance(o, Unfinished) for o in outcomes) or not outcomes:
            pool.close()
        else:
            pool.__exit__()  # every call ended: join the idle threads
    return outcomes
