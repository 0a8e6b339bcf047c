"""The pure pgbouncer.ini check: every rule, in order, over one configuration.

`RULES` is the one table of rule ids and their descriptions (the SARIF rule list);
`check_pgbouncer` runs the rule modules (`rules_params`, `rules_entries`, `rules_auth`,
`rules_pooling`) and needs nothing but the configuration and its `Environment`.
"""

from __future__ import annotations

from dbgauge.checks.pgbouncer.model import Environment, Out, PgbConfig
from dbgauge.checks.pgbouncer.rules_auth import check_auth
from dbgauge.checks.pgbouncer.rules_entries import (
    check_databases,
    check_min_pool,
    check_peers,
    check_users,
)
from dbgauge.checks.pgbouncer.rules_params import (
    check_duplicates,
    check_params,
    check_sections,
    check_syntax,
)
from dbgauge.checks.pgbouncer.rules_pooling import (
    check_paths,
    check_pooling,
    check_sizing,
    check_tls,
)
from dbgauge.toolkit.result import Finding

RULES: dict[str, str] = {
    "pgbouncer/syntax": "PgBouncer cannot parse this line",
    "pgbouncer/unknown-section": "Section PgBouncer does not know",
    "pgbouncer/unknown-key": "Parameter PgBouncer does not know",
    "pgbouncer/version": "Parameter or value not available in this PgBouncer version",
    "pgbouncer/bad-value": "Value PgBouncer rejects",
    "pgbouncer/out-of-range": "Number outside the accepted range",
    "pgbouncer/deprecated": "Deprecated parameter or value",
    "pgbouncer/duplicate": "Key set more than once; the last one wins",
    "pgbouncer/value-text": "Value contains text PgBouncer takes literally",
    "pgbouncer/database": "Invalid [databases] entry",
    "pgbouncer/user": "Invalid [users] entry",
    "pgbouncer/peer": "Invalid [peers] entry",
    "pgbouncer/auth": "Authentication setup that cannot work",
    "pgbouncer/auth-open": "Anyone who can reach the listener can log in",
    "pgbouncer/auth-file": "auth_file problem",
    "pgbouncer/hba": "auth_hba_file problem",
    "pgbouncer/admin": "Admin console access",
    "pgbouncer/pool-mode": "Pooling mode caveat",
    "pgbouncer/prepared-statements": "Protocol-level prepared statements",
    "pgbouncer/tls": "TLS setup that cannot work",
    "pgbouncer/client-tls": "Password logins from other hosts without client TLS",
    "pgbouncer/sizing": "Connection and file-descriptor sizing",
    "pgbouncer/path": "Relative path",
    "pgbouncer/files": "Files the config names: which were read, which are not available here",
    "pgbouncer/drift": "Running value differs from the file (RELOAD pending)",
    "pgbouncer/restart-pending": "Restart-only key differs from the file (restart pending)",
    "pgbouncer/live-databases": "Databases in the running pooler differ from the file",
    "pgbouncer/unreachable": "Backend server of a database does not accept connections",
}


def check_pgbouncer(cfg: PgbConfig, env: Environment) -> list[Finding]:
    """Every offline check of one configuration; pure given `env`."""
    out = Out(cfg)
    v = env.version
    check_syntax(cfg, out)
    check_sections(cfg, out, v)
    check_params(cfg, out, v)
    check_duplicates(cfg, out)
    dbs = check_databases(cfg, out, v)
    check_min_pool(cfg, out, v)
    check_users(cfg, out, v)
    check_peers(cfg, out, v)
    check_auth(cfg, env, out, dbs)
    check_pooling(cfg, out, v, dbs)
    check_tls(cfg, env, out)
    check_sizing(cfg, env, out, dbs)
    check_paths(cfg, env, out)
    return out.items
