"""The daemon's index page: HTML made from what the exporter serves, nothing else."""

from __future__ import annotations

import html
from collections.abc import Sequence

from toolkit import __version__


def index_page(targets: Sequence[tuple[str, str, Sequence[str]]]) -> str:
    """Links to /metrics, /healthz and each target's /probe, with its kind and collectors
    (`targets`: name, kind, collector names)."""
    rows = "".join(
        f'<li><a href="/probe?target={html.escape(name)}">{html.escape(name)}</a> '
        f"({html.escape(kind)}: {html.escape(', '.join(collectors))})</li>"
        for name, kind, collectors in targets
    )
    return (
        "<!doctype html><html><head><title>dbgauge</title></head><body>"
        f"<h1>dbgauge {html.escape(__version__)}</h1>"
        '<p><a href="/metrics">/metrics</a> (all targets) · '
        '<a href="/healthz">/healthz</a></p>'
        f"<h2>Targets</h2><ul>{rows}</ul></body></html>"
    )
