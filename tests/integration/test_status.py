"""`dbgauge status` against the session sandbox: the trees it discovers, and what a stopped
replica, a stopped SQL thread and an errant transaction look like. Every test puts the
sandbox back as it found it (the replica started again, threads running, the errant GTID
reconciled), as conftest's `_servers_outlive_the_test` requires."""

from __future__ import annotations

import ctypes
import json
import os
import pty
import select
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from dbgauge.cli.status import CLEAR
from dbgauge.toolkit import sandbox as sb
from dbgauge.toolkit.result import Status
from tests.helpers import DBGAUGE, REPO, wait_for
from tests.helpers.daemon import config_file, heartbeat
from tests.helpers.servers import (
    Sandbox,
    errant_write,
    lock_wait,
    replicating,
    run,
    waiting_pgbouncer_client,
)

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _heartbeat_writer(sandbox: Sandbox) -> Iterator[None]:
    """The replica's lag is read from the heartbeat table (the sandbox's config says so):
    a writer runs on the primary, as the daemon's would, or the row's age is the lag."""
    with heartbeat(sandbox):
        yield


def status(sandbox: Sandbox, *args: str) -> tuple[int, str]:
    proc = subprocess.run([*DBGAUGE, "status", "--config", str(sandbox.config), *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO, check=False)
    assert not proc.stderr, proc.stderr
    return proc.returncode, proc.stdout


def as_json(sandbox: Sandbox) -> tuple[int, dict[str, Any]]:
    code, out = status(sandbox, "--format", "json")
    return code, json.loads(out)


def shape(tree: dict[str, Any]) -> tuple[Any, ...]:
    """A tree as (node, link, (children...)), children in order."""
    return (tree["node"], tree["link"], tuple(shape(c) for c in tree["children"]))


def nodes(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["name"]: n for n in doc["nodes"]}


def settled(sandbox: Sandbox) -> tuple[int, dict[str, Any]]:
    """The first all-OK answer (the heartbeat row just written may not have replicated)."""
    return wait_for(lambda: (lambda r: r if r[0] == 0 else None)(as_json(sandbox)),
                    timeout=30, what="every node to be OK")


def test_trees_of_the_sandbox(sandbox: Sandbox) -> None:
    code, doc = settled(sandbox)
    assert doc["schema"] == "dbgauge.status/1"
    assert code == 0 and doc["status"] == "OK", json.dumps(doc, indent=2)
    assert [shape(t) for t in doc["clusters"]] == [
        ("mariadb-primary", None, (("mariadb-replica", "replica", ()),)),
        ("pg-primary", None, (("pg-standby", "standby", ()),
                              ("pg-subscriber", "subscriber", ()),
                              ("pgbouncer", "pooler", ()))),
    ]
    assert doc["apart"] == []
    by = nodes(doc)
    assert by["mariadb-primary"]["role"] == "primary" and not by["mariadb-primary"]["read_only"]
    replica = by["mariadb-replica"]
    assert replica["role"] == "replica" and replica["read_only"] is True
    assert replica["replication"] == "IO Yes, SQL Yes" and replica["lag_seconds"] is not None
    standby = by["pg-standby"]
    assert standby["role"] == "standby" and standby["replication"] == "WAL receiver streaming"
    assert standby["lag_bytes"] is not None and standby["read_only"] is True
    assert by["pg-subscriber"]["role"] == "subscriber"
    assert "drift_sub: apply worker running" in by["pg-subscriber"]["replication"]
    assert by["pgbouncer"]["waiting_clients"] == 0
    assert all(n["up"] and not n["errant"] and n["status"] == "OK" for n in doc["nodes"])
    _, text = status(sandbox)
    assert text.startswith("STATUS OK - 6 node(s): 6 OK")
    assert "\nmariadb-primary [OK] " in text
    assert "\n└── replica: mariadb-replica [OK] " in text
    assert "\n├── standby: pg-standby [OK] " in text
    assert "\n└── pooler: pgbouncer [OK] " in text


def test_stopped_replica_is_down_and_critical(sandbox: Sandbox) -> None:
    sb.stop_instance(sandbox.directory, "mariadb-replica")
    try:
        code, doc = as_json(sandbox)
        replica = nodes(doc)["mariadb-replica"]
        assert code == 2 and doc["status"] == "CRITICAL"
        assert not replica["up"] and replica["status"] == "CRITICAL"
        assert replica["findings"][0]["kind"] == "down"
        assert "mariadb-replica" in doc["apart"]  # a one-shot run cannot place a dead node
        assert nodes(doc)["pg-primary"]["status"] == "OK"
        code, text = status(sandbox)
        assert code == 2 and "mariadb-replica [CRITICAL] " in text and " - down" in text
    finally:
        sb.start_instance(sandbox.directory, "mariadb-replica")
    wait_for(lambda: replicating(sandbox), timeout=30)


def test_stopped_sql_thread_is_shown(sandbox: Sandbox) -> None:
    run(sandbox, "mariadb-replica", "STOP SLAVE SQL_THREAD")
    try:
        code, doc = as_json(sandbox)
        replica = nodes(doc)["mariadb-replica"]
        assert code == 2 and replica["up"] and replica["status"] == "CRITICAL"
        assert replica["replication"] == "IO Yes, SQL No"
        assert "sql-thread-stopped" in {f["kind"] for f in replica["findings"]}
    finally:
        run(sandbox, "mariadb-replica", "START SLAVE SQL_THREAD")
    wait_for(lambda: replicating(sandbox), timeout=30)
    settled(sandbox)


def test_errant_transaction_is_flagged(sandbox: Sandbox) -> None:
    with errant_write(sandbox) as gtid:
        code, doc = as_json(sandbox)
        replica = nodes(doc)["mariadb-replica"]
        assert code == 2 and replica["errant"] and replica["status"] == "CRITICAL"
        errant = [f for f in replica["findings"] if f["kind"] == "errant-transactions"]
        assert errant and gtid in errant[0]["detail"]
        assert not nodes(doc)["mariadb-primary"]["errant"]
        _, text = status(sandbox)
        assert "SPLIT-BRAIN" in text and "[errant-transactions]" in text
    settled(sandbox)


def test_watch_redraws_in_place_and_keeps_a_dead_node_in_its_tree(sandbox: Sandbox) -> None:
    """On a terminal, --watch clears and redraws; a replica stopped meanwhile stays under
    its primary (as last seen), down; Ctrl-C exits with the state of the last frame drawn."""
    main, child = pty.openpty()
    proc = subprocess.Popen([*DBGAUGE, "status", "--config", str(sandbox.config),
                             "--watch", "1"], stdout=child, stderr=child, cwd=REPO)
    os.close(child)
    seen = bytearray()

    def drain() -> None:
        while select.select([main], [], [], 0.2)[0]:
            try:
                seen.extend(os.read(main, 65536))
            except OSError:
                break

    def frame_with(text: str) -> str | None:
        drain()
        frames = seen.decode(errors="replace").split(CLEAR)
        done = frames[:-1] if len(frames) > 2 else []  # the last frame may be half written
        return next((f for f in reversed(done) if text in f), None)

    try:
        first = wait_for(lambda: frame_with("└── replica: mariadb-replica [OK]"), timeout=60)
        assert first.startswith("STATUS OK")
        sb.stop_instance(sandbox.directory, "mariadb-replica")
        try:
            down = wait_for(lambda: frame_with("└── replica: mariadb-replica [CRITICAL]"),
                            timeout=60)
            assert " - down" in down and "In no tree" not in down
        finally:
            sb.start_instance(sandbox.directory, "mariadb-replica")
        code = interrupted(proc)
        drain()  # what it drew before it exited
        frames = [f for f in seen.decode(errors="replace").split(CLEAR)
                  if f.startswith("STATUS ")]
        last = frames[-1].split()[1]  # the restarted replica may be OK, lagging or down
        assert code == Status[last], frames[-1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
    wait_for(lambda: replicating(sandbox), timeout=30)


def test_lock_wait_old_transaction_and_waiting_clients_are_shown(sandbox: Sandbox) -> None:
    with lock_wait(sandbox) as waiting:
        def waited() -> dict[str, Any] | None:
            node = nodes(as_json(sandbox)[1])["pg-primary"]
            return node if (node["oldest_lock_wait_seconds"] or 0) >= 1 else None

        primary = wait_for(waited, what="pg-primary's lock wait to last a second")
        assert primary["oldest_transaction_seconds"] >= 1  # the lock holder's
        assert waiting.is_alive()
        _, text = status(sandbox)
        assert "oldest lock wait " in text and "oldest transaction " in text
    with waiting_pgbouncer_client(sandbox):
        bouncer = wait_for(lambda: (lambda n: n if n["waiting_clients"] == 1 else None)(
            nodes(as_json(sandbox)[1])["pgbouncer"]), what="a client to wait in a pool")
        assert bouncer["role"] == "pooler"


# ------------------------------------------------------------------ Ctrl-C, at any moment

EXIT_DEADLINE = 1.0  # seconds from SIGINT to exit, wherever `status` was
IN_CLOSE_NOWRITE = 0x10  # inotify: a file opened for reading was closed


def interrupted(proc: subprocess.Popen[bytes]) -> int:
    """SIGINT to `proc`, which must exit within EXIT_DEADLINE: its exit status."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(EXIT_DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"dbgauge status did not exit within {EXIT_DEADLINE} s of SIGINT")


class Output:
    """A process's stdout read as it comes (so the pipe never fills), split into the
    JSON documents `status --watch --format json` writes (each followed by a blank line
    once it is written in full)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self._data = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, args=(proc.stdout.fileno(),),
                                        daemon=True)
        self._reader.start()

    def _read(self, fd: int) -> None:
        while chunk := os.read(fd, 65536):
            with self._lock:
                self._data.extend(chunk)

    def docs(self) -> list[dict[str, Any]]:
        with self._lock:
            text = self._data.decode()
        return [json.loads(part + "\n}") for part in text.split("\n}\n\n")[:-1]]

    def closed(self) -> list[dict[str, Any]]:
        """Every document, once the process has exited and its stdout is read to the end."""
        self._reader.join(30)
        assert not self._reader.is_alive()
        return self.docs()


def watch(config: Path, interval: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*DBGAUGE, "status", "--config", str(config), "--watch", interval,
                             "--format", "json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO)


def stopped(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


@contextmanager
def closed_after_reading(path: Path) -> Iterator[Callable[[], bool]]:
    """A check that is true once a process has read `path` and closed it (inotify)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    try:
        if libc.inotify_add_watch(fd, os.fsencode(path), IN_CLOSE_NOWRITE) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")

        def read() -> bool:
            try:
                return bool(os.read(fd, 4096))
            except BlockingIOError:
                return False

        yield read
    finally:
        os.close(fd)


def test_ctrl_c_while_a_large_config_loads_exits_unknown_at_once(tmp_path: Path) -> None:
    """A fleet's generated config of thousands of targets takes seconds to load: Ctrl-C
    then exits at once, UNKNOWN (no state was shown), with one line and no traceback."""
    config = tmp_path / "fleet.yaml"
    config.write_text("targets:\n" + "".join(
        f"  - {{name: db{i}, kind: mysql, dsn: 'mysql://dbgauge@10.{i // 250}.{i % 250}.1/',"
        f" labels: {{rack: r{i % 40}}}}}\n" for i in range(3000)))
    with closed_after_reading(config) as read:
        proc = watch(config, "1")
        try:
            wait_for(lambda: read() or proc.poll() is not None, timeout=60,
                     what="status to read its config")
            assert proc.poll() is None, proc.communicate()
            code = interrupted(proc)
            out, err = proc.communicate()
        finally:
            stopped(proc)
    assert code == 3, err
    assert out == b"" and err.decode() == \
        "dbgauge: interrupted before the first status was read\n"


def test_ctrl_c_between_redraws_exits_with_the_state_shown(sandbox: Sandbox) -> None:
    proc = watch(sandbox.config, "30")
    try:
        output = Output(proc)
        first = wait_for(lambda: output.docs() or None, timeout=60, what="the first status")[0]
        code = interrupted(proc)  # status is sleeping until its next read, 30 s later
    finally:
        stopped(proc)
    assert code == first["exit_code"]
    assert output.closed() == [first] and proc.stderr is not None
    assert proc.stderr.read() == b""


def test_ctrl_c_while_a_node_hangs_exits_with_the_state_shown(sandbox: Sandbox,
                                                              tmp_path: Path) -> None:
    """A server that accepts connections and never answers (frozen, a half-dead
    network): the read waits up to the target's connect_timeout (2 minutes here), and
    Ctrl-C in the middle of it exits at once with the last state shown."""
    frozen = socket.socket()
    frozen.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
    port = frozen.getsockname()[1]
    config = config_file(sandbox, tmp_path / "c.yaml", [
        *yaml.safe_load(sandbox.config.read_text())["targets"],
        {"name": "frozen", "kind": "mysql", "dsn": f"mysql://dbgauge@127.0.0.1:{port}/",
         "connect_timeout": "2m"}])
    proc = watch(config, "1")
    try:
        output = Output(proc)
        first = wait_for(lambda: output.docs() or None, timeout=60, what="the first status")[0]
        assert nodes(first)["frozen"]["up"] is False and first["exit_code"] == 2
        frozen.listen(8)  # the next read connects, and waits for a greeting that never comes
        frozen.settimeout(60)
        held, _ = frozen.accept()  # status is in the middle of a read, waiting on it
        try:
            code = interrupted(proc)
        finally:
            held.close()
    finally:
        stopped(proc)
        frozen.close()
    last = output.closed()[-1]  # the state shown before the read that hung
    assert code == last["exit_code"] == 2 and nodes(last)["frozen"]["up"] is False
    assert proc.stderr is not None and proc.stderr.read() == b""
