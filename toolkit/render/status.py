"""`dbgauge status` as text: one tree per cluster, then the nodes that fit none.

Rendered from the JSON document (schema dbgauge.status/1, docs/status.md) and nothing
else, so the text, the daemon's HTML page and /status.json cannot disagree. States are
words (OK, WARNING, CRITICAL, UNKNOWN): readable without colour.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

Doc = Mapping[str, Any]


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


def _bytes(value: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"  # pragma: no cover - the loop always returns


def facts(node: Doc) -> list[str]:
    """What a node is doing, as short phrases ("read-only", "lag 0.2 s", ...)."""
    if not node["up"]:
        return ["down"]
    out = [node["role"]]
    if node["read_only"] is not None:
        out.append("read-only" if node["read_only"] else "read-write")
    lag = [(_seconds(node["lag_seconds"]) if node["lag_seconds"] is not None else ""),
           (_bytes(node["lag_bytes"]) if node["lag_bytes"] is not None else "")]
    if any(lag):
        out.append("lag " + " / ".join(x for x in lag if x))
    if node["replication"]:
        out.append(node["replication"])
    if node["errant"]:
        out.append("SPLIT-BRAIN")
    if node["oldest_lock_wait_seconds"]:
        out.append(f"oldest lock wait {_seconds(node['oldest_lock_wait_seconds'])}")
    if node["oldest_transaction_seconds"]:
        out.append(f"oldest transaction {_seconds(node['oldest_transaction_seconds'])}")
    if node["waiting_clients"] is not None:
        out.append(f"{node['waiting_clients']:.0f} client(s) waiting")
    if node["checksum"]:
        out.append(f"checksum: {node['checksum']}")
    return out


def nodes_by_name(doc: Doc) -> dict[str, Doc]:
    return {n["name"]: n for n in doc["nodes"]}


def walk(tree: Doc, depth: int = 0, last: tuple[bool, ...] = ()) -> Iterator[
        tuple[Doc, tuple[bool, ...]]]:
    """Each tree entry with the 'is last child' flags of its ancestors and itself."""
    yield tree, last
    children = tree["children"]
    for i, child in enumerate(children):
        yield from walk(child, depth + 1, (*last, i == len(children) - 1))


def _prefix(last: tuple[bool, ...]) -> str:
    if not last:
        return ""
    head = "".join("    " if done else "│   " for done in last[:-1])
    return head + ("└── " if last[-1] else "├── ")


def _indent(last: tuple[bool, ...]) -> str:
    return "".join("    " if done else "│   " for done in last) + "    "


def status_text(doc: Doc) -> str:
    """The whole document as text: a headline, the trees, the nodes apart."""
    nodes = nodes_by_name(doc)
    counts: dict[str, int] = {}
    for n in doc["nodes"]:
        counts[n["status"]] = counts.get(n["status"], 0) + 1
    tally = ", ".join(f"{counts[s]} {s}" for s in ("CRITICAL", "UNKNOWN", "WARNING", "OK")
                      if s in counts)
    lines = [f"STATUS {doc['status']} - {len(nodes)} node(s): {tally} ({doc['taken_at']})"]

    def entry(node: Doc, link: str | None, last: tuple[bool, ...]) -> None:
        label = f"{link}: " if link else ""
        lines.append(f"{_prefix(last)}{label}{node['name']} [{node['status']}] "
                     f"{node['address']} - {', '.join(facts(node))}")
        for f in node["findings"]:
            lines.append(f"{_indent(last)}! {f['severity']} [{f['kind']}] {f['detail']}")

    for tree in doc["clusters"]:
        lines.append("")
        for item, last in walk(tree):
            entry(nodes[item["node"]], item["link"], last)
    if doc["apart"]:
        lines += ["", "In no tree:"]
        for name in doc["apart"]:
            entry(nodes[name], None, ())
    return "\n".join(lines) + "\n"
