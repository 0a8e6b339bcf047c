"""The `dbgauge` command line: the only part of dbgauge that imports click, and (with
`toolkit.app`) the composition root that hands the core what the layers above provide.

One module per command group; `base` holds what they share, the exit-code table
included. Heavy modules (pydantic, the checks, the drivers) are imported by the command
that needs them, so `dbgauge checksum` with DSNs starts without the config machinery.
"""

from __future__ import annotations

import click

from toolkit import __version__
from toolkit.cli.check import check_group
from toolkit.cli.checksum import checksum
from toolkit.cli.pgtap import pgtap_group
from toolkit.cli.sandbox import sandbox_group
from toolkit.cli.serve import collect, config_group, list_collectors, serve
from toolkit.cli.validate import validate_group

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", "-V", prog_name="dbgauge")
def cli() -> None:
    """dbgauge: operations toolkit for MySQL/MariaDB, PostgreSQL and PgBouncer fleets.

    \b
    Examples:
      dbgauge sandbox up                      # local real servers for demos and tests
      dbgauge serve --config .sandbox/dbgauge.yaml
      dbgauge collect --config dbgauge.yaml pg-primary
      dbgauge config check dbgauge.yaml
    """


for _command in (serve, collect, list_collectors, config_group, sandbox_group, checksum,
                 check_group, pgtap_group, validate_group):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="dbgauge")
