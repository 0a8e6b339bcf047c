"""`dbgauge validate innodb-cluster`: InnoDB Cluster (Group Replication) member configurations.

MySQL Shell's `dba.checkInstanceConfiguration()` needs a running server; this validator
applies the same requirements (by server version) to my.cnf files before deployment,
and across all member files at once: unique server_id/report_host/local_address, one
group name, matching modes, seeds that cover the members, a sensible member count,
read replicas counted apart, and MySQL Router's routing sections. With --live the same
rules run on SHOW GLOBAL VARIABLES, plus the group's own view of itself.

The package, bottom to top:

- `options`: the option/version data table; `mycnf`: what mysqld makes of option files;
- `model`: `Member` (one server's settings, from files or live), `Group`, the live
  `Server` and `Rows`, and `Out` (where one rule's findings go); `routerconf`:
  mysqlrouter.conf's sections beside the members;
- `rules`: `RULES`, the one registry of rule ids, their descriptions and their
  conditions, and the stages the conditions run in;
- the conditions, one small function per condition, each registered under its rule id:
  `kind` (Galera, or no Group Replication), `member_files` (syntax, includes, options by
  version), `member_rules` (checkInstanceConfiguration()'s requirements, read replicas;
  `check_member`), `member_gr` (Group Replication options), `group_rules` (across the
  members), `router` (mysqlrouter.conf), `live` (what a live server reports, plus the
  one read);
- `run`: reading the files, `validate_innodb_cluster`.

Submodules import their siblings, never this package.
"""

from __future__ import annotations

from dbgauge.checks.innodb_cluster.model import version_for
from dbgauge.checks.innodb_cluster.rules import RULES
from dbgauge.checks.innodb_cluster.run import ClusterOptions, validate_innodb_cluster

__all__ = ["RULES", "ClusterOptions", "validate_innodb_cluster", "version_for"]
