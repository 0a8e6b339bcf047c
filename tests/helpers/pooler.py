"""Start the real PgBouncer (the sandbox's Debian binary) on a configuration file and say
whether it came up: the ground truth for every "refuses to start" / "starts" finding.

The file is copied into a private directory with only what a test run needs changed in
its last [pgbouncer] section: a loopback listener on this test run's port, the socket and
pid next to it, a log file, the OS user it runs as. Keys already there are rewritten on
their own line; the others are inserted right after the section header (a second
[pgbouncer] section would not do: PgBouncer resets every setting at each header), and
`Outcome.original_line` maps PgBouncer's line numbers back to the original file's.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dbgauge.toolkit.sandbox.binaries import PGBOUNCER
from dbgauge.toolkit.sandbox.process import as_postgres, is_root
from tests.helpers.ports import BASE_PORT

# Next to the sandbox's own ports (base + 3306 ... base + 6432), never one of them.
PORT = BASE_PORT + 6433
UP = "process up:"
DEADLINE = 15.0


@dataclass(frozen=True)
class Outcome:
    started: bool
    log: str
    port: int
    directory: Path
    inserted_at: int  # lines after this one moved down by `inserted`
    inserted: int

    def original_line(self, line: int) -> int:
        return line - self.inserted if line > self.inserted_at else line


def _rewrite(text: str, settings: dict[str, str]) -> tuple[str, int, int]:
    """(text, header line, lines inserted) with `settings` in the last [pgbouncer] section."""
    lines = text.split("\n")
    headers = [i for i, ln in enumerate(lines) if re.match(r"\s*\[pgbouncer\]", ln)]
    if not headers:
        lines += ["[pgbouncer]"]
        headers = [len(lines) - 1]
    start = headers[-1]
    end = next((i for i in range(start + 1, len(lines))
                if re.match(r"\s*\[", lines[i])), len(lines))
    todo = dict(settings)
    for i in range(start + 1, end):
        m = re.match(r"\s*([A-Za-z_]+)\s*=", lines[i])
        if m and m.group(1) in todo:
            lines[i] = f"{m.group(1)} = {todo.pop(m.group(1))}"
    added = [f"{k} = {v}" for k, v in todo.items()]
    lines[start + 1:start + 1] = added
    return "\n".join(lines), start + 1, len(added)


@contextlib.contextmanager
def pgbouncer_on(config: Path, extra: dict[str, str] | None = None,
                 files: tuple[Path, ...] = ()) -> Iterator[Outcome]:
    """Run PgBouncer on a copy of `config` (with `files` beside it, as relative paths in
    the config expect) until it is up or has exited; yield what happened, then stop it."""
    work = Path(tempfile.mkdtemp(prefix="dbgauge-pgb-"))
    work.chmod(0o755)  # PgBouncer runs as postgres when the tests run as root
    try:
        for f in files:
            shutil.copy(f, work / f.name)
        ini = work / "pgbouncer.ini"
        user = "postgres" if is_root() else getpass.getuser()
        settings = {"listen_addr": "127.0.0.1", "listen_port": str(PORT),
                    "unix_socket_dir": str(work), "pidfile": str(work / "pgbouncer.pid"),
                    "logfile": str(work / "pgbouncer.log"), "user": user, **(extra or {})}
        text, at, inserted = _rewrite(config.read_text(), settings)
        ini.write_text(text)
        if is_root():
            shutil.chown(work, "postgres")
            for f in work.iterdir():
                shutil.chown(f, "postgres")
        out = work / "stdout.txt"
        with out.open("wb") as sink:
            proc = subprocess.Popen(as_postgres([str(PGBOUNCER), str(ini)]), cwd=work,
                                    stdin=subprocess.DEVNULL, stdout=sink,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        try:
            started = False
            deadline = time.monotonic() + DEADLINE
            while time.monotonic() < deadline:
                text = _log(work)
                if UP in text:
                    started = True
                    break
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
            else:
                raise AssertionError(f"PgBouncer neither came up nor exited:\n{_log(work)}")
            yield Outcome(started, _log(work), PORT, work, at, inserted)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)  # runuser and the PgBouncer it runs
                proc.wait(timeout=15)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _log(work: Path) -> str:
    parts = [p.read_text(errors="replace") for p in (work / "stdout.txt",
                                                     work / "pgbouncer.log") if p.exists()]
    return "\n".join(parts)
