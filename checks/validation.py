"""What the configuration validators share (pgbouncer.ini, InnoDB Cluster my.cnf).

Number and name helpers, and the rule registry: each validator has one `Registry`
(its `rules` module) whose stages hold small condition functions, each registered with
its rule id (and, once per id, the id's one-line description) by a decorator. The SARIF
rule table, the docs' rules table and the validator's runner all read that registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.result import Finding, Severity, finding

# A setting's number never needs more digits than a 64-bit integer (20) plus slack; a
# longer one is hostile or garbage, and converting it costs time (Python refuses past
# 4300 digits with a ValueError) for a verdict everybody knows.
MAX_DIGITS = 40
_LONG_NUMBER = re.compile(rf"\s*[+-]?(?:0[xX][0-9a-fA-F]{{{MAX_DIGITS},}}"
                          rf"|[0-9]{{{MAX_DIGITS + 1},}})\s*[A-Za-z]*\s*")


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The closest known name, for 'unknown key' messages."""
    import difflib  # only when a key is unknown: most files load without it

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


def refuse_long_numbers(values: Iterable[tuple[str, str, str, int]]) -> None:
    """ConfigError at the first (what, value, source, line) whose value is a number longer
    than MAX_DIGITS: such a file is not validated at all (exit 2)."""
    for what, value, source, line in values:
        if len(value) > MAX_DIGITS and _LONG_NUMBER.fullmatch(value):
            digits = sum(ch.isalnum() for ch in value)
            raise ConfigError(f"{what} is a number of {digits} digits: no setting takes one "
                              f"this long (dbgauge reads at most {MAX_DIGITS}); fix the value",
                              source=source, line=line)


# ------------------------------------------------------------------- rule registry

C = TypeVar("C")
E = TypeVar("E", bound="Emitter")


class Emitter:
    """Where the findings of one rule id go: a condition gives severity, message and
    location, never the id, so it cannot report under another rule's name."""

    def __init__(self, items: list[Finding], rule: str) -> None:
        self.items = items
        self.rule = rule

    def emit(self, sev: Severity, msg: str, *, node: str = "", file: str | None = None,
             line: int | None = None, key: str | None = None, fix: str | None = None) -> None:
        self.items.append(finding(sev, self.rule, msg, node=node, file=file, line=line,
                                  key=key, fix=fix))


@dataclass(frozen=True)
class Condition(Generic[C, E]):
    """One named condition: a small function that reports under one rule id."""

    rule: str
    check: Callable[[C, E], None]

    @property
    def name(self) -> str:
        return self.check.__name__

    @property
    def summary(self) -> str:
        """The first paragraph of the function's docstring, on one line: what the docs
        say it catches."""
        first = (self.check.__doc__ or "").strip().split("\n\n", 1)[0]
        return " ".join(first.split()).rstrip(".")


class Stage(Generic[C, E]):
    """Conditions that read the same thing (a configuration, a member, a query's rows),
    run in the order they are defined. One module defines a stage's conditions, so that
    order never depends on which module was imported first."""

    def __init__(self, registry: Registry, name: str) -> None:
        self.registry = registry
        self.name = name
        self.conditions: list[Condition[C, E]] = []
        self._module: str | None = None

    def rule(self, rule_id: str, description: str | None = None
             ) -> Callable[[Callable[[C, E], None]], Callable[[C, E], None]]:
        """Register the decorated function under `rule_id`; exactly one of a rule's
        functions gives its one-line `description` (the SARIF rule table)."""

        def register(check: Callable[[C, E], None]) -> Callable[[C, E], None]:
            if self._module not in (None, check.__module__):
                raise ValueError(f"stage {self.name!r} is defined in {self._module}, "
                                 f"not {check.__module__}")
            if not (check.__doc__ or "").strip():
                raise ValueError(f"{check.__name__}: a condition says what it catches")
            self._module = check.__module__
            self.registry.describe(rule_id, description)
            self.conditions.append(Condition(rule_id, check))
            return check

        return register

    def run(self, ctx: C, out: Callable[[str], E]) -> None:
        """Every condition on `ctx`, each with an emitter bound to its rule id."""
        for condition in self.conditions:
            condition.check(ctx, out(condition.rule))

    def findings(self, ctx: C, emitter: Callable[[list[Finding], str], E]) -> list[Finding]:
        """`run` into a new list: what this stage alone finds on `ctx`."""
        items: list[Finding] = []
        self.run(ctx, lambda rule: emitter(items, rule))
        return items


class Registry(Mapping[str, str]):
    """One validator's rules: rule id -> one-line description, in the order the stages
    and their conditions run, and the conditions behind each id. It is the SARIF rule
    table, the rules table of docs/validate.md and what the runners run."""

    def __init__(self) -> None:
        self.stages: list[Stage[Any, Any]] = []
        self._descriptions: dict[str, str] = {}

    def stage(self, name: str) -> Stage[Any, Any]:
        """A new stage, run after the ones created before it."""
        new: Stage[Any, Any] = Stage(self, name)
        self.stages.append(new)
        return new

    def describe(self, rule_id: str, description: str | None) -> None:
        if description is None:
            return
        if rule_id in self._descriptions:
            raise ValueError(f"{rule_id} is described twice")
        self._descriptions[rule_id] = description

    def conditions(self, rule_id: str | None = None) -> list[Condition[Any, Any]]:
        """Every condition (of one rule id), in run order."""
        return [c for s in self.stages for c in s.conditions
                if rule_id is None or c.rule == rule_id]

    def _ids(self) -> list[str]:
        ids = list(dict.fromkeys(c.rule for c in self.conditions()))
        missing = [i for i in ids if i not in self._descriptions]
        if missing:
            raise ValueError(f"rules without a description: {', '.join(missing)}")
        return ids

    def __getitem__(self, rule_id: str) -> str:
        if rule_id not in self._ids():
            raise KeyError(rule_id)
        return self._descriptions[rule_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids())

    def __len__(self) -> int:
        return len(self._ids())


def rules_markdown(registry: Registry) -> str:
    """The rules list of docs/validate.md: each id, its description and its conditions."""
    lines = []
    for rule_id, description in registry.items():
        lines.append(f"- `{rule_id}`: {description}")
        lines += [f"  - {c.summary}" for c in registry.conditions(rule_id)]
    return "\n".join(lines) + "\n"
