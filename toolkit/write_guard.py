"""Writers check before they write: the one guard every dbgauge writer runs before its
first write and again before each later one -- the heartbeat writer (`dbgauge heartbeat
update`, the daemon's `heartbeat: {mode: write}` targets, --create-table), the replicated
checksum on its source (`dbgauge checksum`, the daemon's `checksums:` jobs), and
`pgtap run --install-pgtap`.

Why refuse rather than let the server decide: an account with SUPER (MySQL:
CONNECTION_ADMIN; MariaDB: READ ONLY ADMIN) writes straight through `read_only`, and a write
on a replica is an errant transaction -- in no other server's GTID set, a split-brain
check goes CRITICAL on it, and a replica in gtid_strict_mode can stop replicating over it.
So dbgauge refuses by default, as pt-heartbeat does with --check-read-only, unless the
operator says this server is meant to take dbgauge's writes anyway (`--allow-read-only`,
config `allow_read_only: true`).

No option helps where no account can write: MySQL's super_read_only and a PostgreSQL
server in recovery (a standby). The message says so instead of offering the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.values import flag, text
from dbgauge.toolkit.errors import WriteRefused

ALLOW_OPTION = "pass --allow-read-only"


@dataclass(frozen=True)
class WriteState:
    """Why a server refuses writes, as read from it: each setting that makes it read-only
    as `name=value` (or "in recovery"); empty when it takes writes."""

    found: tuple[str, ...] = ()
    absolute: bool = False  # no account can write (super_read_only, a standby)
    standby: bool = False  # PostgreSQL in recovery

    @property
    def writable(self) -> bool:
        return not self.found


def _on(value: object) -> bool:
    """A read-only setting that is on: anything but NULL and a server boolean that is off
    (a value dbgauge cannot read counts as read-only: refusing is the safe side)."""
    return value is not None and flag(value) is not False


def _shown(value: object) -> str:
    """read_only's value as the server's SHOW VARIABLES spells it (1 -> ON)."""
    word = text(value).strip()
    return "ON" if word.lower() in ("1", "true", "on") else word.upper()


def parse_write_state(flavor: str, row: Mapping[str, Any]) -> WriteState:
    """The write_guard row of `flavor` -> WriteState (pure)."""
    if flavor == "postgres":
        found: list[str] = []
        standby = _on(row.get("in_recovery"))
        if standby:
            found.append("in recovery (pg_is_in_recovery() is true)")
        if _on(row.get("default_transaction_read_only")):
            found.append("default_transaction_read_only=on")
        return WriteState(tuple(found), absolute=standby, standby=standby)
    found = []
    if _on(row.get("read_only")):
        found.append(f"read_only={_shown(row.get('read_only'))}")
    super_ro = _on(row.get("super_read_only"))
    if super_ro:
        found.append("super_read_only=ON")
    return WriteState(tuple(found), absolute=super_ro)


def read_write_state(conn: Connection) -> WriteState:
    """Whether the server behind `conn` refuses writes (no privilege needed to ask)."""
    rows = conn.query("write_guard")
    return parse_write_state(conn.server.flavor, rows[0] if rows else {})


def refusal(state: WriteState, what: str, where: str, override: str | None) -> str:
    """The message of a refused write: what was found, why it matters, what to do."""
    found = ", ".join(state.found)
    if state.standby:
        why = "it is a standby"
    elif state.absolute:
        why = "no account can write there"
    elif any(f.startswith("default_transaction_read_only") for f in state.found):
        why = "its transactions are read-only by default"
    else:
        why = ("it is a replica or a demoted primary, and a write there is an errant "
               "transaction (check split-brain goes CRITICAL on it)")
    todo = "run it against the primary"
    if state.absolute:
        todo += " (no option makes this server take writes)"
    elif override is not None:
        todo += f", or {override} if this server is meant to take dbgauge's writes anyway"
    return f"refusing to {what} on {where}: the server is read-only ({found}): {why}; {todo}"


def check_writable(conn: Connection, what: str, where: str, *, allow_read_only: bool = False,
                   override: str | None = ALLOW_OPTION) -> WriteState:
    """Raise WriteRefused unless the server behind `conn` takes writes, or is read-only in
    a way `allow_read_only` lets dbgauge write through (then its state is returned, for the
    caller to mention). `what` is the write ("write the heartbeat row"), `where` the server
    ("target db2"), `override` how the caller's user allows it (None: they cannot)."""
    state = read_write_state(conn)
    if state.writable or (allow_read_only and not state.absolute and override is not None):
        return state
    raise WriteRefused(refusal(state, what, where, override))
