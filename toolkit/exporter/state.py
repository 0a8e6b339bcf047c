"""The daemon's state: the current config, its scraper, heartbeat writers and scheduled
jobs, swapped atomically on SIGHUP (server.py serves it over HTTP)."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Protocol

from dbgauge.toolkit.config import Config
from dbgauge.toolkit.errors import DbgaugeError
from dbgauge.toolkit.exporter.fleet import Scraper
from dbgauge.toolkit.exporter.scrape import TargetResult
from dbgauge.toolkit.exporter.status import StatusCache
from dbgauge.toolkit.exporter.transient import TransientTargets
from dbgauge.toolkit.exporter.webconfig import load_web_config
from dbgauge.toolkit.exporter.wiring import Wiring
from dbgauge.toolkit.heartbeat import HeartbeatWriter
from dbgauge.toolkit.jobs import Job, JobRunner, JobSnapshot, build_jobs
from dbgauge.toolkit.logs import setup_logging
from dbgauge.toolkit.metrics import ConfigLoad
from dbgauge.toolkit.targets import Target

log = logging.getLogger("dbgauge.serve")


class BackgroundTask(Protocol):
    """A daemon-side loop (e.g. the heartbeat writer) bound to one target."""

    def start(self) -> None: ...

    def stop(self, timeout: float = 5.0) -> None: ...


class Exporter:
    """Holds the current config and scraper; swapped atomically on reload."""

    def __init__(self, config: Config, wiring: Wiring, config_path: str | None = None,
                 web_config_path: str | None = None) -> None:
        self.wiring = wiring
        self.config_path = config_path
        # --web.config.file wins over daemon.web_config_file, on start and on reload.
        self.web_config_path = web_config_path
        self._lock = threading.Lock()
        self.config = config
        self.web = load_web_config(self._web_path(config))
        self.scraper = Scraper(config, wiring.registry)
        self.transients = _transients(wiring, config)
        self._writers: dict[str, tuple[Target, BackgroundTask]] = {}
        self._jobs: list[JobRunner] = []
        self._status = StatusCache(wiring.status)
        # The config was loaded just before: dbgauge_config_last_reload_*.
        self.config_load = ConfigLoad(True, time.time())

    def status(self) -> dict[str, Any]:
        """The status page's document: cached, refreshed at most once per
        daemon.status_refresh (a page view adds no queries within the interval)."""
        config = self.config
        return self._status.get(config.all_targets(), config.daemon.status_refresh,
                                self.job_snapshots)

    def start(self) -> None:
        """Start heartbeat writers and scheduled jobs: only once the listener is bound, so
        a daemon that cannot listen has written nothing anywhere."""
        with self._lock:
            self._sync_background(self.config)
            self._start_jobs(self.config)

    def _start_jobs(self, config: Config, jobs: list[Job] | None = None) -> None:
        """(Re)start the scheduled checks and checksums."""
        if jobs is None:
            jobs = build_jobs(config, self.wiring.job_builders)
        runners = [JobRunner(job) for job in jobs]
        old, self._jobs = self._jobs, runners
        for runner in old:
            runner.stop()
        for runner in runners:
            runner.start()

    def job_snapshots(self) -> list[JobSnapshot]:
        return [runner.snapshot() for runner in self._jobs]

    def _sync_background(self, config: Config) -> None:
        """Start heartbeat writers for `heartbeat: write` targets; stop stale ones."""
        wanted = {t.name: t for t in config.all_targets()
                  if t.heartbeat is not None and t.heartbeat.mode == "write"}
        for name, (cfg, task) in list(self._writers.items()):
            if wanted.get(name) != cfg:
                task.stop()
                del self._writers[name]
        for name, cfg in wanted.items():
            if name not in self._writers:
                task = HeartbeatWriter(cfg)
                task.start()
                self._writers[name] = (cfg, task)

    def _web_path(self, config: Config) -> str | None:
        if self.web_config_path is not None:
            return self.web_config_path
        key = config.daemon.web_config_file
        return None if key is None else str(key)

    def deadline(self, header: str | None) -> float:
        """Monotonic deadline: Prometheus' scrape timeout (or ours) minus the offset."""
        timeout = self.config.daemon.scrape_timeout
        if header:
            try:
                timeout = min(timeout, float(header)) if float(header) > 0 else timeout
            except ValueError:
                pass
        budget = max(0.2, timeout - self.config.daemon.scrape_timeout_offset)
        return time.monotonic() + budget

    def scrape(self, names: list[str] | None, header: str | None,
               only: set[str] | None = None) -> list[TargetResult]:
        with self._lock:  # a reload retires the old scraper only after this scrape ends
            scraper = self.scraper
            scraper.acquire()
        try:
            return scraper.scrape(names or list(scraper.runners), self.deadline(header), only)
        finally:
            scraper.release()

    def collector_names(self, names: list[str] | None) -> list[str]:
        """The collectors the targets `names` (all when None) run: what collect[] may name."""
        return self.scraper.collector_names(names or list(self.scraper.runners))

    def checkout(self, target: str, auth_module: str | None) -> tuple[Scraper, str] | None:
        """For a /probe of an address (not a configured name): the Scraper holding its
        transient target, acquired (release it after the scrape), and the target's name;
        None when the daemon has no peer credentials to make one with. ProbeRefused: the
        peer would answer 400."""
        with self._lock:
            if self.transients is None:
                return None
            return self.transients.checkout(target, auth_module)

    def interrupt(self) -> None:
        """Cut every scrape in flight short (shutdown): its targets report down now."""
        self.scraper.interrupt()
        with self._lock:
            if self.transients is not None:
                self.transients.interrupt()

    def reload(self) -> bool:
        """Re-read the config file; on any error keep the running config and log why."""
        try:
            new = self.wiring.load_config(self.config_path)
            transients = _transients(self.wiring, new)
            web = load_web_config(self._web_path(new))
            web.keep_checks(self.web)
            jobs_changed = (self.config.checks, self.config.checksums, self.config.targets) \
                != (new.checks, new.checksums, new.targets)
            jobs = build_jobs(new, self.wiring.job_builders) if jobs_changed else None
        except DbgaugeError as exc:
            log.error("reload failed, keeping the previous config: %s", exc)
            self.config_load = ConfigLoad(False, self.config_load.success_time)
            return False
        except Exception:  # a bug reading some file: still logged as a failed reload
            log.exception("reload failed, keeping the previous config: unexpected error")
            return False
        with self._lock:
            old = self.scraper
            self.scraper = Scraper(new, self.wiring.registry, previous=old)
            old.close(keep=self.scraper.runners.values())
            self._sync_background(new)
            if self.transients is not None:
                self.transients.close()  # the credentials may have changed
            self.transients = transients
            self.config = new
            self.web = web
            if jobs is not None:
                self._start_jobs(new, jobs)
            self.config_load = ConfigLoad(True, time.time())
        setup_logging(new.daemon.log_format, new.daemon.log_level)
        log.info("config reloaded: %d targets", len(new.targets))
        return True

    def close(self, timeout: float = 5.0) -> None:
        for _cfg, task in self._writers.values():
            task.stop(timeout)
        self._writers.clear()
        for runner in self._jobs:
            runner.stop(timeout)
        self._jobs = []
        self.scraper.close()
        if self.transients is not None:
            self.transients.close()


def _transients(wiring: Wiring, config: Config) -> TransientTargets | None:
    """The transient targets of the peers' /probe of an address, when the daemon was
    started with a peer's credentials (read now, as the config was)."""
    source = wiring.probe()
    return None if source is None else TransientTargets(source, config, wiring.registry)
