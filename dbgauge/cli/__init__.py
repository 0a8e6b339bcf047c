"""The `dbgauge` command line: the only part of dbgauge that imports click, and (with
`dbgauge.app`) the composition root that hands the core what the layers above provide.

One module per command group, loaded when its command runs; `base` holds what they
share, the exit-code table included. Heavy modules (pydantic, the checks, the drivers) are
imported by the command that needs them, so `dbgauge checksum` with DSNs starts without
the config machinery.
"""

from __future__ import annotations

import importlib
import sys
import traceback

import click

from dbgauge.toolkit import __version__
from dbgauge.toolkit.redact import redact_args, register_args

__all__ = ["COMMANDS", "cli", "main"]

# Command name -> (module, attribute). A command's module is imported when the command runs
# (or for --help): every one-shot command starts without the others' imports.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("dbgauge.cli.check", "check_group"),
    "checksum": ("dbgauge.cli.checksum", "checksum"),
    "collect": ("dbgauge.cli.serve", "collect"),
    "collectors": ("dbgauge.cli.serve", "list_collectors"),
    "config": ("dbgauge.cli.serve", "config_group"),
    "heartbeat": ("dbgauge.cli.heartbeat", "heartbeat_group"),
    "pgtap": ("dbgauge.cli.pgtap", "pgtap_group"),
    "sandbox": ("dbgauge.cli.sandbox", "sandbox_group"),
    "serve": ("dbgauge.cli.serve", "serve"),
    "status": ("dbgauge.cli.status", "status"),
    "validate": ("dbgauge.cli.validate", "validate_group"),
}


class _Commands(click.Group):
    """The top-level group, loading each command's module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            module, attribute = COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> object:
        """click's own messages quote what was typed (`Got unexpected extra argument
        (mysql://u:pw@db1/)`): shown redacted, as everything else."""
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            vars(exc)["message"] = redact_args(exc.message, sys.argv[1:])  # Final to mypy
            raise


@click.group(cls=_Commands,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


def main() -> None:
    register_args(sys.argv[1:])
    try:
        cli(prog_name="dbgauge")
    except Exception:  # a bug: its traceback, without the secrets its messages may hold
        sys.stderr.write(redact_args(traceback.format_exc(), sys.argv[1:]))
        sys.exit(1)
