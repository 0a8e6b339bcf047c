"""Transient targets: the peers' `/probe?target=ADDRESS&auth_module=NAME`.

A probe of an address that is not a configured target's name gets a target made from the
peer's credentials (`toolkit.peers.probe`), kept with its connection for the next probe
of the same address and module, as a configured target keeps one. At most MAX_TRANSIENT
are kept: past that the least recently probed is dropped, and its connection closed once
no scrape uses it (the peers open a connection per probe; a fleet larger than the cap
costs dbgauge the same). A reload drops them all (the credentials may have changed).

They live in a `Scraper` of their own, rebuilt when one is added or dropped: a scrape in
flight keeps the Scraper it started on, which closes what it alone held when its last
scrape ends.
"""

from __future__ import annotations

from collections import OrderedDict

from dbgauge.toolkit.config import Config, TargetConfig
from dbgauge.toolkit.exporter.fleet import Scraper
from dbgauge.toolkit.peers.probe import ProbeSource, address
from dbgauge.toolkit.registry import Registry

MAX_TRANSIENT = 100


class TransientTargets:
    """The transient targets of one config and credentials source. Not thread-safe: the
    exporter calls it under its lock."""

    def __init__(self, source: ProbeSource, config: Config, registry: Registry) -> None:
        self._source = source
        self._config = config  # its daemon section (collector options, compat) applies
        self._registry = registry
        self._names: OrderedDict[tuple[str, str], str] = OrderedDict()  # oldest first
        self._targets: dict[str, TargetConfig] = {}
        self._scraper = Scraper(self._with_targets(), registry)

    def __len__(self) -> int:
        return len(self._names)

    def checkout(self, target: str, auth_module: str | None) -> tuple[Scraper, str]:
        """The Scraper holding the target for `target` and `auth_module`, acquired (the
        caller releases it after its scrape), and the target's name in it. ProbeRefused:
        the peer would answer 400."""
        key = (target, auth_module or "")
        name = self._names.get(key)
        if name is None:
            entry = self._source.entry(target, auth_module)
            name = self._free_name(address(entry))
            made = self._source.target_config(name, entry)
            self._names[key] = name
            self._targets[name] = made
            while len(self._names) > MAX_TRANSIENT:
                _, dropped = self._names.popitem(last=False)
                del self._targets[dropped]
            old = self._scraper
            self._scraper = Scraper(self._with_targets(), self._registry, previous=old)
            old.close(keep=self._scraper.runners.values())
        else:
            self._names.move_to_end(key)
        self._scraper.acquire()
        return self._scraper, name

    def _with_targets(self) -> Config:
        return self._config.model_copy(update={"targets": list(self._targets.values()),
                                               "checks": [], "checksums": []})

    def _free_name(self, base: str) -> str:
        """`base` (the server's address: what the target's series' `target` label says),
        -2, -3... when a target of another auth module or database already has it."""
        name, n = base[:56], 2
        while name in self._targets:
            name = f"{base}-{n}"
            n += 1
        return name

    def interrupt(self) -> None:
        """The daemon is stopping: cut the scrapes in flight short."""
        self._scraper.interrupt()

    def close(self) -> None:
        """Close every connection, now or when the scrapes in flight end."""
        self._scraper.close()
