"""The command line: help lists every command, expected failures exit cleanly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbgauge.cli import COMMANDS, cli
from dbgauge.toolkit import __version__
from dbgauge.toolkit.sandbox import binaries
from tests.helpers import REPO


def test_help_lists_every_command_with_a_summary() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    commands = result.output.split("Commands:")[1].strip().splitlines()
    names = [line.split()[0] for line in commands]
    assert names == sorted(COMMANDS)
    for line in commands:
        assert len(line.split(None, 1)) == 2 and not line.rstrip().endswith("..."), line
    for group in ("sandbox", "config"):
        sub = CliRunner().invoke(cli, [group, "--help"])
        assert sub.exit_code == 0 and "Commands:" in sub.output


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_missing_server_binary_names_the_package_and_exits_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binaries, "MARIADBD", tmp_path / "no-such-mariadbd")
    result = CliRunner().invoke(cli, ["sandbox", "up", "--dir", str(tmp_path / "sb")])
    assert result.exit_code == 2, result.output
    assert "mariadb-server" in result.output
    assert "Traceback" not in result.output


def test_collect_unknown_target_is_a_config_error(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@127.0.0.1:1/'}\n")
    result = CliRunner().invoke(cli, ["collect", "--config", str(cfg), "b"])
    assert result.exit_code == 2
    assert "no target named 'b'; configured: a" in result.output


def test_a_command_loads_only_its_own_module() -> None:
    """`dbgauge checksum --help` imports the checksum command, not the other commands."""
    code = ("import sys; from dbgauge.cli import cli; "
            "cli(['checksum', '--help'], prog_name='dbgauge', standalone_mode=False); "
            "print(sorted(m for m in sys.modules if m.startswith('dbgauge.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO).stdout.strip().splitlines()[-1]
    assert out == "['dbgauge.cli.base', 'dbgauge.cli.checksum']"
