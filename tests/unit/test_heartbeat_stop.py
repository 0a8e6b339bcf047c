"""`dbgauge heartbeat update` stops on SIGTERM wherever the signal lands: the handler's
`request_stop()` (Event.set) must never wait for a lock the interrupted thread holds.
Seen in the suite: SIGTERM arrived while the loop, then in the main thread, was inside
Event.wait holding the event's lock; the writer never exited."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.helpers import REPO

# The loop's wait raises SIGTERM once while holding the event's lock, as Event.wait does
# for a moment on every round: the worst moment for the signal, made certain.
SCRIPT = textwrap.dedent("""
    import signal, threading
    from dbgauge.app import parse_config
    from dbgauge.toolkit.heartbeat import HeartbeatWriter

    class Racy(threading.Event):
        fired = False

        def wait(self, timeout=None):
            if not Racy.fired:
                Racy.fired = True
                with self._cond:
                    signal.raise_signal(signal.SIGTERM)
            return super().wait(timeout)

    config = parse_config("targets:\\n  - {name: a, kind: mysql, dsn: 'mysql://u@127.0.0.1:1/',"
                          " heartbeat: {mode: write, interval: 10ms}}\\n")
    writer = HeartbeatWriter(config.all_targets()[0])
    writer._stop = Racy()
    writer.beat = lambda: None  # no server: the loop only writes nothing and waits
    signal.signal(signal.SIGTERM, lambda *_: writer.request_stop())  # as the CLI does
    writer.run()
    print("stopped")
""")


def test_sigterm_while_the_loop_holds_its_stop_event_lock_still_stops_it() -> None:
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=20, cwd=REPO, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "stopped", proc.stderr
