"""The peer exporters (Debian's mysqld_exporter 0.14, postgres_exporter 0.11, pgbouncer
exporter 1.7), run beside dbgauge on the sandbox, and a comparison of their families with
dbgauge's `--compat` output.

A family matches when dbgauge has it with the peer's type and label names, every series
the peer has (by label values), and each value between two readings of the peer taken
around dbgauge's (counters and gauges move between scrapes).
"""

from __future__ import annotations

import os
import re
import subprocess
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.helpers import free_port, wait_for
from tests.helpers.servers import Sandbox

MYSQLD_EXPORTER = "/usr/bin/prometheus-mysqld-exporter"
POSTGRES_EXPORTER = "/usr/bin/prometheus-postgres-exporter"
PGBOUNCER_EXPORTER = "/usr/bin/prometheus-pgbouncer-exporter"

LabelSet = frozenset[tuple[str, str]]

# The peers' default families dbgauge does not produce, and why (the per-dialect
# comparisons and --compat-only's test read them).
MYSQLD_NOT_PRODUCED: Mapping[str, str] = {
    "mysqld_exporter_build_info": "the peer's own build (version 0.14.0, its Go version): "
                                  "dbgauge_build_info says what runs",
}
POSTGRES_NOT_PRODUCED: Mapping[str, str] = {
    "postgres_exporter_build_info": "the peer's own version and Go build; dbgauge_build_info "
                                    "says dbgauge's",
    # pg_settings shows a session's value. dbgauge's session sets these three (the
    # server-side timeouts that bound every statement it runs), so its own session cannot
    # read the server's; it reports none rather than its own. The peer's session sets
    # none, so it shows the server's.
    "pg_settings_statement_timeout_seconds": "set by dbgauge's own session",
    "pg_settings_lock_timeout_seconds": "set by dbgauge's own session",
    "pg_settings_idle_in_transaction_session_timeout_seconds": "set by dbgauge's own session",
}

_SAMPLE = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \S+)?")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


@dataclass
class Family:
    """One family as written: its TYPE (untyped when none), samples by (name, labels)."""

    name: str
    type: str = "untyped"
    samples: dict[tuple[str, LabelSet], float] = field(default_factory=dict)

    def label_names(self) -> frozenset[frozenset[str]]:
        return frozenset(frozenset(k for k, _ in labels) for _, labels in self.samples)


def parse(text: str, drop_labels: Iterable[str] = ()) -> dict[str, Family]:
    """Exposition text -> families by name, names kept exactly as written (a histogram's
    `_bucket`/`_sum`/`_count` samples belong to its family); `drop_labels` are removed."""
    drop = frozenset(drop_labels)
    families: dict[str, Family] = {}
    types: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, type_ = line.split(maxsplit=3)
            types[name] = type_
            continue
        m = _SAMPLE.fullmatch(line)
        if not m:
            continue
        sample = m.group(1)
        family = sample
        for suffix in ("_bucket", "_sum", "_count"):
            base = sample.removesuffix(suffix)
            if base != sample and types.get(base) in ("histogram", "summary"):
                family = base
        labels = frozenset((k, v) for k, v in _LABEL.findall(m.group(2) or "") if k not in drop)
        entry = families.setdefault(family, Family(family, types.get(family, "untyped")))
        entry.samples[(sample, labels)] = float(m.group(3))
    return families


def get(port: int, path: str = "/metrics") -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as resp:
        body: bytes = resp.read()
    return body.decode()


@dataclass
class Peer:
    """A running peer exporter on `port`."""

    proc: subprocess.Popen[bytes]
    port: int
    path: str = "/metrics"

    def scrape(self) -> str:
        assert self.proc.poll() is None, self.stderr()
        return get(self.port, self.path)

    def stderr(self) -> str:
        return self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""


