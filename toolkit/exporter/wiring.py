"""What the daemon is handed by the composition root (`dbgauge.app`): kept apart from the
HTTP server so a one-shot command that loads a config does not import the server."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from dbgauge.toolkit.config import Config
from dbgauge.toolkit.jobs import JobBuilder, JobSnapshot
from dbgauge.toolkit.registry import Registry
from dbgauge.toolkit.targets import Target

if TYPE_CHECKING:  # the peers' parts: a daemon without their spellings never loads them
    from dbgauge.toolkit.peers.env import PeerStartup
    from dbgauge.toolkit.peers.probe import ProbeSource

# (targets, what it returned last time, the jobs' last runs) -> (the status document,
# what to hand back next time): the topology discovery behind the daemon's page.
StatusSource = Callable[[Sequence[Target], object, Sequence[JobSnapshot]],
                        tuple[dict[str, Any], object]]


def _no_probe() -> ProbeSource | None:
    return None


@dataclass(frozen=True)
class Wiring:
    """What the composition root (`dbgauge.app`) hands the daemon: how to load a config
    (checked against the collectors and checks it knows), the collector registry, and the
    builders of scheduled jobs, and the topology discovery of the status page. With a peer
    exporter's start-up spellings (`with_peers`), also how to read the peer's credentials
    for /probe of an address (read right after each config load), and the warnings the
    daemon logs once it logs."""

    load_config: Callable[[str | None], Config]
    registry: Registry
    job_builders: Sequence[JobBuilder]
    status: StatusSource
    probe: Callable[[], ProbeSource | None] = _no_probe
    notes: tuple[str, ...] = ()


def with_peers(wiring: Wiring, parse: Callable[[str, str], Config], startup: PeerStartup,
               compat: bool = True) -> Wiring:
    """`wiring` whose config loader adds the targets a peer exporter's start-up spellings
    make (`toolkit.peers`: mysqld_exporter's --config.my-cnf and --mysqld.*,
    postgres_exporter's DATA_SOURCE_*), after --config's or alone, and reads the peers'
    /probe credentials: on start and on every reload. `parse` checks their YAML as the
    composition root checks a config; `compat` False: `serve --compat` chose the dialects,
    so the peer-made targets do not speak their peer's by themselves."""
    from dbgauge.toolkit.peers.probe import probe_source
    from dbgauge.toolkit.peers.targets import daemon_overrides, peer_targets, with_targets

    load = wiring.load_config

    def defaults(kind: str) -> list[str]:
        return [c.name for c in wiring.registry.for_kind(kind) if c.default_enabled]

    pg = startup.postgres
    probes = startup.mysql is not None or (pg is not None and pg.auth_file is not None)

    def loaded(path: str | None) -> Config:
        made = peer_targets(startup, defaults, parse, compat)
        if path is None and not made and not probes:
            return load(path)  # nothing to serve: the usual "no config given"
        config = with_targets(load(path) if path is not None else None, made, path)
        return daemon_overrides(config, startup)

    def probe() -> ProbeSource | None:
        return probe_source(startup, defaults, parse, compat)

    return replace(wiring, load_config=loaded, probe=probe,
                   notes=(*wiring.notes, *startup.warnings()))


def with_compat(wiring: Wiring, names: Sequence[str] | None, only: bool = False) -> Wiring:
    """`wiring` whose config loader replaces daemon.compat with `names` (`serve
    --compat`; None keeps the config's) and sets compat_only when `only`
    (`--compat-only`), on start and on every reload."""
    load = wiring.load_config

    def loaded(path: str | None) -> Config:
        return load(path).with_compat(names, only)

    return replace(wiring, load_config=loaded)
