"""The pure pgbouncer.ini check: every offline rule, stage by stage, over one configuration.

The rule modules register their conditions in `rules.RULES` when imported; importing
them here makes that registry complete before anything reads it. `check_pgbouncer`
needs nothing but the configuration and its `Environment`.
"""

from __future__ import annotations

import dbgauge.checks.pgbouncer.rules_auth as rules_auth
import dbgauge.checks.pgbouncer.rules_entries as rules_entries
import dbgauge.checks.pgbouncer.rules_hba as rules_hba
import dbgauge.checks.pgbouncer.rules_params as rules_params
import dbgauge.checks.pgbouncer.rules_pooling as rules_pooling
from dbgauge.checks.pgbouncer.model import Check, Environment, Out, PgbConfig
from dbgauge.checks.pgbouncer.rules import OFFLINE
from dbgauge.toolkit.result import Finding

# Imported for their registrations: the conditions of every offline stage.
RULE_MODULES = (rules_params, rules_entries, rules_auth, rules_hba, rules_pooling)


def check_pgbouncer(cfg: PgbConfig, env: Environment) -> list[Finding]:
    """Every offline check of one configuration; pure given `env`."""
    items: list[Finding] = []
    check = Check.of(cfg, env)
    for stage in OFFLINE:
        stage.run(check, lambda rule: Out(cfg, items, rule))
    return items
