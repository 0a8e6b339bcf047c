"""validate on hostile files: each ends in one error naming the file and line, exit 2, in
bounded time and memory (the CLI runs as a child whose peak RSS is read with wait4 and
whose address space is capped, so a regression fails instead of eating the machine)."""

from __future__ import annotations

import os
import resource
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import DBGAUGE, REPO

RSS_LIMIT_MB = 300  # the CLI imports everything it needs in ~60 MB
AS_LIMIT = 2 << 30  # a runaway read dies at 2 GiB of address space instead of 6 GB RSS
TIME_LIMIT = 60.0


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, float]:
    """(exit code, stderr+stdout, peak RSS in MB) of `dbgauge validate ARGS`."""
    start = time.monotonic()
    proc = subprocess.Popen([*DBGAUGE, "validate", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=REPO,
                            preexec_fn=_limit, env={**os.environ, **(env or {})})
    assert proc.stdout is not None
    out = b""
    while chunk := proc.stdout.read(65536):  # drain, so the child never blocks on a pipe
        out += chunk
        assert time.monotonic() - start < TIME_LIMIT, "validate did not finish in time"
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out.decode(errors="replace"), usage.ru_maxrss / 1024


def _ini(tmp_path: Path, body: str, name: str = "pgbouncer.ini") -> Path:
    path = tmp_path / name
    path.write_text("[databases]\napp = host=10.0.0.5 dbname=app\n\n[pgbouncer]\n"
                    "listen_addr = 127.0.0.1\nadmin_users = ops\n" + body)
    return path


def _assert_refused(args: list[str], *expected: str) -> None:
    code, out, rss = _run(*args)
    lines = out.strip().splitlines()
    assert code == 2, out
    assert len(lines) == 1 and lines[0].startswith("dbgauge: error: "), out
    assert "Traceback" not in out
    for text in expected:
        assert text in lines[0], out
    assert rss < RSS_LIMIT_MB, f"peak RSS {rss:.0f} MB"


def test_include_of_dev_zero(tmp_path: Path) -> None:
    ini = _ini(tmp_path, "%include /dev/zero\n")
    _assert_refused(["pgbouncer", str(ini)],
                    f"{ini}:7: %include /dev/zero: cannot read %include: not a regular file "
                    "(a device)")


def test_auth_file_on_dev_urandom(tmp_path: Path) -> None:
    ini = _ini(tmp_path, "auth_type = scram-sha-256\nauth_file = /dev/urandom\n")
    _assert_refused(["pgbouncer", str(ini)],
                    f"{ini}:8: auth_file /dev/urandom: cannot read auth_file: not a regular "
                    "file (a device)")


def test_five_thousand_digit_integer(tmp_path: Path) -> None:
    ini = _ini(tmp_path, f"default_pool_size = {'9' * 5000}\n")
    _assert_refused(["pgbouncer", str(ini)],
                    f"{ini}:7: default_pool_size is a number of 5000 digits")
    port = tmp_path / "port.ini"
    port.write_text(f"[databases]\napp = host=h port={'1' * 5000}\n[pgbouncer]\n")
    _assert_refused(["pgbouncer", str(port)], f"{port}:2: app: port is a number of 5000")
    hexa = _ini(tmp_path, f"max_client_conn = 0x{'f' * 5000}\n", "hex.ini")
    _assert_refused(["pgbouncer", str(hexa)], f"{hexa}:7: max_client_conn is a number")
    cnf = tmp_path / "m1.cnf"
    cnf.write_text(f"[mysqld]\nserver_id = {'7' * 5000}\n")
    _assert_refused(["innodb-cluster", str(cnf)], f"{cnf}:2: server_id is a number of 5000")


def test_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    ini = tmp_path / "pgbouncer.ini"
    ini.write_bytes(b"[pgbouncer]\nlisten_addr = 127.0.0.1\nadmin_users = caf\xe9\n")
    _assert_refused(["pgbouncer", str(ini)], f"{ini}:3: not UTF-8 text (byte 0xe9)")
    users = tmp_path / "users.txt"
    users.write_bytes(b'"ops" "x"\n"\xff" "y"\n')
    ok = _ini(tmp_path, f"auth_file = {users}\n", "ok.ini")
    _assert_refused(["pgbouncer", str(ok)],
                    f"{ok}:7: auth_file {users}: not UTF-8 text (byte 0xff)", "(line 2)")
    cnf = tmp_path / "m1.cnf"
    cnf.write_bytes(b"[mysqld]\nserver_id = 7\nreport_host = h\xf6st\n")
    _assert_refused(["innodb-cluster", str(cnf)], f"{cnf}:3: not UTF-8 text (byte 0xf6)")


def test_include_loops(tmp_path: Path) -> None:
    a = _ini(tmp_path, "%include b.ini\n", "a.ini")
    (tmp_path / "b.ini").write_text("%include a.ini\n")
    _assert_refused(["pgbouncer", str(a)],
                    f"{tmp_path / 'b.ini'}:1: %include a.ini: {a} is already being read "
                    "(include loop)")
    m1 = tmp_path / "m1.cnf"
    m1.write_text("[mysqld]\nserver_id = 7\n!include m1.cnf\n")
    _assert_refused(["innodb-cluster", str(m1)], f"{m1}:3: !include m1.cnf:",
                    "include loop")


def test_directories_and_fifos(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.ini"
    os.mkfifo(fifo)  # nobody writes: a blocking open would hang forever
    _assert_refused(["pgbouncer", str(fifo)], f"{fifo}: cannot read pgbouncer.ini: not a "
                                              "regular file (a FIFO)")
    _assert_refused(["pgbouncer", str(tmp_path)], "not a regular file (a directory)")
    ini = _ini(tmp_path, f"%include {fifo}\n")
    _assert_refused(["pgbouncer", str(ini)], f"{ini}:7: %include {fifo}:", "(a FIFO)")
    hba = _ini(tmp_path, f"auth_type = hba\nauth_file = {fifo}\nauth_hba_file = {tmp_path}\n",
               "hba.ini")
    _assert_refused(["pgbouncer", str(hba)], f"{hba}:8: auth_file {fifo}:", "(a FIFO)")
    cnf = tmp_path / "m1.cnf"
    cnf.write_text(f"[mysqld]\nserver_id = 7\n!include {fifo}\n")
    _assert_refused(["innodb-cluster", str(cnf)], f"{cnf}:3: !include {fifo}:", "(a FIFO)")
    _assert_refused(["innodb-cluster", str(fifo)], "(a FIFO)")


def test_oversized_files(tmp_path: Path) -> None:
    big = tmp_path / "big.ini"
    with big.open("w") as f:
        f.write("[pgbouncer]\n")
        f.write(("; " + "x" * 1000 + "\n") * (5 << 10))
    _assert_refused(["pgbouncer", str(big)], f"{big}: pgbouncer.ini is larger than 4096 KiB")


@pytest.mark.parametrize("value", ["²", "٣", "1e999999", "-0x", "0x" + "f" * 39])
def test_odd_numbers_are_findings_not_tracebacks(tmp_path: Path, value: str) -> None:
    ini = tmp_path / "odd.ini"
    ini.write_text(f"[databases]\napp = host=h port={value} pool_size={value}\n[peers]\n"
                   f"{value} = host=h\n[pgbouncer]\ndefault_pool_size = {value}\n"
                   f"server_lifetime = {value}\n")
    code, out, _ = _run("pgbouncer", str(ini), "--format", "json")
    assert code == 1 and "Traceback" not in out, out


def _include_bomb(tmp_path: Path, directive: str, head: str) -> Path:
    """Eight files of under 150 bytes, each including the next eight times (8^7 files
    for the tree, some 300 MB of text): refused by what the tree expands to."""
    for level in range(8):
        body = "".join(f"{directive} f{level + 1}.conf\n" for _ in range(8)) if level < 7 \
            else "; leaf\n"
        (tmp_path / f"f{level}.conf").write_text(body)
        assert len(body) <= 150
    main = tmp_path / "main.conf"
    main.write_text(head + f"{directive} f0.conf\n")
    return main


def test_include_trees_are_bounded_in_files_and_bytes(tmp_path: Path) -> None:
    ini = _include_bomb(tmp_path, "%include", "[pgbouncer]\nlisten_addr = 127.0.0.1\n")
    _assert_refused(["pgbouncer", str(ini)], "the includes expand to more than 1000 files")
    cnf = _include_bomb(tmp_path, "!include", "[mysqld]\nserver_id = 7\n")
    _assert_refused(["innodb-cluster", str(cnf)], "the includes expand to more than 1000 files")


@pytest.mark.parametrize("fmt", ["text", "sarif"])
def test_files_named_by_the_config_are_never_echoed(tmp_path: Path, fmt: str) -> None:
    """auth_hba_file = /proc/self/environ (the validator's own environment, a CI secret
    in it), and includes of it: problems name the line and what was expected, and the
    secret appears in no output format."""
    marker = "ci-secret-5f3a9c"
    ini = _ini(tmp_path, "auth_type = hba\nauth_hba_file = /proc/self/environ\n"
               "auth_file = /proc/self/environ\n%include env.ini\n")
    (tmp_path / "env.ini").write_text(f"{marker}\n[x] {marker}\n%{marker}\n")
    cnf = tmp_path / "m1.cnf"
    cnf.write_text("!include env.cnf\n[mysqld]\nserver_id = 7\n!include /proc/self/environ\n")
    (tmp_path / "env.cnf").write_text(f"{marker}\n[x] {marker}\n!{marker}\nbad:{marker}\n")
    for args in (["pgbouncer", str(ini)], ["innodb-cluster", str(cnf)]):
        code, out, _ = _run(*args, "--format", fmt, env={"DBGAUGE_TEST_MARKER": marker})
        assert code in (1, 2) and "Traceback" not in out, out
        assert marker not in out, out
        assert "DBGAUGE_TEST_MARKER" not in out, out
    code, out, _ = _run("pgbouncer", str(ini), env={"DBGAUGE_TEST_MARKER": marker})
    assert "/proc/self/environ:1: error [pgbouncer/hba] unknown connection type (expected " \
           "one of local, host, hostssl, hostnossl)" in out, out
