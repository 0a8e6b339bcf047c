"""The README's metrics reference is generated from the registry and must be current."""

from __future__ import annotations

from pathlib import Path

from dbgauge.app import registry
from dbgauge.toolkit.docs import BEGIN, END, metrics_reference

ALL = registry().all

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_metrics_reference_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    block = text[text.index(BEGIN): text.index(END) + len(END)]
    assert block == metrics_reference(ALL), "README is stale: run `make docs` and commit"


def test_reference_lists_every_metric() -> None:
    ref = metrics_reference(ALL)
    for collector in ALL:
        for spec in collector.metrics:
            assert f"`{spec.name}`" in ref
    assert "`dbgauge_up`" in ref
