"""The validators' rule registries: one per validator, each rule id with its description
and its conditions; the SARIF rule table and docs/validate.md read them, and a
condition can only report under the id it is registered with."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbgauge.checks.innodb_cluster import RULES as CLUSTER_RULES
from dbgauge.checks.innodb_cluster import ClusterOptions, validate_innodb_cluster, version_for
from dbgauge.checks.pgbouncer import RULES as PGBOUNCER_RULES
from dbgauge.checks.pgbouncer import PgbouncerOptions, validate_pgbouncer
from dbgauge.checks.pgbouncer.params import KNOWN_VERSIONS
from dbgauge.checks.validation import Emitter, Registry, rules_markdown
from dbgauge.toolkit.result import Finding, Severity
from tests.helpers.validate import FIXTURES

DOC = Path(__file__).resolve().parents[2] / "docs" / "validate.md"
BEGIN = "<!-- rules: generated from RULES; DBGAUGE_UPDATE_GOLDEN=1 pytest " \
        "tests/unit/test_validate_rules.py rewrites it -->"
END = "<!-- end of rules -->"
FAMILIES = {"pgbouncer": (PGBOUNCER_RULES, ("pgbouncer/",)),
            "innodb-cluster": (CLUSTER_RULES, ("mycnf/", "gr/", "router/", "live/"))}


def rules_section() -> str:
    parts = [BEGIN]
    for name, (rules, _) in FAMILIES.items():
        parts += ["", f"`validate {name}`:", "", rules_markdown(rules).rstrip("\n")]
    return "\n".join([*parts, "", END])


def test_docs_list_every_rule_and_condition() -> None:
    text = DOC.read_text(encoding="utf-8")
    want = rules_section()
    if os.environ.get("DBGAUGE_UPDATE_GOLDEN"):
        text = text[:text.index(BEGIN)] + want + text[text.index(END) + len(END):]
        DOC.write_text(text, encoding="utf-8")
    assert text[text.index(BEGIN):text.index(END) + len(END)] == want, \
        "docs/validate.md is stale: rerun this test with DBGAUGE_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("name", FAMILIES)
def test_every_rule_has_a_description_and_conditions(name: str) -> None:
    rules, prefixes = FAMILIES[name]
    assert len(rules) == len(set(rules)) > 10
    for rule_id, description in rules.items():
        assert rule_id.startswith(prefixes), rule_id
        assert description and "\n" not in description
        conditions = rules.conditions(rule_id)
        assert conditions and all(c.summary for c in conditions), rule_id
    names = [c.name for c in rules.conditions()]
    assert len(names) == len(set(names)), "condition names are unique per validator"


def _pgbouncer_kinds() -> set[str]:
    kinds = set()
    for ini in sorted(FIXTURES.rglob("pgbouncer.ini")):
        for version in (KNOWN_VERSIONS[0], KNOWN_VERSIONS[-1]):
            opts = PgbouncerOptions(version=version, max_connections=20, fd_limit=50)
            kinds |= {f.kind for f in validate_pgbouncer(str(ini), opts).findings}
    return kinds


def _cluster_kinds() -> set[str]:
    kinds = set()
    for d in sorted({p.parent for p in FIXTURES.rglob("*.cnf")}):
        files = sorted(str(p) for p in d.glob("*.cnf"))
        router = d / "mysqlrouter.conf"
        for version in ("8.0.19", "8.4"):
            opts = ClusterOptions(version=version_for(version),
                                  router=str(router) if router.exists() else None)
            kinds |= {f.kind for f in validate_innodb_cluster(files, opts).findings}
    return kinds


def test_every_finding_of_the_corpus_is_a_registered_rule() -> None:
    pgbouncer, cluster = _pgbouncer_kinds(), _cluster_kinds()
    assert pgbouncer <= set(PGBOUNCER_RULES) and len(pgbouncer) > 15
    assert cluster <= set(CLUSTER_RULES) and len(cluster) > 10


# ------------------------------------------------------------------- the mechanism


def _loud(ctx: list[str], out: Emitter) -> None:
    """Reports every word it is given."""
    for word in ctx:
        out.emit(Severity.WARNING, word, file="f", line=1)


def _quiet(ctx: list[str], out: Emitter) -> None:
    """Reports nothing."""


def test_a_condition_says_what_it_catches() -> None:
    stage = Registry().stage("words")
    with pytest.raises(ValueError, match="says what it catches"):
        stage.rule("demo/loud", "Every word")(lambda ctx, out: None)


def test_registry_refuses_what_would_make_it_ambiguous() -> None:
    rules = Registry()
    stage = rules.stage("words")
    stage.rule("demo/loud", "Every word")(_loud)
    with pytest.raises(ValueError, match="described twice"):
        stage.rule("demo/loud", "Every word again")(_quiet)

    def elsewhere(ctx: list[str], out: Emitter) -> None:
        """Defined in another module."""

    elsewhere.__module__ = "somewhere.else"
    with pytest.raises(ValueError, match="is defined in"):
        stage.rule("demo/other", "Other")(elsewhere)
    bare = Registry()
    bare.stage("words").rule("demo/bare")(_quiet)
    with pytest.raises(ValueError, match="without a description: demo/bare"):
        list(bare)


def test_a_stage_runs_its_conditions_in_order_each_under_its_own_id() -> None:
    rules = Registry()
    stage = rules.stage("words")
    stage.rule("demo/loud", "Every word")(_loud)
    stage.rule("demo/quiet", "Nothing")(_quiet)
    items: list[Finding] = []
    stage.run(["a", "b"], lambda rule: Emitter(items, rule))
    assert [(f.kind, f.detail) for f in items] == [("demo/loud", "a"), ("demo/loud", "b")]
    assert [c.name for c in rules.conditions()] == ["_loud", "_quiet"]
    assert rules.conditions("demo/quiet")[0].summary == "Reports nothing"
