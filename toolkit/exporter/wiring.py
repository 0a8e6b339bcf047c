"""What the daemon is handed by the composition root (`dbgauge.app`): kept apart from the
HTTP server so a one-shot command that loads a config does not import the server."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dbgauge.toolkit.config import Config
from dbgauge.toolkit.jobs import JobBuilder, JobSnapshot
from dbgauge.toolkit.registry import Registry
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


def with_my_cnf(wiring: Wiring, parse: Callable[[str, str], Config], my_cnf: Path) -> Wiring:
    """`wiring` whose config loader adds the one mysql target the [client] section of
    `my_cnf` makes (mysqld_exporter's --config.my-cnf), on start and on every reload;
    `parse` checks that target's YAML as the composition root checks a config."""
    import yaml

    from dbgauge.toolkit.config import read_config_file
    from dbgauge.toolkit.errors import ConfigError
    from dbgauge.toolkit.mycnf import my_cnf_target

    load = wiring.load_config

    def loaded(path: str | None) -> Config:
        entry = my_cnf_target(read_config_file(my_cnf, "my.cnf"), str(my_cnf))
        mine = parse(yaml.safe_dump({"targets": [entry]}), str(my_cnf))
        if path is None:
            return mine
        config = load(path)
        if any(t.name == entry["name"] for t in config.targets):
            raise ConfigError(f"--config.my-cnf {my_cnf} makes a target named "
                              f"{entry['name']!r}, and {path} has one too: rename that one",
                              source=path)
        return config.model_copy(update={"targets": [*config.targets, *mine.targets]})

    return replace(wiring, load_config=loaded)


def with_compat(wiring: Wiring, names: Sequence[str]) -> Wiring:
    """`wiring` whose config loader replaces daemon.compat with `names` (`serve
    --compat`), on start and on every reload."""
    load = wiring.load_config

    def loaded(path: str | None) -> Config:
        return load(path).with_compat(names)

    return replace(wiring, load_config=loaded)
