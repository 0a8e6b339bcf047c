"""`promtool check metrics` finds nothing in dbgauge's `--compat` output that it does not
find in the peer's own output: the peer's names keep the peer's lint (a name the peer gets
wrong stays wrong, or a dashboard breaks), and dbgauge adds no problem of its own."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tests.helpers import DBGAUGE, REPO
from tests.helpers.peers import Peer, mysqld_exporter, parse, postgres_exporter
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

_NAME = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)")


def _lint(text: str) -> set[str]:
    """promtool's findings, one per line (it exits 3 when it has any)."""
    done = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode in (0, 3), done.stderr
    return {line.strip() for line in (done.stdout + done.stderr).splitlines()
            if line.strip()}


def _only(text: str, families: set[str]) -> str:
    """The exposition lines of `families` (HELP, TYPE and samples)."""
    out = []
    for line in text.splitlines():
        name = line.split()[2] if line.startswith("# ") and len(line.split()) > 2 else (
            m.group(1) if (m := _NAME.match(line)) else "")
        base = next((f for f in families if name == f or name.startswith(f + "_")), None)
        if base is not None:
            out.append(line)
    return "\n".join(out) + "\n"


def _ours(sandbox: Sandbox, target: str, compat: str) -> str:
    done = subprocess.run([*DBGAUGE, "collect", "--config", str(sandbox.config), target,
                           "--compat", compat], capture_output=True, text=True, timeout=60,
                          check=False, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return done.stdout


PEERS: dict[str, tuple[str, Callable[[Sandbox, Path], AbstractContextManager[Peer]]]] = {
    "mysqld_exporter": ("mariadb-primary",
                        lambda sandbox, tmp: mysqld_exporter(sandbox, "mariadb-primary", tmp)),
    "postgres_exporter": ("pg-primary", lambda sandbox, _tmp: postgres_exporter(sandbox,
                                                                                 "pg-primary")),
}


@pytest.mark.parametrize("compat", sorted(PEERS))
def test_promtool_finds_nothing_the_peer_does_not_have(sandbox: Sandbox, tmp_path: Path,
                                                       compat: str) -> None:
    target, start = PEERS[compat]
    with start(sandbox, tmp_path) as peer:
        theirs = peer.scrape()
    ours = _ours(sandbox, target, compat)
    shared = set(parse(theirs)) & set(parse(ours))
    assert len(shared) >= 2
    extra = _lint(_only(ours, shared)) - _lint(_only(theirs, shared))
    assert not extra, f"promtool finds in dbgauge's {compat} output only: {sorted(extra)}"


