"""`dbgauge validate pgbouncer`: a pgbouncer.ini checked the way PgBouncer reads it.

The package, bottom to top:

- `params`: the data table of every [pgbouncer] parameter by version (`table_version`);
- pure parsers: `tokens` (shared lexing), `ini` (pgbouncer.ini and `%include`),
  `connstr` (connection strings), `authfile` (auth_file), `hba` (auth_hba_file);
- `model`: the effective configuration (`PgbConfig`), its `Environment`, value checks,
  and what the rules read and write (`Check`, `LiveRows`, `Backends`; `Out`);
- `rules`: `RULES`, the one registry of rule ids, their descriptions and their
  conditions, and the stages the conditions run in;
- the conditions, one small function per condition, each registered under its rule id:
  `rules_params` (syntax, sections, [pgbouncer] parameters, duplicates),
  `rules_entries` ([databases], [users], [peers]), `rules_auth` (auth_type, auth_file,
  admin console), `rules_hba` (the HBA file), `rules_pooling` (pooling, TLS, sizing,
  paths), and `live` (the file against the running pooler, plus its I/O);
- `check`: runs the offline stages (`check_pgbouncer`);
- `run`: options, reading the files, `validate_pgbouncer`.

Submodules import their siblings, never this package.
"""

from __future__ import annotations

from dbgauge.checks.pgbouncer.check import check_pgbouncer
from dbgauge.checks.pgbouncer.live import compare_show_config, compare_show_databases
from dbgauge.checks.pgbouncer.model import Environment, PgbConfig, build_config
from dbgauge.checks.pgbouncer.rules import RULES
from dbgauge.checks.pgbouncer.run import PgbouncerOptions, load_config, validate_pgbouncer
from dbgauge.checks.pgbouncer.tokens import Problem

__all__ = ["RULES", "Environment", "PgbConfig", "PgbouncerOptions", "Problem",
           "build_config", "check_pgbouncer", "compare_show_config",
           "compare_show_databases", "load_config", "validate_pgbouncer"]
