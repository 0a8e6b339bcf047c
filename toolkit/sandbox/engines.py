"""The three engines of a sandbox put together: start or describe any instance by name,
and build the whole sandbox with MariaDB and PostgreSQL side by side."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dbgauge.toolkit.errors import SandboxError
from dbgauge.toolkit.redact import redact
from dbgauge.toolkit.sandbox.core import DB_ERRORS, Sandbox
from dbgauge.toolkit.sandbox.mariadb import MariaDB
from dbgauge.toolkit.sandbox.model import kind
from dbgauge.toolkit.sandbox.pgbouncer import PgBouncer
from dbgauge.toolkit.sandbox.postgres import Postgres
from dbgauge.toolkit.targets import fan_out

# What setting up or starting an instance may raise besides SandboxError.
SETUP_ERRORS = (*DB_ERRORS, OSError)


def start(sb: Sandbox, name: str) -> None:
    """Start one stopped, initialised instance and wait until it does its job."""
    engine = kind(name)
    if engine == "mariadb":
        MariaDB(sb).start(name)
    elif engine == "pg":
        Postgres(sb).start(name)
    else:
        PgBouncer(sb).start()


def describe(sb: Sandbox, name: str) -> str:
    """One-line account of what a running instance is doing."""
    engine = kind(name)
    if engine == "mariadb":
        return MariaDB(sb).describe(name)
    if engine == "pg":
        return Postgres(sb).describe(name)
    return PgBouncer(sb).describe()


def _up_postgres(sb: Sandbox) -> None:
    Postgres(sb).up()
    PgBouncer(sb).up()  # in front of pg-primary, so after it


def build(sb: Sandbox, root: Path, *, mariadb: bool = True) -> None:
    """Create/start whatever is missing, MariaDB (unless not wanted) and
    PostgreSQL/PgBouncer side by side (they are independent); every failure is reported,
    one alone as it was raised."""

    def guarded(step: tuple[Callable[[Sandbox], None], str]) -> None:
        work, what = step
        try:
            work(sb)
        except SETUP_ERRORS as exc:
            raise SandboxError(redact(f"setting up {what} in {root} failed: {exc}")) from exc

    steps: list[tuple[Callable[[Sandbox], None], str]] = [
        (_up_postgres, f"PostgreSQL {sb.pg.major}/PgBouncer")]
    if mariadb:
        steps.insert(0, (lambda s: MariaDB(s).up(), "MariaDB"))
    outcomes = fan_out(steps, guarded, max_workers=2, name="sandbox")
    errors = [exc for exc in outcomes if isinstance(exc, Exception)]
    if errors:
        if len(errors) == 1:
            raise errors[0]
        raise SandboxError("\n\n".join(str(e) for e in errors)) from errors[0]
