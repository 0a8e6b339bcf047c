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


def test_compat_rename_tables_are_current_and_list_every_peer_family() -> None:
    """docs/compat.md's tables come from the dialects' declarations, the data that makes the
    series, so a family cannot be emitted without being documented."""
    from dbgauge.toolkit.docs import COMPAT_BEGIN, COMPAT_END, compat_reference

    dialects = registry().dialects.values()
    text = (README.parent / "docs" / "compat.md").read_text(encoding="utf-8")
    block = text[text.index(COMPAT_BEGIN.split("(")[0]): text.index(COMPAT_END)
                 + len(COMPAT_END)]
    assert block == compat_reference(dialects), "docs/compat.md is stale: run `make docs`"
    for dialect in dialects:
        assert f"### `{dialect.name}`" in block
        for family in dialect.families.all:
            assert f"| `{family.spec.name}` |" in block
