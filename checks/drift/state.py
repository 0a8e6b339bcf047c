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
from pathlib import Path
from typing import Any

from checks.drift.chunks import Bound, KeyRange, decode_value, encode_bound, encode_value
from checks.drift.model import ChecksumOptions, Difference, DriftError, TableResult

_STATE_VERSION = 1


def default_state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(base) / "dbgauge"


class RunState:
    """Progress of a run in a JSON file, so --resume can continue where it stopped.

    Keyed by what was asked (source, replicas, method, tables): a state file written for
    other arguments is never used.
    """

    def __init__(self, path: Path | None, identity: str, data: dict[str, Any],
                 resumed: bool) -> None:
        self.path = path
        self.identity = identity
        self.data = data
        self.resumed = resumed
        self._saved = 0.0

    @classmethod
    def open(cls, options: ChecksumOptions, method: str, source: str,
             replicas: Sequence[str]) -> RunState:
        ident = json.dumps({"source": source, "replicas": list(replicas), "method": method,
                            "tables": list(options.tables), "exclude": list(options.exclude)},
                           sort_keys=True)
        digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
        if not options.keep_state:
            return cls(None, ident, {"version": _STATE_VERSION, "identity": ident,
                                     "tables": {}}, False)
        path = options.state_file or default_state_dir() / f"checksum-{digest}.json"
        if options.resume and path.exists():
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                data = {}
            if data.get("identity") == ident and data.get("version") == _STATE_VERSION \
                    and not data.get("complete"):
                return cls(path, ident, data, True)
        return cls(path, ident, {"version": _STATE_VERSION, "identity": ident, "tables": {}},
                   False)

    def table(self, name: str) -> dict[str, Any] | None:
        entry = self.data["tables"].get(name)
        return entry if isinstance(entry, dict) else None

    def finished(self, name: str) -> TableResult | None:
        entry = self.table(name)
        if not self.resumed or not entry or entry.get("status") != "done":
            return None
        return result_from_json(entry["result"])

    def progress(self, name: str, upper: Bound | None, rows: int, chunks: int,
                 suspects: list[tuple[str, KeyRange]], chunk_rows: int) -> None:
        self.data["tables"][name] = {
            "status": "running", "next_lower": encode_bound(upper), "rows": rows,
            "chunks": chunks, "chunk_rows": chunk_rows,
            "suspects": [[n, encode_bound(r.lower), encode_bound(r.upper)]
                         for n, r in suspects]}
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


def result_to_json(result: TableResult) -> dict[str, Any]:
    """A finished table for the state file: key values tagged so they read back exactly."""
    doc = result.to_json()
    doc["differences"] = [{"replica": d.replica, "kind": d.kind,
                           "key": [[c, encode_value(v)] for c, v in d.key]}
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
                                     tuple((c, decode_value(v)) for c, v in d["key"]))
                          for d in doc["differences"]),
        seconds=float(doc["seconds"]), reason=doc["reason"],
        resumed_from_chunk=doc["resumed_from_chunk"],
        repair=tuple((n, tuple(s)) for n, s in doc["repair"]), notes=tuple(doc["notes"]),
        rechecked_chunks=int(doc.get("rechecked_chunks", 0)),
        whole_table=bool(doc.get("whole_table", False)))
