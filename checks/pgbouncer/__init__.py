"""`dbgauge validate pgbouncer`: a pgbouncer.ini checked the way PgBouncer reads it.

The package is split by responsibility, bottom to top:

- `params`: the data table of every [pgbouncer] parameter by version (`table_version`);
- pure parsers: `tokens` (shared lexing), `ini` (pgbouncer.ini and `%include`),
  `connstr` (connection strings), `authfile` (auth_file), `hba` (auth_hba_file);
- `model`: the effective configuration (`PgbConfig`), its `Environment`, value checks;
- rules by theme: `rules_params` (syntax, sections, parameters), `rules_entries`
  ([databases], [users], [peers]), `rules_auth` (auth, admin console, HBA),
  `rules_pooling` (pooling, TLS, sizing, paths); `check` runs them all and holds `RULES`;
- `live`: the file against the running pooler (pure comparisons plus the I/O);
- `run`: options, reading the files, `validate_pgbouncer`.

Submodules import their siblings, never this package.
"""

from __future__ import annotations

from dbgauge.checks.pgbouncer.check import RULES, check_pgbouncer
from dbgauge.checks.pgbouncer.live import compare_show_config, compare_show_databases
from dbgauge.checks.pgbouncer.model import Environment, PgbConfig, build_config
from dbgauge.checks.pgbouncer.run import PgbouncerOptions, load_config, validate_pgbouncer
from dbgauge.checks.pgbouncer.tokens import Problem

__all__ = ["RULES", "Environment", "PgbConfig", "PgbouncerOptions", "Problem",
           "build_config", "check_pgbouncer", "compare_show_config",
           "compare_show_databases", "load_config", "validate_pgbouncer"]
