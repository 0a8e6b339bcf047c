"""The sandbox's PostgreSQL majors without a server: where each major's programs are
looked for, what is said when they are missing, the major remembered in sandbox.json, and
the data-directory copy of a backup-API clone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.errors import MissingBinaryError, SandboxError
from dbgauge.toolkit.sandbox import binaries
from dbgauge.toolkit.sandbox.postgres_backup import copy_datadir


def test_debian_15_is_the_default_and_other_majors_come_from_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBGAUGE_PG_CACHE", str(tmp_path))
    monkeypatch.delenv("DBGAUGE_PG13_BIN", raising=False)
    debian = binaries.pg_binaries(15)
    assert debian.bin == Path("/usr/lib/postgresql/15/bin") and debian.lib is None
    assert debian.env({"A": "1"}) == {"A": "1"}
    (tmp_path / "13" / "lib").mkdir(parents=True)
    npm = binaries.pg_binaries(13)
    assert npm.bin == tmp_path / "13" / "bin"
    assert npm.env({})["LD_LIBRARY_PATH"] == str(tmp_path / "13" / "lib")
    assert npm.extensions == tmp_path / "13" / "share" / "postgresql" / "extension"


def test_the_binary_directory_is_a_setting(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBGAUGE_PG16_BIN", str(tmp_path / "bin"))
    assert binaries.pg_binaries(16).tool("initdb") == tmp_path / "bin" / "initdb"


def test_a_major_not_fetched_names_install_deps(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBGAUGE_PG_CACHE", str(tmp_path))
    monkeypatch.delenv("DBGAUGE_PG17_BIN", raising=False)
    with pytest.raises(MissingBinaryError) as caught:
        binaries.check_binaries(17)
    message = str(caught.value)
    assert str(tmp_path / "17" / "bin" / "initdb") in message
    assert "PostgreSQL 17 (deploy/install-deps fetches it" in message
    assert "apt-get install" not in message  # nothing Debian-packaged is missing


@pytest.mark.parametrize("major", [12, 19])
def test_majors_outside_13_to_18_are_refused(major: int) -> None:
    with pytest.raises(SandboxError, match=f"--pg-version {major}"):
        binaries.pg_binaries(major)


def test_a_sandbox_keeps_its_major(tmp_path: Path) -> None:
    assert sb._settled(tmp_path, None, None) == (sb.DEFAULT_BASE_PORT, 15)  # a new one
    assert sb._settled(tmp_path, None, 17) == (sb.DEFAULT_BASE_PORT, 17)
    (tmp_path / "sandbox.json").write_text(json.dumps({"base_port": 20000, "pg_version": 13}))
    with pytest.raises(SandboxError) as caught:
        sb._settled(tmp_path, 20000, 18)
    assert "runs PostgreSQL 13, not 18: pass --pg-version 13" in str(caught.value)
    assert sb._settled(tmp_path, None, None) == (20000, 13)  # its own
    assert sb._settled(tmp_path, 20000, 13) == (20000, 13)
    (tmp_path / "sandbox.json").write_text(json.dumps({"base_port": 20000}))
    assert sb._settled(tmp_path, None, None) == (20000, 15)  # made before it had a major


def test_copy_leaves_out_what_a_base_backup_does(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    for d in ("base/1", "pg_wal/archive_status", "pg_replslot/s", "pg_stat_tmp",
              "base/pgsql_tmp"):
        (src / d).mkdir(parents=True)
    for f in ("PG_VERSION", "postmaster.pid", "postmaster.opts", "base/1/1259",
              "pg_wal/000000010000000000000001", "pg_replslot/s/state",
              "pg_stat_tmp/global.stat", "base/pgsql_tmp/t1"):
        (src / f).write_text(f)
    dst.mkdir()
    copy_datadir(src, dst)
    files = sorted(str(p.relative_to(dst)) for p in dst.rglob("*") if p.is_file())
    assert files == ["PG_VERSION", "base/1/1259"]
    for d in ("pg_wal/archive_status", "pg_replslot", "pg_stat_tmp", "base/pgsql_tmp"):
        assert (dst / d).is_dir(), d
