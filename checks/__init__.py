"""Checks: what judges servers and configuration files, above the collectors.

`health/` (the health checks' one registry, a `HealthCheck` per module), `split_brain/`
(errant transactions, writable replicas, two primaries), `status/` (the fleet's topology),
`drift/` (`dbgauge checksum`), and the validators `pgbouncer/` and `innodb_cluster/` (one
rule registry each, shared parts in `validation`). `nodes` is the per-node fan-out every
check runs its servers on, with one vocabulary for a node that could not be checked;
`schedule` builds the jobs the daemon runs on an interval (scheduled checks and checksums).

Each package is split by responsibility (model, pure parsing, rules, live reads, the run
itself). Checks return data (`toolkit.result.CheckResult`); the CLI renders it
(`toolkit.render`) and maps it to an exit code. Checks read servers through the
collectors' facts (their modules' `read_*` functions), never through metric names.
"""