@contextmanager
def peer(argv: Sequence[str], env: Mapping[str, str] | None = None, *, ready: str,
         path: str = "/metrics") -> Iterator[Peer]:
    """Start a peer exporter (`argv` gets `--web.listen-address` unless it holds a
    `{port}` placeholder) and wait until a scrape shows the family `ready`."""
    port = free_port()
    args = [a.replace("{port}", str(port)) for a in argv]
    if not any("{port}" in a for a in argv):
        args.append(f"--web.listen-address=127.0.0.1:{port}")
    proc = subprocess.Popen(args, env={**os.environ, **(env or {})},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    running = Peer(proc, port, path)

    def answered() -> bool:
        assert proc.poll() is None, f"{args[0]} exited: {running.stderr()}"
        try:
            return ready in running.scrape()
        except OSError:
            return False

    try:
        wait_for(answered, timeout=30, what=f"{args[0]} to serve {ready}")
        yield running
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def monitoring_dsn(sandbox: Sandbox, name: str, database: str = "app") -> str:
    """The libpq URI of the monitoring user `dbgauge` on a PostgreSQL-protocol instance
    (what dbgauge itself scrapes as)."""
    password = quote(sandbox.state.dbgauge_password, safe="")
    return (f"postgresql://dbgauge:{password}@127.0.0.1:{sandbox.state.port(name)}/"
            f"{database}?sslmode=disable")


def my_cnf(sandbox: Sandbox, name: str, path: Path) -> Path:
    """A [client] file for the monitoring user `dbgauge` on a MariaDB instance."""
    path.write_text(f"[client]\nuser=dbgauge\npassword={sandbox.state.dbgauge_password}\n"
                    f"host=127.0.0.1\nport={sandbox.state.port(name)}\n")
    path.chmod(0o600)
    return path


def mysqld_exporter(sandbox: Sandbox, name: str, tmp: Path,
                    flags: Sequence[str] = ()) -> Iterator[Peer]:
    """mysqld_exporter 0.14 on instance `name` as `dbgauge`, with extra `flags`
    (`--collect.*`)."""
    cnf = my_cnf(sandbox, name, tmp / f"{name}.my.cnf")
    return peer([MYSQLD_EXPORTER, f"--config.my-cnf={cnf}", *flags], ready="mysql_up 1")


def postgres_exporter(sandbox: Sandbox, name: str, database: str = "app",
                      flags: Sequence[str] = ()) -> Iterator[Peer]:
    """postgres_exporter 0.11 on instance `name` as `dbgauge`, with extra `flags`."""
    return peer([POSTGRES_EXPORTER, *flags],
                {"DATA_SOURCE_NAME": monitoring_dsn(sandbox, name, database)},
                ready="pg_up 1")


@dataclass(frozen=True)
class Difference:
    family: str
    what: str

    def __str__(self) -> str:
        return f"{self.family}: {self.what}"


def compare(before: Mapping[str, Family], ours: Mapping[str, Family],
            after: Mapping[str, Family], families: Iterable[str] | None = None,
            values: Callable[[str], bool] = lambda _name: True,
            tolerance: float = 1e-9,
            series_values: Callable[[str, LabelSet], bool] = (
                lambda _name, _labels: True)) -> list[Difference]:
    """What dbgauge's `ours` lacks or gets wrong of the peer's families (`families`, or
    every family the peer had in both readings): type, label names, series, and values
    (each between the peer's two readings, widened by `tolerance` relative, for the
    families `values` accepts and the series of them `series_values` accepts)."""
    out: list[Difference] = []
    names = sorted(families if families is not None else set(before) & set(after))
    for name in names:
        theirs, mine, later = before.get(name), ours.get(name), after.get(name)
        if theirs is None or later is None:
            out.append(Difference(name, "the peer did not export it in both readings"))
            continue
        if mine is None:
            out.append(Difference(name, "missing"))
            continue
        if mine.type != theirs.type:
            out.append(Difference(name, f"type {mine.type}, the peer's {theirs.type}"))
        if mine.label_names() != theirs.label_names():
            out.append(Difference(name, f"labels {sorted(map(sorted, mine.label_names()))}, "
                                        f"the peer's {sorted(map(sorted, theirs.label_names()))}"))
            continue
        for key, first in theirs.samples.items():
            if key not in later.samples:
                continue  # a series that came or went between the peer's readings
            value = mine.samples.get(key)
            if value is None:
                out.append(Difference(name, f"no series {key[0]}{dict(key[1])}"))
                continue
            if not values(name) or not series_values(name, key[1]):
                continue
            low, high = sorted((first, later.samples[key]))
            slack = tolerance * max(abs(low), abs(high), 1.0)
            if not (low - slack <= value <= high + slack) and not (
                    value != value and first != first):
                out.append(Difference(name, f"{key[0]}{dict(key[1])} = {value}, the peer's "
                                            f"{first} then {later.samples[key]}"))
    return out


@dataclass(frozen=True)
class Rounds:
    """The last round of `compare_rounds`: the peer's readings around dbgauge's (and the
    texts of the first and of dbgauge's), the families compared, and those that failed in
    every round (with their differences)."""

    before: dict[str, Family]
    ours: dict[str, Family]
    after: dict[str, Family]
    peer_text: str
    our_text: str
    theirs: set[str]
    failing: set[str]
    differences: list[Difference]

    def report(self) -> str:
        return "\n".join(str(d) for d in self.differences if d.family in self.failing)


def compare_rounds(scrape_peer: Callable[[], str], collect_ours: Callable[[], str],
                   families: Callable[[dict[str, Family], dict[str, Family]], set[str]],
                   read_peer: Callable[[str], dict[str, Family]] = parse,
                   rounds: int = 3, **options: Any) -> Rounds:
    """Up to `rounds` rounds of peer, dbgauge, peer readings (the peer's text read by
    `read_peer`), compared (`compare` with `options`): a family fails only if it fails in
    every round, since a value that moves both ways under background activity can fall
    outside one pair of readings."""
    failing: set[str] | None = None
    for _ in range(rounds):
        peer_text = scrape_peer()
        our_text = collect_ours()
        before, ours, after = read_peer(peer_text), parse(our_text), read_peer(scrape_peer())
        theirs = families(before, after)
        differences = compare(before, ours, after, theirs, **options)
        failed = {d.family for d in differences}
        failing = failed if failing is None else failing & failed
        if not failing:
            break
    return Rounds(before, ours, after, peer_text, our_text, theirs, failing or set(),
                  differences)
