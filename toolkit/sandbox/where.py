"""Where a checkout's demo sandbox lives, so that `make demo` works from any clone and
`make down` finds the sandbox `make demo` started.

The servers run as the `postgres` and `mysql` OS users when we are root, so their data
must be in a directory those users can reach: a clone in root's mode-700 home cannot hold
it. The choice, first that applies: the directory given (`make demo SANDBOX_DIR=...`); the
one the last demo of this checkout used (written in `<checkout>/.sandbox-dir`); the
checkout's `.sandbox` when the server users can reach it (or we are not root: the servers
then run as ourselves); else a directory of its own under /var/tmp named after the
checkout, and the caller says so. The choice is written back, so the next `make demo` and
`make down` agree with it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dbgauge.toolkit.sandbox.process import is_root, traversal_blocker

POINTER = ".sandbox-dir"  # in the checkout: where its demo sandbox lives
SERVER_USERS = ("postgres", "mysql")
FALLBACK_ROOT = Path("/var/tmp")


@dataclass(frozen=True)
class Where:
    """The demo sandbox's directory, and why it is not the checkout's `.sandbox` (empty
    when it is, or when it was given or chosen before)."""

    directory: Path
    note: str = ""


def fallback_dir(checkout: Path) -> Path:
    """A directory of the checkout's own under /var/tmp (kept across reboots, reachable by
    every user): two clones never share one."""
    digest = hashlib.sha256(str(checkout.resolve()).encode()).hexdigest()[:8]
    return FALLBACK_ROOT / f"dbgauge-sandbox-{digest}"


def _unreachable(path: Path, users: tuple[str, ...],
                 blocker: Callable[[Path, str], Path | None]) -> str:
    """'' when every server user can reach `path`'s nearest existing directory, else a
    sentence naming the directory that stops one."""
    existing = next(p for p in (path, *path.parents) if p.exists())
    for user in users:
        found = blocker(existing, user)
        if found is not None:
            return f"{found} lacks the x permission for the {user!r} OS user"
    return ""


def demo_dir(checkout: Path, given: str | None = None, *, record: bool = True,
             root: bool | None = None,
             blocker: Callable[[Path, str], Path | None] = traversal_blocker) -> Where:
    """The demo sandbox's directory for `checkout` (see the module's docstring); with
    `record`, written to `<checkout>/.sandbox-dir` for `make down` and the next demo."""
    pointer = checkout / POINTER
    if given:
        chosen = Where(Path(given).expanduser().resolve())
    elif pointer.is_file() and pointer.read_text().strip():
        return Where(Path(pointer.read_text().strip()))
    else:
        inside = (checkout / ".sandbox").resolve()
        why = _unreachable(inside, SERVER_USERS, blocker) if (
            is_root() if root is None else root) else ""
        if not why:
            return Where(inside)
        chosen = Where(fallback_dir(checkout),
                       f"{checkout.resolve()} is not reachable by the servers' OS users ({why}),"
                       f" so the sandbox keeps its data in {fallback_dir(checkout)}; move it "
                       "with make demo SANDBOX_DIR=DIR")
    if record:
        pointer.write_text(f"{chosen.directory}\n")
    return chosen
