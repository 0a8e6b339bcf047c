"""The exporter: scrape engine, rendering and the HTTP daemon."""
