"""What the daemon is handed by the composition root (`dbgauge.app`): kept apart from the
HTTP server so a one-shot command that loads a config does not import the server."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dbgauge.toolkit.config import Config
from dbgauge.toolkit.jobs import JobBuilder, JobSnapshot
from dbgauge.toolkit.metrics import Registry
from dbgauge.toolkit.targets import Target

# (targets, what it returned last time, the jobs' last runs) -> (the status document,
# what to hand back next time): the topology discovery behind the daemon's page.
StatusSource = Callable[[Sequence[Target], object, Sequence[JobSnapshot]],
                        tuple[dict[str, Any], object]]


@dataclass(frozen=True)
class Wiring:
    """What the composition root (`dbgauge.app`) hands the daemon: how to load a config
    (checked against the collectors and checks it knows), the collector registry, and the
    builders of scheduled jobs, and the topology discovery of the status page."""

    load_config: Callable[[str | None], Config]
    registry: Registry
    job_builders: Sequence[JobBuilder]
    status: StatusSource
