"""Operating-system helpers of the sandbox: commands, pids, ports, waits, private files.

The sandbox starts real servers as child processes and must stop exactly those it
started, never another process that happens to reuse a pid or a port. These helpers know
nothing of database engines: they run commands (as `postgres` when we are root), read
/proc, wait with deadlines, write secrets 0600 and serialise commands on one directory.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pwd
import socket
import stat
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

from dbgauge.toolkit.errors import SandboxError

START_TIMEOUT = 60.0
REPLICATION_TIMEOUT = 30.0

_T = TypeVar("_T")


def is_root() -> bool:
    return os.geteuid() == 0


def socket_user() -> str:
    """The OS account whose name unix_socket authentication logs us in as."""
    return "root" if is_root() else pwd.getpwuid(os.geteuid()).pw_name


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_bytes()[-16384:].decode("utf-8", "replace")
    except OSError:
        return "(log file does not exist)"
    return "\n".join(text.splitlines()[-lines:]) or "(log file is empty)"


def text_tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def chown(path: Path, user: str, *, recursive: bool = False) -> None:
    """As root, hand a directory to the account the server drops to; no-op otherwise."""
    if not is_root():
        return
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    if recursive:
        for parent, dirs, files in os.walk(path):
            for child in (*dirs, *files):
                os.lchown(os.path.join(parent, child), entry.pw_uid, entry.pw_gid)


def as_postgres(args: list[str]) -> list[str]:
    """PostgreSQL and PgBouncer refuse to run as root: as root, run them as `postgres`."""
    return ["runuser", "-u", "postgres", "--", *args] if is_root() else args


def pg_env(password: str | None = None) -> dict[str, str]:
    """Environment without the caller's PG* variables, which would redirect our tools."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if password is not None:
        env["PGPASSWORD"] = password
    return env


def run(
    args: list[str],
    what: str,
    *,
    postgres_user: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    """Run a command to completion (at most START_TIMEOUT); its stdout, or SandboxError
    with the end of its output."""
    cmd = as_postgres(args) if postgres_user else args
    try:
        proc = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=None if env is None else dict(env),
            cwd=cwd,
            timeout=START_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SandboxError(f"{what}: {args[0]} did not finish in {START_TIMEOUT:.0f} s") from exc
    except OSError as exc:
        raise SandboxError(f"{what}: cannot run {cmd[0]}: {exc}") from exc
    if proc.returncode != 0:
        output = text_tail(proc.stdout + "\n" + proc.stderr)
        raise SandboxError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{output}")
    return proc.stdout


# Servers we spawned directly (mariadbd): polling reaps them, so a stopped one never
# lingers as a zombie that would still look alive in /proc.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def spawn(args: list[str], output: Path, cwd: Path) -> subprocess.Popen[bytes]:
    """Start a server that does not daemonise itself, its output appended to `output`."""
    with open(output, "ab") as out:
        child = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            start_new_session=True,  # not killed by the caller's Ctrl-C
        )
    _CHILDREN[child.pid] = child
    return child


def port_in_use(port: int) -> bool:
    """True if something listens on 127.0.0.1:port (SO_REUSEADDR ignores TIME_WAIT)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            return exc.errno == errno.EADDRINUSE
    return False


def alive(pid: int) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        del _CHILDREN[pid]
        return False
    try:
        proc_stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = proc_stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] not in ("Z", "X")


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def read_pid(path: Path) -> int | None:
    try:
        first = path.read_text().split("\n", 1)[0].strip()
    except OSError:
        return None
    return int(first) if first.isdigit() else None


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def poll(check: Callable[[], _T | None], timeout: float, interval: float = 0.1) -> _T | None:
    """Call `check` until it returns non-None or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result is not None or time.monotonic() > deadline:
            return result
        time.sleep(interval)


def write_private(path: Path, text: str) -> None:
    """Atomically write a file readable only by its owner (it holds passwords)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def write_public(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def traversal_blocker(path: Path, user: str) -> Path | None:
    """First directory on `path` that `user` cannot search, or None if all are fine."""
    entry = pwd.getpwnam(user)
    groups = set(os.getgrouplist(user, entry.pw_gid))
    for part in [*reversed(path.parents), path]:
        st = part.stat()
        if st.st_uid == entry.pw_uid:
            bit = stat.S_IXUSR
        elif st.st_gid in groups:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not st.st_mode & bit:
            return part
    return None


def prepare_dir(directory: Path) -> Path:
    """Create the sandbox directory (0755) and check the servers' accounts can reach it."""
    root = directory.resolve()
    if root.exists() and not root.is_dir():
        raise SandboxError(f"{root} exists and is not a directory: pass another --dir")
    missing = [p for p in [root, *root.parents] if not p.exists()]
    for part in reversed(missing):
        part.mkdir()
        part.chmod(0o755)
    if is_root():
        for user in ("postgres", "mysql"):
            blocker = traversal_blocker(root, user)
            if blocker is not None:
                raise SandboxError(
                    f"{root} is not traversable by the {user!r} OS user ({blocker} lacks the x "
                    f"permission for it), and the servers run as {user}: pass another --dir, "
                    "e.g. --dir /tmp/dbgauge-sandbox, or `chmod o+x` the blocking directory"
                )
    return root


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """Serialise sandbox commands on one directory (two `up`s would race on init)."""
    with open(root / ".lock", "a") as handle:
        deadline = time.monotonic() + 120
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SandboxError(
                        f"another dbgauge sandbox command holds {root / '.lock'}: wait for it"
                    ) from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
