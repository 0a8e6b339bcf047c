"""The built wheel works on its own: installed in a fresh venv outside the checkout, it adds
one import package, `dbgauge` (and the `dbgauge` script), lists its collectors and scrapes the
real sandbox. A file missing from the wheel (sql/ above all) fails here."""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.helpers import REPO, parse_metrics, value
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration


@pytest.mark.slow
def test_wheel_installs_and_scrapes(sandbox: Sandbox, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                    str(dist), str(REPO)], check=True, capture_output=True, timeout=300)
    wheels = list(dist.glob("dbgauge-*.whl"))
    assert len(wheels) == 1
    env_dir = tmp_path / "venv"
    # no pip of its own: the checkout's pip installs into it (--python), and nothing is
    # byte-compiled (ensurepip and compiling the dependencies took most of this test)
    venv.create(env_dir, with_pip=False)
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(env_dir / "bin" / "python"),
                          "install", "-q", "--no-compile", str(wheels[0])],
                         capture_output=True, text=True, timeout=600, check=False)
    assert pip.returncode == 0, pip.stderr
    python = env_dir / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(subprocess.run([str(python), "-c", purelib], capture_output=True, text=True,
                               timeout=60, check=True).stdout.strip())
    dist_info = next(site.glob("dbgauge-*.dist-info"))
    installed = [line.split(",")[0] for line in (dist_info / "RECORD").read_text().splitlines()]
    # One import package and its metadata in site-packages, and the script in bin/.
    assert {name.split("/")[0] for name in installed if not name.startswith("..")} == {
        "dbgauge", dist_info.name}
    assert [name for name in installed if name.startswith("..")] == ["../../../bin/dbgauge"]
    code = ("import dbgauge, dbgauge.toolkit, dbgauge.collectors, dbgauge.checks, dbgauge.cli; "
            "from dbgauge.toolkit.sql import sql_root; "
            "print(dbgauge.__version__, dbgauge.toolkit.__file__, sql_root())")
    where = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                           cwd=tmp_path, timeout=60, check=True)
    version, module_file, sql_dir = where.stdout.split()
    assert str(env_dir) in module_file and str(env_dir) in sql_dir, where.stdout
    assert Path(sql_dir) == site / "dbgauge" / "sql"
    assert (Path(sql_dir) / "mysql").is_dir() and (Path(sql_dir) / "postgres").is_dir()
    listed = subprocess.run([str(env_dir / "bin" / "dbgauge"), "collectors"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False)
    assert listed.returncode == 0, listed.stderr
    assert "mysql_global_status" in listed.stdout and "pgbouncer_pools" in listed.stdout
    as_module = subprocess.run([str(python), "-m", "dbgauge", "--version"], capture_output=True,
                               text=True, cwd=tmp_path, timeout=60, check=False)
    assert as_module.returncode == 0 and version in as_module.stdout, as_module.stderr
    for target, metric in [("mariadb-primary", "dbgauge_mysql_uptime_seconds"),
                           ("pg-primary", "dbgauge_postgres_max_connections"),
                           ("pgbouncer", "dbgauge_pgbouncer_list_items")]:
        proc = subprocess.run([str(env_dir / "bin" / "dbgauge"), "collect", "--config",
                               str(sandbox.config), target], capture_output=True, text=True,
                              cwd=tmp_path, timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        m = parse_metrics(proc.stdout)
        assert value(m, "dbgauge_up", target=target) == 1.0
        assert any(name == metric for name, _ in m), f"{metric} missing: {proc.stdout}"
