"""YAML read with its work bounded: every config-like file dbgauge reads goes through here.

PyYAML composes a document in time linear in its text, but an alias is a second reference
to the same node, so a 500-byte "billion laughs" (9 levels of 9 aliases) stands for 9^9
values: anything that walks the result as a tree (validation, our own checks) walks them
all. So the composed tree is measured once, each distinct node once, as the number of
values it expands to, and refused past MAX_EXPANDED_NODES before anything walks it; then
it is constructed once from that same tree (aliases stay shared objects).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from dbgauge.toolkit.errors import ConfigError

# Values a document may expand to, aliases counted at each use. A config of a thousand
# targets with a dozen keys each is some 30,000; no real config comes near the bound.
MAX_EXPANDED_NODES = 200_000
_MAX_NUMBER_CHARS = 40


def compose(text: str, source: str) -> yaml.Node | None:
    """The document's node tree, checked: expansion bounded, no implausible numbers.

    Raises ConfigError (yaml.YAMLError and RecursionError are left to the caller, which
    words them with its own context)."""
    tree = yaml.compose(text, Loader=yaml.SafeLoader)
    if tree is not None:
        _refuse_expansion(tree, source)
        _refuse_huge_numbers(tree, source)
    return tree


def construct(tree: yaml.Node | None) -> Any:
    """The Python value of a tree from `compose` (as yaml.safe_load would give)."""
    if tree is None:
        return None
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(tree)
    finally:
        loader.dispose()


def format_loc(loc: Sequence[int | str]) -> str:
    """A YAML path as the errors show it: targets[1].dsn."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def _refuse_expansion(tree: yaml.Node, source: str) -> None:
    """Count the values `tree` expands to, each distinct node measured once (so the
    count costs as much as the text); refuse past the bound, and refuse an alias that
    contains itself."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        known = sizes.get(key)
        if known is not None:
            return known
        if key in on_path:
            raise ConfigError("a YAML alias refers to a value that contains it",
                              source=source, line=node.start_mark.line + 1)
        total = 1
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            on_path.add(key)
            children = [c for pair in node.value for c in pair] \
                if isinstance(node, yaml.MappingNode) else node.value
            for child in children:
                total += size(child)
                if total > MAX_EXPANDED_NODES:
                    raise ConfigError(
                        f"the YAML expands to more than {MAX_EXPANDED_NODES:,} values "
                        "(aliases are counted at each use): refusing it, as a config "
                        "this large is a mistake or an attack (YAML alias bomb)",
                        source=source, line=node.start_mark.line + 1)
            on_path.discard(key)
        sizes[key] = total
        return total

    size(tree)


def _refuse_huge_numbers(tree: yaml.Node, source: str) -> None:
    """A 5,000-digit number is a typo, and PyYAML's int() refuses it with a bare
    ValueError: name it, with its line and YAML path, before anything converts it.
    Each distinct node is looked at once (an alias is not walked again)."""
    seen: set[int] = set()

    def walk(node: yaml.Node, loc: tuple[int | str, ...]) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if node.tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float") \
                    and len(node.value) > _MAX_NUMBER_CHARS:
                raise ConfigError(f"a number of {len(node.value)} characters is not plausible",
                                  source=source, path=format_loc(loc) or None,
                                  line=node.start_mark.line + 1)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else "?"
                walk(key, loc)
                walk(value, (*loc, name))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, (*loc, i))

    walk(tree, ())
