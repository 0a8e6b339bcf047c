"""Shell completion as the README documents it: click's, through the `dbgauge` entry
point, reaching the lazily loaded command groups and option choices."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
DBGAUGE = str(Path(sys.executable).parent / "dbgauge")


def complete(words: str) -> list[str]:
    env = {**os.environ, "COMP_WORDS": words, "COMP_CWORD": str(len(words.split(" ")) - 1),
           "_DBGAUGE_COMPLETE": "bash_complete"}
    out = subprocess.run([DBGAUGE], env=env, capture_output=True, text=True, timeout=60,
                         check=True).stdout
    return [line.split(",", 1)[1] for line in out.splitlines()]


def test_the_readme_line_emits_a_bash_script() -> None:
    line = re.search(r'eval "\$\((_DBGAUGE_COMPLETE=bash_source dbgauge)\)"',
                     README.read_text(encoding="utf-8"))
    assert line is not None
    env = {**os.environ, "_DBGAUGE_COMPLETE": "bash_source"}
    script = subprocess.run([DBGAUGE], env=env, capture_output=True, text=True, timeout=60,
                            check=True).stdout
    assert "complete -o nosort -F _dbgauge_completion dbgauge" in script


@pytest.mark.parametrize(("words", "expected"), [
    ("dbgauge heart", ["heartbeat"]),
    ("dbgauge heartbeat mon", ["monitor"]),
    ("dbgauge check lag --format ", ["text", "json"]),
])
def test_commands_subcommands_and_choices_complete(words: str, expected: list[str]) -> None:
    assert complete(words) == expected
