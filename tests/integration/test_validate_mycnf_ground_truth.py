"""Ground truth for validate innodb-cluster's claims about option files, from the
sandbox's mysqld (MariaDB 10.11): `mariadbd --defaults-file=F --help --verbose` reads F
exactly as the server would at startup (mysys my_load_defaults and handle_options, which
MySQL shares) and exits non-zero where the server would refuse to start, without
starting one. MySQL 8 itself is not installable here; its Group Replication options are
unknown to MariaDB just as they are to a MySQL without the plugin loaded.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from dbgauge.checks.innodb_cluster import ClusterOptions, validate_innodb_cluster, version_for
from dbgauge.toolkit.result import Finding, Severity, severity_of
from dbgauge.toolkit.sandbox.binaries import MARIADBD
from tests.helpers.validate import FIXTURES

pytestmark = pytest.mark.integration


def _mysqld_reads(cnf: Path) -> tuple[int, str]:
    proc = subprocess.run([str(MARIADBD), f"--defaults-file={cnf}", "--help", "--verbose"],
                          capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout + proc.stderr


def _findings(*files: Path, version: str = "8.0") -> list[Finding]:
    return list(validate_innodb_cluster([str(f) for f in files],
                                        ClusterOptions(version=version_for(version))).findings)


def test_option_before_any_group_stops_mysqld() -> None:
    cnf = FIXTURES / "innodb" / "bad" / "syntax" / "m1.cnf"
    (claim,) = [f for f in _findings(cnf) if "before any [group]" in f.detail]
    assert severity_of(claim) == Severity.ERROR and "mysqld refuses to start" in claim.detail
    code, out = _mysqld_reads(cnf)
    assert code != 0 and f"at line: {claim.line}" in out and "without preceding group" in out


def test_group_replication_options_without_the_plugin(tmp_path: Path) -> None:
    strict = tmp_path / "strict.cnf"
    strict.write_text("[mysqld]\nserver_id = 7\ngroup_replication_group_seeds = a:33061\n")
    claims = [f for f in _findings(strict) if f.kind == "mycnf/plugin"]
    assert claims and "mysqld refuses to start" in claims[0].detail
    code, out = _mysqld_reads(strict)
    assert code != 0 and "unknown variable 'group_replication_group_seeds" in out
    loose = tmp_path / "loose.cnf"
    loose.write_text("[mysqld]\nserver_id = 7\nloose-group_replication_group_seeds = a:33061\n")
    assert not [f for f in _findings(loose) if f.kind == "mycnf/plugin"]
    code, out = _mysqld_reads(loose)
    assert code == 0, out  # a warning only, as the validator says


def test_galera_corpus_set_is_mariadbs_own_configuration() -> None:
    d = FIXTURES / "realworld" / "innodb" / "joshua-galera"
    files = sorted(d.glob("m*.cnf"))
    (verdict,) = _findings(*files)
    assert verdict.kind == "gr/not-innodb-cluster" and "MariaDB Galera" in verdict.detail
    for cnf in files:
        code, out = _mysqld_reads(cnf)
        assert code == 0, out  # every wsrep_* option is one MariaDB knows


@pytest.mark.parametrize("case", sorted(p.name for p in (FIXTURES / "realworld" /
                                                          "innodb").iterdir()))
def test_no_corpus_file_is_claimed_to_stop_mysqld(case: str) -> None:
    """No finding on the corpus says mysqld refuses to start; the file grammar agrees
    (mariadbd stops only on options it does not know, which MySQL-only names are)."""
    files = sorted((FIXTURES / "realworld" / "innodb" / case).glob("m*.cnf"))
    claims = [f for f in _findings(*files) if "refuses to start" in f.detail]
    assert claims == []
    for cnf in files:
        _, out = _mysqld_reads(cnf)
        assert "without preceding group" not in out and "Fatal error in defaults" not in out
