"""The composition root: where the core is handed what the layers above it provide.

The core (`toolkit/`) knows nothing of `collectors/` or `checks/`. This module (with the
CLI, the only part of the core allowed to look up) gives it the collector registry, the
catalog the config is checked against, and the builders of scheduled jobs, the way
prometheus/client_python hands a registry to its collectors. Imports of the layers above
happen inside the functions, so a command pays only for what it uses.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dbgauge.toolkit.config import Catalog, Config
from dbgauge.toolkit.config import load_config as _load_config
from dbgauge.toolkit.config import parse_config as _parse_config

if TYPE_CHECKING:  # the daemon's parts: a one-shot command that loads a config needs none
    from dbgauge.checks.schedule import ScheduledCheck
    from dbgauge.toolkit.exporter.wiring import Wiring
    from dbgauge.toolkit.jobs import Job, JobSnapshot
    from dbgauge.toolkit.registry import Registry
    from dbgauge.toolkit.targets import Target


def registry() -> Registry:
    """Every collector (discovered once, on first use)."""
    from dbgauge.collectors import registry as discover

    return discover()


def _collector_names(kind: str) -> frozenset[str]:
    from dbgauge.collectors import names  # from the module names: no collector imported

    return names(kind)


def _collector_options(name: str, options: Mapping[str, object]) -> None:
    registry()[name].check_options(options)


def scheduled_checks() -> Mapping[str, ScheduledCheck]:
    """Every check the daemon can run on a schedule (`checks:`): split-brain, then the
    health checks of the registry."""
    from dbgauge.checks.health import health_checks
    from dbgauge.checks.schedule import scheduled_health
    from dbgauge.checks.split_brain.metrics import SCHEDULED

    return {SCHEDULED.name: SCHEDULED,
            **{name: scheduled_health(check) for name, check in health_checks().items()}}


def _check_job(check: str, warning: float | str | None, critical: float | str | None,
               options: Mapping[str, object]) -> None:
    from dbgauge.checks.schedule import validate_check_job

    validate_check_job(scheduled_checks(), check, warning, critical, options)


def dialect_kinds() -> Mapping[str, str]:
    """The peer exporters dbgauge speaks (`--compat`), each with its target kind."""
    return {name: d.kind for name, d in registry().dialects.items()}


CATALOG = Catalog(collectors=_collector_names, collector_options=_collector_options,
                  check_job=_check_job, dialects=dialect_kinds)


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """The config file at `path` (or $DBGAUGE_CONFIG), checked against the collectors and
    checks this install has."""
    return _load_config(path, CATALOG)


def parse_config(text: str, source: str = "<config>") -> Config:
    """YAML text as a config, checked like `load_config`."""
    return _parse_config(text, CATALOG, source)


def check_jobs(config: Config) -> list[Job]:
    """The config's `checks:` entries as scheduled jobs."""
    if not config.checks:
        return []
    from dbgauge.checks.schedule import check_jobs as build

    return build(config, scheduled_checks())


def checksum_jobs(config: Config) -> list[Job]:
    """The config's `checksums:` entries as scheduled jobs."""
    if not config.checksums:
        return []
    from dbgauge.checks.schedule import checksum_jobs as build

    return build(config)


def status_view(targets: Sequence[Target], previous: object,
                jobs: Sequence[JobSnapshot]) -> tuple[dict[str, Any], object]:
    """The status page's document (schema dbgauge.status/1) and the topology to hand back
    as `previous` next time (a node that went down keeps its place); checksum verdicts
    come from the scheduled jobs' last runs."""
    from dbgauge.checks.status.checksums import with_checksums
    from dbgauge.checks.status.model import Topology
    from dbgauge.checks.status.run import discover

    topology = discover(targets, previous if isinstance(previous, Topology) else None)
    return with_checksums(topology, jobs).doc(), topology


def wiring() -> Wiring:
    """Everything the daemon needs from the layers above the core."""
    from dbgauge.toolkit.exporter.wiring import Wiring

    return Wiring(load_config=load_config, registry=registry(),
                  job_builders=(check_jobs, checksum_jobs), status=status_view)
