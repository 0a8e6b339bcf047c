"""`RULES`: every rule of `dbgauge validate pgbouncer`, in one registry.

Each rule id is registered, with its one-line description, by the small condition
functions that report it (`@STAGE.rule("pgbouncer/...")`), in the module of their
theme: `rules_params` (the file as a whole and its [pgbouncer] settings),
`rules_entries` ([databases], [users], [peers]), `rules_auth` (authentication, auth_file,
admin console), `rules_hba` (the HBA file), `rules_pooling` (pooling, TLS, sizing,
paths) and `live` (the running pooler). `check.check_pgbouncer` runs the offline stages
below, in this order; the SARIF rule table and docs/validate.md read `RULES` itself.
"""

from __future__ import annotations

from dbgauge.checks.pgbouncer.model import Backends, Check, LiveRows, Out
from dbgauge.checks.validation import Registry, Stage

RULES = Registry()

# Offline: one configuration and its surroundings (`Check`).
FILE: Stage[Check, Out] = RULES.stage("file")  # syntax, sections, [pgbouncer] settings
ENTRIES: Stage[Check, Out] = RULES.stage("entries")  # [databases], [users], [peers]
AUTH: Stage[Check, Out] = RULES.stage("auth")  # auth_type, auth_file, admin console
HBA: Stage[Check, Out] = RULES.stage("hba")  # auth_hba_file
POOLING: Stage[Check, Out] = RULES.stage("pooling")  # pool modes, TLS, sizing, paths
OFFLINE = (FILE, ENTRIES, AUTH, HBA, POOLING)

# --live: the file against what the running pooler reports.
SHOW_CONFIG: Stage[LiveRows, Out] = RULES.stage("show config")
SHOW_DATABASES: Stage[LiveRows, Out] = RULES.stage("show databases")
BACKENDS: Stage[Backends, Out] = RULES.stage("backends")
