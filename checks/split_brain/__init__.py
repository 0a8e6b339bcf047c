"""check split-brain: writes accepted by a node that is not the topology's one primary.

Findings, each naming the node and the evidence:

- errant-transactions (CRITICAL): a replica holds transactions its source never had.
  MySQL: GTID_SUBTRACT(replica gtid_executed, sources' gtid_executed); MariaDB: per
  (domain, server_id), the replica's gtid_binlog_state beyond the sources' state. The
  replica is read before its sources (a second read of each source follows all first
  reads), and a source only gains transactions: that order cannot give a false positive.
  Where the binlog is readable the exact errant GTIDs, the first one's position, time and
  a one-line summary are added.
- writable-replica (WARNING): read_only (and super_read_only) off on a replicating node.
- multiple-primaries (CRITICAL): two MySQL-family nodes of one topology (linked by
  replication or by shared GTID history) both writable and replicating from no one; two
  PostgreSQL nodes out of recovery with the same system identifier.
- timeline-divergence (CRITICAL): a PostgreSQL standby on another timeline than its
  upstream, or whose replay position is ahead of the upstream's current WAL.
- concurrent-heartbeat-writers (CRITICAL): heartbeat rows of two server_ids advancing.

Remediation hints go into each finding's `fix`; dbgauge prints them and never runs them.
The pure analysis is apart from the reads, so it is unit-tested on captured values:
`model` (what is read and concluded), `mysql` (topologies, errant transactions and their
findings), `binlog` (the replica's binlog as evidence), `postgres`, `heartbeats`,
`address` (is this host:port that node), `reads` (snapshot, reread) and `run`
(`check_split_brain`). This module only names the entry points.
"""

from __future__ import annotations

from dbgauge.checks.split_brain.model import APPLIES_TO, KINDS, NAME
from dbgauge.checks.split_brain.run import DEFAULT_HEARTBEAT_WAIT, check_split_brain

__all__ = ["APPLIES_TO", "DEFAULT_HEARTBEAT_WAIT", "KINDS", "NAME", "check_split_brain"]
