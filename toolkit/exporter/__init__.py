"""The exporter daemon behind `dbgauge serve`.

`scrape` (one runner and persistent connection per target, targets scraped concurrently
under the scrape deadline), `state` (the config, its scraper, heartbeat writers and
scheduled jobs, swapped on SIGHUP), `server` (HTTP: /metrics, /probe, /healthz and the
status page), `connections` (one reader thread, a bounded pool of workers), `webconfig`
(TLS and basic auth, exporter-toolkit's format), `status` (the status page's cached
document) and `wiring` (what the composition root hands the daemon). The exposition
format and the page are rendered in toolkit/render (`prometheus`, `page`).
"""
