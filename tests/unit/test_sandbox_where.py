"""Where a checkout's demo sandbox lives (`make demo`, `make down`), and where a checkout's
test sandboxes live (`make test`): pure choices, no server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dbgauge.toolkit.sandbox.where import POINTER, demo_dir, fallback_dir
from tests.helpers.ports import SLOTS, checkout_base, claim, claimed_by


def blocked_below(top: Path) -> Callable[[Path, str], Path | None]:
    """A traversal check where `top` (a mode-700 home) stops the server users."""
    def blocker(path: Path, user: str) -> Path | None:
        return top if path == top or top in path.parents else None
    return blocker


def test_a_clone_in_a_mode_700_home_keeps_its_sandbox_elsewhere_and_says_so(
        tmp_path: Path) -> None:
    home = tmp_path / "root"
    clone = home / "dbgauge"
    clone.mkdir(parents=True)
    where = demo_dir(clone, root=True, blocker=blocked_below(home))
    assert where.directory == fallback_dir(clone)
    assert str(where.directory).startswith("/var/tmp/dbgauge-sandbox-")
    assert f"{home} lacks the x permission for the 'postgres' OS user" in where.note
    assert "make demo SANDBOX_DIR=DIR" in where.note
    # remembered: make down and the next make demo find it, and say nothing more
    assert (clone / POINTER).read_text() == f"{where.directory}\n"
    again = demo_dir(clone, root=True, blocker=blocked_below(home))
    assert again.directory == where.directory and again.note == ""
    assert fallback_dir(tmp_path / "other") != where.directory  # two clones, two sandboxes


def test_a_reachable_clone_keeps_dot_sandbox_and_a_given_dir_wins(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    assert demo_dir(clone, root=True, blocker=lambda p, u: None).directory == \
        clone.resolve() / ".sandbox"
    assert demo_dir(clone, root=False, blocker=blocked_below(tmp_path)).directory == \
        clone.resolve() / ".sandbox"  # not root: the servers run as ourselves
    assert not (clone / POINTER).exists()  # nothing to remember
    moved = demo_dir(clone, str(tmp_path / "elsewhere"), root=True, blocker=lambda p, u: None)
    assert moved.directory == tmp_path / "elsewhere" and moved.note == ""
    assert demo_dir(clone).directory == tmp_path / "elsewhere"  # make down finds it
    # --existing (make down): a given directory is used, not remembered
    demo_dir(clone, str(tmp_path / "once"), record=False)
    assert demo_dir(clone).directory == tmp_path / "elsewhere"


def test_checkouts_get_their_own_test_ports_and_a_shared_one_is_named(tmp_path: Path) -> None:
    bases = {checkout_base(Path(p)) for p in ("/check/work/main", "/work/main", "/root/x")}
    assert len(bases) == 3
    assert all(10000 <= b <= 10000 + 40 * (SLOTS - 1) for b in bases)
    # ports are base + 3306/3307/5432/5433/5434/6432 (+2000 for the sandbox tests): two
    # bases of this scheme (workers +10 each, up to 4) never share one
    offsets = {o + extra for o in (3306, 3307, 5432, 5433, 5434, 6432) for extra in (0, 2000)}
    worst = 40 * (SLOTS - 1) + 30
    assert not {a - b for a in offsets for b in offsets} & set(range(10, worst + 1, 10))
    claim(tmp_path, Path("/work/a"))
    assert claimed_by(tmp_path, Path("/work/b"), running=True) == "/work/a"
    assert claimed_by(tmp_path, Path("/work/b"), running=False) is None
    assert claimed_by(tmp_path, Path("/work/a"), running=True) is None
