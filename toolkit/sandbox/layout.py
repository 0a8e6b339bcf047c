"""Where each instance keeps its files, and stopping exactly the processes we started.

These paths do not depend on ports or passwords, so `down` and `stop_instance` work from
the directory alone, even when sandbox.json or the secrets are gone. An instance is ours
only if its pid file names a live process whose command line names our data directory
(or, for PgBouncer, our ini file): a recycled pid is never signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from dbgauge.toolkit.errors import SandboxError
from dbgauge.toolkit.sandbox.model import kind
from dbgauge.toolkit.sandbox.process import alive, cmdline, read_pid, wait_gone

# Written into an instance's home once its accounts/replication are set up.
SETUP_MARK = "setup.done"


def service_user(engine: str) -> str:
    """The OS account a server of this engine runs as, when we are root."""
    return "mysql" if engine == "mariadb" else "postgres"


@dataclass(frozen=True)
class Layout:
    """Paths that do not depend on ports, so `down` works from the directory alone."""

    root: Path

    def home(self, name: str) -> Path:
        return self.root / name

    def datadir(self, name: str) -> Path:
        return self.home(name) if name == "pgbouncer" else self.home(name) / "data"

    def log(self, name: str) -> Path:
        engine = kind(name)
        if engine == "mariadb":
            return self.home(name) / "error.log"
        if engine == "pg":
            return self.home(name) / "postgresql.log"
        return self.home(name) / "pgbouncer.log"

    def pidfile(self, name: str) -> Path:
        engine = kind(name)
        if engine == "mariadb":
            return self.home(name) / "mariadbd.pid"
        if engine == "pg":
            return self.datadir(name) / "postmaster.pid"
        return self.home(name) / "pgbouncer.pid"

    def ini(self) -> Path:
        return self.home("pgbouncer") / "pgbouncer.ini"

    def setup_mark(self, name: str) -> Path:
        return self.home(name) / SETUP_MARK

    def initialised(self, name: str) -> bool:
        engine = kind(name)
        if engine == "mariadb":
            return (self.datadir(name) / "mysql").is_dir()
        if engine == "pg":
            return (self.datadir(name) / "PG_VERSION").exists()
        return self.ini().exists()

    def running_pid(self, name: str) -> int | None:
        """Pid of the instance if it runs and is ours (its cmdline names our data/config)."""
        pid = read_pid(self.pidfile(name))
        if pid is None or not alive(pid):
            return None
        engine = kind(name)
        if engine == "mariadb":
            marker = f"--datadir={self.datadir(name)}"
        elif engine == "pg":
            marker = str(self.datadir(name))
        else:
            marker = str(self.ini())
        return pid if marker in cmdline(pid) else None

    def stop(self, name: str) -> bool:
        """Stop our process for `name`: polite signal, then harder ones, then SIGKILL."""
        pid = self.running_pid(name)
        if pid is None:
            return False
        engine = kind(name)
        # Postgres: SIGINT is "fast" shutdown, SIGQUIT "immediate"; SIGTERM would wait for
        # clients. MariaDB and PgBouncer 1.18 shut down promptly on SIGTERM.
        steps = (
            [(signal.SIGINT, 30.0), (signal.SIGQUIT, 5.0)]
            if engine == "pg"
            else [(signal.SIGTERM, 30.0)]
        )
        for sig, timeout in [*steps, (signal.SIGKILL, 10.0)]:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            if wait_gone(pid, timeout):
                break
        else:
            raise SandboxError(f"{name} (pid {pid}) survived SIGKILL; look at {self.log(name)}")
        if engine != "pg":  # a killed mariadbd/pgbouncer leaves its pid file behind
            with contextlib.suppress(FileNotFoundError):
                if read_pid(self.pidfile(name)) == pid:
                    self.pidfile(name).unlink()
        return True
