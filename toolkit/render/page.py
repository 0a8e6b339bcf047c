"""The daemon's pages: HTML made from what the exporter serves, nothing else.

`/` is the status view (the same document as `dbgauge status --format json`, rendered on
the server: a little CSS, no JavaScript, a meta refresh). States are colour-coded and
always written out as words, so the page reads without colour; the layout is one column
of cards that fits a phone.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from dbgauge.toolkit import __version__
from dbgauge.toolkit.render.status import facts, nodes_by_name

_CSS = """
:root{--ok:#1a7f37;--warning:#9a6700;--critical:#cf222e;--unknown:#6e7781;--line:#d0d7de}
*{box-sizing:border-box}
body{font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;
 color:#1f2328;background:#f6f8fa}
header,main,footer{max-width:980px;margin:0 auto;padding:.6rem 1rem}
h1{font-size:1.3rem;margin:.3rem 0}h2{font-size:1.05rem;margin:1rem 0 .4rem}
.meta{color:#57606a;margin:0}
.state{display:inline-block;font-weight:600;font-size:.8rem;padding:0 .45rem;
 border-radius:1rem;color:#fff;background:var(--unknown)}
.s-OK>.card .state,.state.s-OK{background:var(--ok)}
.s-WARNING>.card .state,.state.s-WARNING{background:var(--warning)}
.s-CRITICAL>.card .state,.state.s-CRITICAL{background:var(--critical)}
ul.tree,ul.children{list-style:none;margin:0;padding:0}
ul.children{margin-left:1.1rem;padding-left:.7rem;border-left:2px solid var(--line)}
.card{background:#fff;border:1px solid var(--line);border-left:6px solid var(--unknown);
 border-radius:6px;padding:.45rem .6rem;margin:.35rem 0}
.s-OK>.card{border-left-color:var(--ok)}.s-WARNING>.card{border-left-color:var(--warning)}
.s-CRITICAL>.card{border-left-color:var(--critical);background:#fff5f5}
.name{font-weight:600;word-break:break-all}.link{color:#57606a;font-size:.85rem}
.addr{color:#57606a;font-size:.85rem}
.facts{display:flex;flex-wrap:wrap;gap:.25rem .9rem;margin:.2rem 0 0;padding:0;
 list-style:none;font-size:.9rem}
.findings{margin:.3rem 0 0;padding-left:1.1rem;font-size:.88rem}
footer{color:#57606a;font-size:.85rem}a{color:#0969da}
@media (max-width:600px){body{font-size:14px}ul.children{margin-left:.4rem;
 padding-left:.45rem}header,main,footer{padding:.5rem .6rem}}
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _node(node: Mapping[str, Any], link: str | None) -> str:
    findings = "".join(f"<li>{_e(f['severity'])} [{_e(f['kind'])}] {_e(f['detail'])}</li>"
                       for f in node["findings"])
    return (
        f'<div class="card"><span class="link">{_e(link) + ": " if link else ""}</span>'
        f'<span class="name">{_e(node["name"])}</span> '
        f'<span class="state">{_e(node["status"])}</span> '
        f'<span class="addr">{_e(node["kind"])} {_e(node["address"])}</span>'
        f'<ul class="facts">{"".join(f"<li>{_e(x)}</li>" for x in facts(node))}</ul>'
        + (f'<ul class="findings">{findings}</ul>' if findings else "") + "</div>")


def _item(node: Mapping[str, Any], link: str | None, children: str = "") -> str:
    return (f'<li class="node s-{_e(node["status"])}" data-node="{_e(node["name"])}" '
            f'data-status="{_e(node["status"])}" data-up="{str(node["up"]).lower()}" '
            f'data-link="{_e(link or "")}">{_node(node, link)}{children}</li>')


def _tree(tree: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> str:
    children = "".join(_tree(c, nodes) for c in tree["children"])
    below = f'<ul class="children">{children}</ul>' if children else ""
    return _item(nodes[tree["node"]], tree["link"], below)


def status_page(doc: Mapping[str, Any], refresh: float,
                targets: Sequence[tuple[str, str, Sequence[str]]],
                metrics_path: str = "/metrics") -> str:
    """The status document as a page that reloads itself every `refresh` seconds, with
    links to the metrics (`metrics_path`: --web.telemetry-path moves them), /status.json,
    /healthz and each target's /probe (`targets`: name, kind, collector names)."""
    nodes = nodes_by_name(doc)
    sections = "".join(
        f'<section class="cluster" data-cluster="{_e(t["node"])}"><h2>{_e(t["node"])}</h2>'
        f'<ul class="tree">{_tree(t, nodes)}</ul></section>' for t in doc["clusters"])
    if doc["apart"]:
        apart = "".join(_item(nodes[name], None) for name in doc["apart"])
        sections += (f'<section class="apart"><h2>In no tree</h2>'
                     f'<ul class="tree">{apart}</ul></section>')
    if doc.get("error"):
        sections += f'<p class="error">{_e(doc["error"])}</p>'
    probes = " · ".join(
        f'<a href="/probe?target={_e(name)}" title="{_e(kind)}: {_e(", ".join(cols))}">'
        f"{_e(name)}</a>" for name, kind, cols in targets)
    status = _e(doc["status"])
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="refresh" content="{refresh:.0f}">'
        f"<title>dbgauge: {status}</title><style>{_CSS}</style></head><body>"
        f'<header><h1>dbgauge <span class="state s-{status}" id="overall">{status}</span>'
        f'</h1><p class="meta">{len(nodes)} node(s), read <time id="taken-at">'
        f'{_e(doc["taken_at"])}</time>; this page reloads every {refresh:.0f} s</p></header>'
        f"<main>{sections}</main>"
        f'<footer><p><a href="{_e(metrics_path)}">{_e(metrics_path)}</a> · '
        f'<a href="/status.json">/status.json'
        f'</a> · <a href="/healthz">/healthz</a> · dbgauge {_e(__version__)}</p>'
        f"<p>Probe one target: {probes}</p></footer></body></html>")
