"""`RULES`: every rule of `dbgauge validate innodb-cluster`, in one registry.

Each rule id is registered, with its one-line description, by the small condition
functions that report it (`@STAGE.rule("gr/...")`), in the module of their stage:
`kind` (Galera, or no Group Replication at all), `member_files` (what mysqld makes of
one member's option files), `member_rules` (dba.checkInstanceConfiguration()'s
requirements for one member), `member_gr` (one member's Group Replication options),
`group_rules` (across the members), `router` (mysqlrouter.conf) and `live` (what a live
server reports). `run.validate_innodb_cluster` runs them; the SARIF rule table and
docs/validate.md read `RULES` itself.
"""

from __future__ import annotations

from dbgauge.checks.innodb_cluster.model import Group, Member, Out, Rows, Server
from dbgauge.checks.innodb_cluster.routerconf import RouterConf
from dbgauge.checks.validation import Registry, Stage

RULES = Registry()

KIND: Stage[Group, Out] = RULES.stage("kind")  # what the files configure at all
MEMBER_FILES: Stage[Member, Out] = RULES.stage("member files")  # syntax, options by version
MEMBER: Stage[Member, Out] = RULES.stage("member")  # checkInstanceConfiguration()
MEMBER_GR: Stage[Member, Out] = RULES.stage("member gr")  # Group Replication options
PER_MEMBER = (MEMBER_FILES, MEMBER, MEMBER_GR)
GROUP: Stage[Group, Out] = RULES.stage("group")  # across the members
ROUTER: Stage[RouterConf, Out] = RULES.stage("router")  # mysqlrouter.conf

# --live: what the server itself reports.
SERVER: Stage[Server, Out] = RULES.stage("server")
GROUP_MEMBERS: Stage[Rows, Out] = RULES.stage("group members")
MEMBER_STATS: Stage[Rows, Out] = RULES.stage("member stats")
TABLES: Stage[Rows, Out] = RULES.stage("tables")
