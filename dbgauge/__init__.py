"""dbgauge: an operations toolkit for MySQL-family and PostgreSQL fleets.

The one import package a wheel installs. Its own modules are the top floor: the command line
(`dbgauge.cli`, the only click importer) and the composition root (`dbgauge.app`), which hand
the floors below what they cannot import themselves. Below them: `dbgauge.checks`, then
`dbgauge.collectors`, then the core, `dbgauge.toolkit`, with dbgauge's SQL in `dbgauge/sql`.
In a checkout those floors are the repository's top-level folders (`checks/`, `collectors/`,
`toolkit/`, `sql/`), linked here; docs/architecture.md draws the house.
"""

from dbgauge.toolkit import __version__

__all__ = ["__version__"]
