"""The upstream mixins' queries (tests/fixtures/mixins, see PROVENANCE.md there): every
alert and recording-rule expression and every dashboard query and template variable, with
Grafana's variables replaced so Prometheus can evaluate them as they are."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import REPO

MIXINS = REPO / "tests" / "fixtures" / "mixins"

_EQUALS_VAR = re.compile(r'(\w+)\s*=~?\s*"\$\{?\w+\}?"')
_RANGE_VAR = re.compile(r"\$\{?(__rate_interval|__interval|interval|__range)\}?")
_LABEL_VALUES = re.compile(r"^label_values\((.*?)(?:,\s*\w+)?\)$", re.S)
# PromQL words that are not metric names: functions, aggregations, keywords, units.
_NOT_METRICS = frozenset({
    "sum", "avg", "min", "max", "count", "rate", "irate", "increase", "by", "without", "on",
    "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset",
    "topk", "bottomk", "quantile", "stddev", "stdvar", "delta", "idelta", "deriv",
    "predict_linear", "histogram_quantile", "abs", "round", "clamp_min", "clamp_max",
    "max_over_time", "min_over_time", "avg_over_time", "sum_over_time", "count_over_time",
    "last_over_time", "label_replace", "label_join", "time", "vector", "scalar", "absent",
    "changes", "resets", "sort", "sort_desc", "timestamp", "ceil", "floor", "exp", "ln",
    "log2", "log10", "sqrt", "inf", "nan", "count_values", "group", "le",
})


@dataclass(frozen=True)
class Query:
    """One query of a mixin: where it is (`source`) and the PromQL as Prometheus gets it."""

    mixin: str
    source: str
    expr: str

    def metrics(self) -> frozenset[str]:
        """The metric names the query selects (not recording rules' `level:name:op`)."""
        text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', self.expr)  # no label values
        text = re.sub(r"\{[^}]*\}", "{}", text)  # no label names
        text = re.sub(r"\[[^\]]*\]", "[]", text)  # no ranges
        text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "",
                      text)
        names = re.findall(r"(?<![\w:])([a-zA-Z_][a-zA-Z0-9_]*)(?![\w(:])", text)
        return frozenset(n for n in names if n not in _NOT_METRICS and "_" in n)


def substitute(expr: str) -> str:
    """Grafana's variables made neutral: a label matched against a variable matches any
    value, a range variable is one minute."""
    expr = _EQUALS_VAR.sub(r'\1=~".*"', expr)
    return _RANGE_VAR.sub("1m", expr).strip()


def _dashboard_exprs(node: Any, where: str) -> Iterator[tuple[str, str]]:
    """(panel title, expr) of every query target under `node`."""
    if isinstance(node, dict):
        title = node.get("title")
        where = title if isinstance(title, str) and title else where
        if isinstance(node.get("expr"), str) and node["expr"].strip():
            yield where, node["expr"]
        for value in node.values():
            yield from _dashboard_exprs(value, where)
    elif isinstance(node, list):
        for value in node:
            yield from _dashboard_exprs(value, where)


def _dashboard(mixin: str, path: Path) -> Iterator[Query]:
    doc = json.loads(path.read_text())
    for variable in doc.get("templating", {}).get("list", []):
        query = variable.get("query")
        text = query.get("query") if isinstance(query, dict) else query
        m = _LABEL_VALUES.match(text or "") if variable.get("type") == "query" else None
        if m:
            yield Query(mixin, f"{path.name} variable ${variable['name']}",
                        substitute(m.group(1)))
    templating = doc.pop("templating", None)
    for n, (panel, expr) in enumerate(_dashboard_exprs(doc, "?")):
        yield Query(mixin, f"{path.name} #{n} {panel}", substitute(expr))
    doc["templating"] = templating


def _rules(mixin: str, path: Path) -> Iterator[Query]:
    doc = (json.loads(path.read_text()) if path.suffix == ".json"
           else yaml.safe_load(path.read_text()))
    for group in doc["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert") or rule.get("record")
            yield Query(mixin, f"{path.name} {name}", substitute(rule["expr"]))


def rule_files(mixin: str) -> list[Path]:
    """The mixin's recording rules, loaded into both Prometheus servers (alerts query
    the series they record)."""
    return sorted((MIXINS / mixin).glob("rules/*.yaml"))


def queries(mixin: str) -> list[Query]:
    """Every query of one mixin, in file order."""
    root = MIXINS / mixin
    out: list[Query] = []
    for path in sorted(root.rglob("*")):
        if path.suffix == ".json" and "dashboards" in path.parts:
            out.extend(_dashboard(mixin, path))
        elif path.suffix in (".yaml", ".json") and path.name != "PROVENANCE.md":
            out.extend(_rules(mixin, path))
    return out
