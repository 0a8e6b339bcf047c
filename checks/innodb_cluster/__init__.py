"""`dbgauge validate innodb-cluster`: InnoDB Cluster (Group Replication) member configurations.

MySQL Shell's `dba.checkInstanceConfiguration()` needs a running server; this validator
applies the same requirements (by server version) to my.cnf files before deployment,
and across all member files at once: unique server_id/report_host/local_address, one
group name, matching modes, seeds that cover the members, a sensible member count,
read replicas counted apart, and MySQL Router's routing sections. With --live the same
rules run on SHOW GLOBAL VARIABLES, plus the group's own view of itself.

The modules, in the order they depend on each other: `options` (the option/version data
table), `mycnf` (pure my.cnf parsing), `model` (Setting, Member, the rule ids),
`member_rules`, `group_rules`, `router` (pure rules), `live` (the group's view: pure
interpretation plus the one read) and `run` (reading files, the whole command).
"""

from __future__ import annotations

from dbgauge.checks.innodb_cluster.model import RULES, version_for
from dbgauge.checks.innodb_cluster.run import ClusterOptions, validate_innodb_cluster

__all__ = ["RULES", "ClusterOptions", "validate_innodb_cluster", "version_for"]
