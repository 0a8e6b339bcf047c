"""Linking nodes into trees (pure): MySQL-family replicas to their source, PostgreSQL
standbys to their upstream and subscribers to the primary that streams to them, PgBouncer
to the servers its databases point at; then each node's role in its tree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from dbgauge.checks.split_brain.address import same_address
from dbgauge.checks.split_brain.mysql import source_of
from dbgauge.checks.split_brain.postgres import upstream_of
from dbgauge.checks.status.model import POOLER, REPLICA, STANDBY, SUBSCRIBER, Link, NodeState
from dbgauge.checks.status.reads import Hints


def _by_address(address: tuple[str, int], hints: Mapping[str, Hints],
                kinds: Sequence[str], nodes: Mapping[str, NodeState]) -> str | None:
    for name, h in hints.items():
        if nodes[name].kind in kinds and same_address(address, h.address):
            return name
    return None


def find_links(nodes: Sequence[NodeState], hints: Mapping[str, Hints]) -> list[Link]:
    """Every link the reads show; a replica names its source (by address, server_uuid or
    server_id), a primary's SHOW SLAVE HOSTS names replicas whose channel did not."""
    by_name = {n.name: n for n in nodes}
    links: list[Link] = []

    def add(upstream: str | None, node: str, kind: str) -> None:
        if upstream and upstream != node and not any(
                link.upstream == upstream and link.node == node for link in links):
            links.append(Link(upstream, node, kind))

    mysql = [h.mysql for h in hints.values() if h.mysql is not None]
    for me in mysql:
        for channel in me.channels:
            source = source_of(channel, mysql)
            add(source.name if source else None, me.name, REPLICA)
    for name, h in hints.items():
        for server_id, host, port in h.replica_hosts:
            found = _by_address((host, port), hints, ("mysql",), by_name) if host else None
            if found is None:
                same = [m.name for m in mysql if m.server_id == server_id and m.name != name]
                found = same[0] if len(same) == 1 else None
            if found is not None and not any(link.node == found for link in links):
                add(name, found, REPLICA)
    pg = [h.pg for h in hints.values() if h.pg is not None]
    for standby in pg:
        if standby.in_recovery:
            upstream = upstream_of(standby, pg)
            add(upstream.name if upstream else None, standby.name, STANDBY)
    for name, h in hints.items():
        for sub in h.subscriptions:
            senders = [other for other, oh in hints.items() if other != name
                       and any(w.application_name == sub.name for w in oh.walsenders)]
            if len(senders) == 1:
                add(senders[0], name, SUBSCRIBER)
    for name, h in hints.items():
        for address in h.pooled:
            add(_by_address(address, hints, ("postgres",), by_name), name, POOLER)
    return links


def with_roles(nodes: Sequence[NodeState], links: Sequence[Link]) -> list[NodeState]:
    """A primary with nothing replicating from it is `standalone`."""
    out = []
    for n in nodes:
        below = [link for link in links if link.upstream == n.name and link.kind != POOLER]
        if n.up and n.role == "primary" and not below:
            n = replace(n, role="standalone")
        out.append(n)
    return out


def kept_links(previous: Sequence[Link], down: set[str], known: Sequence[Link]) -> list[Link]:
    """Links of nodes that are down now, as last seen: a dead replica stays in its tree."""
    have = {(link.upstream, link.node) for link in known}
    return [link for link in previous if (link.node in down or link.upstream in down)
            and (link.upstream, link.node) not in have]
