"""How a replica follows the source: MySQL-family replication, a PostgreSQL streaming
standby, a logical subscriber, or nothing (a copy compared as is).

A link tells whether the replica still replicates (a stopped replica is never waited for:
the run stops with a message saying what to start), its lag, and waits until the replica
has applied everything the source had at some position, which is how in-flight writes
are told apart from drift.
"""

from __future__ import annotations

import time

from dbgauge.checks.drift.model import DriftError, ReplicationStopped
from dbgauge.checks.drift.sides import Side
from dbgauge.collectors.mysql_replication import ReplicaStatus, read_channels
from dbgauge.toolkit.db.values import text as _text
from dbgauge.toolkit.errors import QueryError


class Link:
    """How a replica follows the source: how to tell it is running, its lag, and how to
    wait until it has applied everything the source had at some point."""

    def __init__(self, replica: Side, kind: str, detail: str = "") -> None:
        self.replica = replica
        self.kind = kind  # mysql | pg-physical | pg-logical | none
        self.detail = detail

    @property
    def follows(self) -> bool:
        return self.kind != "none"

    def check(self) -> float | None:
        """Lag in seconds (None when unknown); raises ReplicationStopped."""
        rep = self.replica
        if self.kind == "mysql":
            channels = replica_channels(rep)
            for st in channels:
                if not st.io_running or not st.sql_running:
                    errno = st.last_sql_errno or st.last_io_errno
                    raise ReplicationStopped(
                        f"replication on replica {rep.name} is stopped (IO thread "
                        f"{st.io_thread}, SQL thread {'Yes' if st.sql_running else 'No'}"
                        f"{f', last error {errno}' if errno else ''}): start it (START "
                        "REPLICA / START SLAVE) and run the check again; a stopped replica is "
                        "never waited for")
            lags = [st.seconds_behind for st in channels if st.seconds_behind is not None]
            return max(lags) if lags else None
        if self.kind == "pg-physical":
            row = rep.q("replication_local")[0]
            if _text(row.get("wal_receiver_status")) != "streaming":
                raise ReplicationStopped(
                    f"standby {rep.name} is not streaming from its primary (WAL receiver: "
                    f"{_text(row.get('wal_receiver_status')) or 'not running'}): fix "
                    "replication and run the check again")
            lag = row.get("lag_seconds")
            return None if lag is None else float(lag)
        if self.kind == "pg-logical":
            state = rep.q("checksum_replica_state")[0]
            if int(state["disabled"]) or int(state["apply_workers"]) < int(
                    state["subscriptions"]):
                raise ReplicationStopped(
                    f"logical replication into {rep.name} is stopped ("
                    f"{int(state['disabled'])} disabled subscription(s), "
                    f"{int(state['apply_workers'])} of {int(state['subscriptions'])} apply "
                    "workers running): enable the subscription / look at the subscriber's "
                    "log, and run the check again")
        return None

    def wait(self, pos: str, timeout: float, *, fail: bool = True) -> bool:
        """Until the replica has applied the source's position `pos` (checking that it still
        replicates); False on timeout when `fail` is off."""
        deadline = time.monotonic() + timeout
        checked = time.monotonic()
        delay = 0.005
        while True:
            if self.kind == "mysql":  # the server waits, a second at most per call
                slice_ = max(0.001, min(1.0, deadline - time.monotonic()))
                result = self.replica.q("checksum_wait_position", (pos, slice_))[0]["result"]
                if result is not None and int(result) == 0:
                    return True
            elif self.replica.q("checksum_replica_reached", (pos,))[0]["reached"]:
                return True
            now = time.monotonic()
            if now - checked >= 1.0 or now >= deadline:
                self.check()
                checked = now
            if now >= deadline:
                if not fail:
                    return False
                raise DriftError(
                    f"replica {self.replica.name} did not reach the source's position {pos} "
                    f"within {timeout:g} s (--max-wait): it is lagging, or its SQL thread is "
                    "blocked (a lock, FLUSH TABLES WITH READ LOCK); run the check when it "
                    "has caught up, or raise --max-wait")
            if self.kind != "mysql":
                time.sleep(delay)
                delay = min(0.05, delay * 2)


def replica_channels(side: Side) -> tuple[ReplicaStatus, ...]:
    """The replica's channels as the replication collector reads them (an access-denied
    error names the privilege), the error prefixed with which side it was."""
    try:
        return read_channels(side.conn)
    except QueryError as exc:
        raise exc.again(f"{side.role} {side.name}: {exc}") from None


def link(source: Side, replica: Side) -> Link:
    """How `replica` follows `source`, found from both servers' own state."""
    if replica.mysql and source.mysql:
        channels = replica_channels(replica)
        if not channels:
            return Link(replica, "none", f"{replica.name} is not a replica: compared as is")
        _, server_id = source.position()
        ids = {c.source_server_id for c in channels}
        if server_id is not None and server_id not in ids:
            return Link(replica, "none",
                        f"{replica.name} replicates from server_id "
                        f"{', '.join(str(i) for i in sorted(x for x in ids if x))}, not from "
                        f"the source (server_id {server_id}): compared without waiting for "
                        "its position")
        return Link(replica, "mysql")
    if not replica.mysql and not source.mysql:
        state = replica.q("checksum_replica_state")[0]
        if state["in_recovery"]:
            return Link(replica, "pg-physical")
        if int(state["subscriptions"]) == 1:
            return Link(replica, "pg-logical")
        if int(state["subscriptions"]) > 1:
            return Link(replica, "none", f"{replica.name} has several subscriptions: compared "
                                         "without waiting for a position")
        return Link(replica, "none")
    return Link(replica, "none")
