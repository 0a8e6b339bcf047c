"""The --resume state file: where an interrupted run stopped, and the tables it finished.

A run writes its progress (the next chunk's lower bound, counts, the chunks still to
re-check) at most once a second and every finished table at once, atomically; a later
run with the same arguments and --resume continues from there. The daemon keeps no state.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from dbgauge.checks.drift.chunks import (
    Bound,
    KeyRange,
    decode_bound,
    decode_value,
    encode_bound,
    encode_value,
)
from dbgauge.checks.drift.model import (
    ChecksumOptions,
    Difference,
    DriftError,
    Suspect,
    TableResult,
    Unnamed,
)
from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.targets import Target

_STATE_VERSION = 2  # 1 keyed on target names only

# Options that pace a run or shape its output without changing which rows differ: they
# may change between a run and its --resume. Every other option is part of the key.
_FREE_OPTIONS = frozenset({
    "method", "chunk_time", "max_lag", "max_threads_running", "retries", "retry_delay",
    "print_repair", "show_values", "resume", "state_file", "keep_state", "run_time",
    "initial_chunk_rows", "wait_timeout", "max_pause", "whole_table_time", "whole_table_idle",
    "whole_table_rate", "leaf_rows", "split_factor"})


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(base) / "dbgauge"


@dataclass(frozen=True)
class SavedWalk:
    """Where an interrupted run left a table's walk: the next chunk's lower bound, what
    was counted so far, the chunks still to re-check, and the last chunk size."""

    next_lower: Bound | None
    rows: int
    chunks: int
    suspects: tuple[Suspect, ...]
    chunk_rows: int | None
    walked: bool  # the last chunk is done: nothing left to walk, only to re-check

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> SavedWalk:
        return cls(
            next_lower=decode_bound(entry.get("next_lower")), rows=int(entry.get("rows", 0)),
            chunks=int(entry.get("chunks", 0)),
            suspects=tuple(Suspect(s[0], KeyRange(decode_bound(s[1]), decode_bound(s[2])))
                           for s in entry.get("suspects", [])),
            chunk_rows=entry.get("chunk_rows"), walked=bool(entry.get("walked")))


class RunState:
    """Progress of a run in a JSON file, so --resume can continue where it stopped.

    Keyed by what was asked (source, replicas, method, tables) and by what it reaches
    (each server's address and database, the arguments that change the result): a state
    file written for another run is never continued.

    Mutable on purpose: the walk records every chunk in it as it goes, and a stop
    (--run-time, Ctrl-C, SIGTERM) saves whatever it holds at that moment.
    """

    def __init__(self, path: Path | None, identity: dict[str, Any], data: dict[str, Any],
                 resumed: bool) -> None:
        self.path = path
        self.identity = identity
        self.data = data
        self.resumed = resumed
        self._saved = 0.0

    @classmethod
    def open(cls, options: ChecksumOptions, method: str, source: str,
             replicas: Sequence[str], endpoints: Sequence[str] = ()) -> RunState:
        """The state to continue (--resume and a file written for this very run), else a
        fresh one. `endpoints` are where source and replicas are, in that order: the file
        is found by the names, so a run of another cluster with the same target names is
        refused rather than continued."""
        request = json.dumps({"source": source, "replicas": list(replicas), "method": method,
                              "tables": list(options.tables),
                              "exclude": list(options.exclude)}, sort_keys=True)
        digest = hashlib.sha256(request.encode()).hexdigest()[:16]
        ident = identity(options, method, [source, *replicas], endpoints)
        if not options.keep_state:
            return cls(None, ident, {"version": _STATE_VERSION, "identity": ident,
                                     "tables": {}}, False)
        path = options.state_file or default_state_dir() / f"checksum-{digest}.json"
        if options.resume and path.exists():
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                data = {}
            if data.get("version") == _STATE_VERSION and not data.get("complete"):
                differs = mismatch(data.get("identity") or {}, ident)
                if differs:
                    raise DriftError(
                        f"--resume: the state file {path} was written for another run ("
                        + "; ".join(differs) + "): pass --state-file to keep this run's "
                        "progress apart, or run without --resume to start afresh (which "
                        "replaces that progress)")
                return cls(path, ident, data, True)
        return cls(path, ident, {"version": _STATE_VERSION, "identity": ident, "tables": {}},
                   False)

    def table(self, name: str) -> dict[str, Any] | None:
        entry = self.data["tables"].get(name)
        return entry if isinstance(entry, dict) else None

    def walk(self, name: str) -> SavedWalk | None:
        """Where the resumed run left table `name`'s walk (None: start it afresh)."""
        entry = self.table(name)
        return SavedWalk.from_json(entry) if entry else None

    def finished(self, name: str) -> TableResult | None:
        entry = self.table(name)
        if not self.resumed or not entry or entry.get("status") != "done":
            return None
        return result_from_json(entry["result"])

    def progress(self, name: str, upper: Bound | None, rows: int, chunks: int,
                 suspects: Sequence[Suspect], chunk_rows: int) -> None:
        self.data["tables"][name] = {
            "status": "running", "next_lower": encode_bound(upper), "rows": rows,
            "chunks": chunks, "chunk_rows": chunk_rows,
            "suspects": [[s.replica, encode_bound(s.rng.lower), encode_bound(s.rng.upper)]
                         for s in suspects]}
        if upper is None:  # the last chunk is done: nothing left to walk
            self.data["tables"][name]["walked"] = True
        self.save()

    def done(self, name: str, result: TableResult) -> None:
        self.data["tables"][name] = {"status": "done", "result": result_to_json(result)}
        self.save(force=True)

    def complete(self) -> None:
        """The run finished: nothing is left to resume."""
        self.data["complete"] = True
        if self.path is not None:
            try:
                self.path.unlink(missing_ok=True)
            except OSError as exc:
                raise DriftError(f"cannot remove the --resume state file {self.path}: "
                                 f"{exc.strerror}") from None

    def save(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.path is None or (not force and now - self._saved < 1.0):
            return
        self._saved = now
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text(json.dumps(self.data))
            os.replace(tmp, self.path)
        except OSError as exc:
            raise DriftError(f"cannot write the --resume state file {self.path}: "
                             f"{exc.strerror}; pass --state-file") from None


def endpoint(target: Target) -> str:
    """Where a target's data is: protocol, address (host:port or socket) and database."""
    params = parse_dsn(target.dsn)
    return f"{params.family}://{params.address}/{params.dbname or ''}"


def identity(options: ChecksumOptions, method: str, names: Sequence[str],
             endpoints: Sequence[str]) -> dict[str, Any]:
    """What a state file belongs to: the servers by name and address, the method and the
    options that change the result (JSON-ready)."""
    arguments = {f.name: getattr(options, f.name) for f in fields(options)
                 if f.name not in _FREE_OPTIONS}
    return {"servers": [[n, e] for n, e in zip(names, endpoints, strict=False)],
            "method": method,
            "arguments": json.loads(json.dumps(arguments, default=str, sort_keys=True))}


def mismatch(saved: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """How a saved identity differs from this run's, in words ([] when it does not)."""
    out: list[str] = []
    then_servers = {n: e for n, e in saved.get("servers", [])}
    for name, where in now["servers"]:
        if then_servers.get(name) != where:
            out.append(f"{name} was {then_servers.get(name) or 'not part of it'}, now {where}")
    if saved.get("method") != now["method"]:
        out.append(f"--method was {saved.get('method')}, now {now['method']}")
    then_args = saved.get("arguments", {})
    for key in sorted(set(then_args) | set(now["arguments"])):
        if then_args.get(key) != now["arguments"].get(key):
            out.append(f"--{key.replace('_', '-')} was {then_args.get(key)!r}, "
                       f"now {now['arguments'].get(key)!r}")
    return out or ([] if saved == now else ["it was written differently"])


def result_to_json(result: TableResult) -> dict[str, Any]:
    """A finished table for the state file: key values tagged so they read back exactly."""
    doc = result.to_json()
    doc["differences"] = [{"replica": d.replica, "kind": d.kind,
                           "key": [[c, encode_value(v)] for c, v in d.key],
                           "columns": list(d.columns), "values": [list(v) for v in d.values]}
                          for d in result.differences]
    doc["repair"] = [[n, list(s)] for n, s in result.repair]
    doc["seconds"] = result.seconds
    return doc


def result_from_json(doc: Mapping[str, Any]) -> TableResult:
    """The TableResult `result_to_json` wrote."""
    return TableResult(
        table=doc["table"], status=doc["status"], rows=doc["rows"], chunks=doc["chunks"],
        differing_chunks=tuple(sorted(doc["differing_chunks"].items())),
        differing_rows=tuple(sorted(doc["differing_rows"].items())),
        differences=tuple(Difference(d["replica"], d["kind"],
                                     tuple((c, decode_value(v)) for c, v in d["key"]),
                                     tuple(d.get("columns", [])),
                                     tuple((c, a, b) for c, a, b in d.get("values", [])))
                          for d in doc["differences"]),
        seconds=float(doc["seconds"]), reason=doc["reason"],
        resumed_from_chunk=doc["resumed_from_chunk"],
        repair=tuple((n, tuple(s)) for n, s in doc["repair"]), notes=tuple(doc["notes"]),
        rechecked_chunks=int(doc.get("rechecked_chunks", 0)),
        whole_table=bool(doc.get("whole_table", False)),
        unnamed=tuple(Unnamed(u["replica"], u["source_rows"], u["replica_rows"])
                      for u in doc.get("unnamed_differences", [])))
