"""The status topology's pure parts: trees from links, nodes apart, the JSON document,
links kept for nodes that went down, and the text rendering of the document."""

from __future__ import annotations

from checks.status.model import Link, NodeState, Topology
from checks.status.topology import kept_links
from toolkit.render.status import status_text
from toolkit.result import Finding, Status


def node(name: str, role: str = "primary", up: bool = True, **kw: object) -> NodeState:
    findings = () if up else (Finding(Status.CRITICAL, name, "down", "cannot connect"),)
    return NodeState(name, "postgres", "127.0.0.1:5432", up, role, findings=findings,
                     **kw)  # type: ignore[arg-type]


def test_trees_roots_in_config_order_and_nodes_apart() -> None:
    topo = Topology(
        (node("lonely"), node("s1", "standby", read_only=True, lag_seconds=0.2),
         node("p"), node("bouncer", "pooler", waiting_clients=3.0), node("s2", "standby")),
        (Link("p", "s1", "standby"), Link("s1", "s2", "standby"), Link("p", "bouncer", "pooler")),
        taken_at=0.0)
    assert topo.roots() == ["p"]
    assert topo.apart() == ["lonely"]
    assert topo.tree("p") == {"node": "p", "link": None, "children": [
        {"node": "s1", "link": "standby", "children": [
            {"node": "s2", "link": "standby", "children": []}]},
        {"node": "bouncer", "link": "pooler", "children": []}]}
    doc = topo.doc()
    assert doc["taken_at"] == "1970-01-01T00:00:00Z" and doc["exit_code"] == 0
    assert [n["name"] for n in doc["nodes"]] == ["lonely", "s1", "p", "bouncer", "s2"]
    text = status_text(doc)
    assert text.splitlines() == [
        "STATUS OK - 5 node(s): 5 OK (1970-01-01T00:00:00Z)",
        "",
        "p [OK] 127.0.0.1:5432 - primary",
        "├── standby: s1 [OK] 127.0.0.1:5432 - standby, read-only, lag 0.2 s",
        "│   └── standby: s2 [OK] 127.0.0.1:5432 - standby",
        "└── pooler: bouncer [OK] 127.0.0.1:5432 - pooler, 3 client(s) waiting",
        "",
        "In no tree:",
        "lonely [OK] 127.0.0.1:5432 - primary",
    ]


def test_a_cycle_still_makes_one_tree() -> None:
    topo = Topology((node("a"), node("b")), (Link("a", "b", "replica"), Link("b", "a", "replica")))
    assert topo.roots() == ["a"]
    assert topo.tree("a")["children"][0]["children"][0] == {
        "node": "a", "link": "replica", "children": []}


def test_worst_node_decides_and_down_nodes_keep_their_links() -> None:
    topo = Topology((node("p"), node("r", "replica", up=False)))
    doc = topo.doc()
    assert doc["status"] == "CRITICAL" and doc["exit_code"] == 2
    assert "r [CRITICAL] 127.0.0.1:5432 - down" in status_text(doc)
    assert "    ! CRITICAL [down] cannot connect" in status_text(doc)
    before = [Link("p", "r", "replica"), Link("p", "x", "replica")]
    assert kept_links(before, {"r"}, []) == [Link("p", "r", "replica")]
    assert kept_links(before, {"r"}, [Link("p", "r", "replica")]) == []
