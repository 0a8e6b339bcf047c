"""Progress of `checksum` and `pgtap run` against the sandbox: status lines off a
terminal (every --progress time,N), a bar with 'N of M' and the ETA on a terminal (a
real pseudo-terminal), nothing with --quiet."""

from __future__ import annotations

import os
import pty
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers import DBGAUGE, REPO
from tests.helpers.servers import Sandbox, caught_up, run

pytestmark = pytest.mark.integration

TABLES = ("app.progress_a", "app.progress_b", "app.progress_c")


def on_a_terminal(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run `argv` with stderr on a pseudo-terminal: (exit status, stdout, terminal text)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=slave, env=env,
                            text=True)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read() if proc.stdout is not None else ""
    code = proc.wait(timeout=120)
    os.close(master)
    return code, out, b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def tables(sandbox: Sandbox) -> str:
    for name in TABLES:
        run(sandbox, "mariadb-primary", f"DROP TABLE IF EXISTS {name}",
            f"CREATE TABLE {name} (id INT PRIMARY KEY, v VARCHAR(20))",
            f"INSERT INTO {name} SELECT seq, CONCAT('v', seq) FROM seq_1_to_300")  # noqa: S608
    caught_up(sandbox)
    return ",".join(TABLES)


def checksum(sandbox: Sandbox, tables: str, tmp_path: Path, *extra: str) -> list[str]:
    return [*DBGAUGE, "checksum", "--config", str(sandbox.config), "--source",
            "mariadb-primary", "--replica", "mariadb-replica", "--tables", tables, "--method",
            "direct", "--chunk-size", "50", "--whole-table-time", "0", "--state-file",
            str(tmp_path / "state.json"), *extra]


def test_checksum_status_lines_bar_and_quiet(sandbox: Sandbox, tables: str,
                                             tmp_path: Path) -> None:
    logged = subprocess.run(checksum(sandbox, tables, tmp_path, "--progress", "time,1ms"),
                            cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert logged.returncode == 0, logged.stdout + logged.stderr
    lines = re.findall(r"^dbgauge: table (\d) of 3 \((app\.progress_[abc])\): (\d+)% done, "
                       r"\S+ elapsed(?:, about \S+ left)?$", logged.stderr, re.MULTILINE)
    assert {n for n, _, _ in lines} == {"1", "2", "3"}, logged.stderr
    shares = [int(p) for _, _, p in lines]
    # by estimated rows: once on table 3 of 3, the two before it are done
    assert shares == sorted(shares) and shares[-1] >= 66, logged.stderr
    assert "\r" not in logged.stderr  # no bar in a log

    quiet = subprocess.run(checksum(sandbox, tables, tmp_path, "--progress", "time,1ms",
                                    "--quiet"),
                           cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert quiet.returncode == 0, quiet.stderr
    assert "of 3" not in quiet.stderr, quiet.stderr

    code, out, terminal = on_a_terminal(checksum(sandbox, tables, tmp_path))
    assert code == 0, out + terminal
    assert re.search(r"\r\x1b\[Ktable 3 of 3 app\.progress_c \[#+ *\] 100% ETA 0s", terminal), \
        terminal
    assert "table 1 of 3 app.progress_a" in terminal
    assert "no drift (3 table(s)" in out, out  # the report itself on stdout, unmixed


def test_pgtap_run_status_lines_and_bar(sandbox: Sandbox, tmp_path: Path) -> None:
    for i in range(3):
        (tmp_path / f"t{i}.sql").write_text(
            f"SELECT '1..1';\nSELECT pg_sleep(0.2);\nSELECT 'ok 1 - file {i}';\n")
    env = {**os.environ, "DBGAUGE_PGTAP_DSN": sandbox.admin_dsn("pg-primary")}
    base = [*DBGAUGE, "pgtap", "run", str(tmp_path)]
    logged = subprocess.run([*base, "--progress", "time,1ms"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert logged.returncode == 0, logged.stdout + logged.stderr
    assert re.search(r"^dbgauge: file 3 of 3 \(\S+t2\.sql\): 100% done", logged.stderr,
                     re.MULTILINE), logged.stderr
    assert "file 1 of 3" in logged.stderr
    quiet = subprocess.run([*base, "--progress", "time,1ms", "-q"], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=120, check=False)
    assert quiet.returncode == 0 and "of 3" not in quiet.stderr, quiet.stderr

    code, out, terminal = on_a_terminal([*base, "-j", "2"], env)
    assert code == 0, out + terminal
    assert re.search(r"\r\x1b\[Kfile 3 of 3 \S+ \[#+ *\] 100% ETA 0s", terminal), terminal
    assert out.count(" .. ok") == 3, out  # file lines stay on stdout, unmixed
