"""The status topology's pure parts: trees from links, nodes apart, the JSON document,
links kept for nodes that went down, and the text rendering of the document."""

from __future__ import annotations

from dbgauge.checks.status.model import Link, NodeState, Topology
from dbgauge.checks.status.topology import kept_links
from dbgauge.toolkit.render.status import status_text
from dbgauge.toolkit.result import Finding, Status


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


def test_links_from_channels_replica_hosts_walsenders_and_pools() -> None:
    from dbgauge.checks.split_brain.model import Channel, MySQLNode, PgNode
    from dbgauge.checks.status.reads import Hints
    from dbgauge.checks.status.topology import find_links, with_roles
    from dbgauge.collectors.postgres_replication import Standby, Subscription

    a, b, c = ("10.0.0.1", 3306), ("10.0.0.2", 3306), ("10.0.0.3", 3306)
    pa, ps, sub, bouncer = (("10.0.1.1", 5432), ("10.0.1.2", 5432), ("10.0.1.3", 5432),
                            ("10.0.1.9", 6432))
    hints = {
        "a": Hints(a, mysql=MySQLNode("a", a, "mariadb", 1, True),
                   replica_hosts=((3, "10.0.9.3", 3306),)),
        # b names its source by an address no target has, but by a unique server_id
        "b": Hints(b, mysql=MySQLNode("b", b, "mariadb", 2, False, (
            Channel("", "10.0.9.1", 3306, 1, ""),))),
        # c's channel names nothing known; a's SHOW SLAVE HOSTS lists its server_id
        "c": Hints(c, mysql=MySQLNode("c", c, "mariadb", 3, False, (
            Channel("", "10.0.9.2", 3307, None, ""),))),
        "pa": Hints(pa, pg=PgNode("pa", pa, "42", False, 1, 100, 100), walsenders=(
            Standby("ps", "streaming", "async"),
            Standby("sub1", "streaming", "async", replay_lag_bytes=64.0))),
        "ps": Hints(ps, pg=PgNode("ps", ps, "42", True, 1, 100, 100, pa)),
        "sub": Hints(sub, pg=PgNode("sub", sub, "77", False, 1, 5, 5),
                     subscriptions=(Subscription("sub1", True, True),)),
        "bouncer": Hints(bouncer, pooled=(pa, ("10.9.9.9", 5432))),
    }
    nodes = [NodeState(n, "postgres" if n.startswith(("p", "s")) else "mysql", "", True,
                       "subscriber" if n == "sub" else "primary") for n in hints]
    nodes[-1] = NodeState("bouncer", "pgbouncer", "", True, "pooler")
    links = find_links(nodes, hints)
    assert sorted((x.upstream, x.node, x.kind) for x in links) == [
        ("a", "b", "replica"), ("a", "c", "replica"), ("pa", "bouncer", "pooler"),
        ("pa", "ps", "standby"), ("pa", "sub", "subscriber")]
    roles = {n.name: n.role for n in with_roles(nodes, links)}
    assert roles["sub"] == "subscriber" and roles["a"] == "primary"
    alone = with_roles([NodeState("x", "mysql", "", True, "primary")], [])
    assert alone[0].role == "standalone"


def test_status_without_a_config_is_one_line_and_exit_2() -> None:
    from click.testing import CliRunner

    from dbgauge.cli import cli

    runner = CliRunner()
    got = runner.invoke(cli, ["status"], env={"DBGAUGE_CONFIG": ""})
    assert got.exit_code == 2
    assert got.output == "dbgauge: error: no config: pass --config FILE or set DBGAUGE_CONFIG\n"
    got = runner.invoke(cli, ["status", "--config", "/nonexistent/dbgauge.yaml"])
    assert got.exit_code == 2 and got.output.startswith("dbgauge: error: ")
    assert "Traceback" not in got.output and len(got.output.splitlines()) == 1
