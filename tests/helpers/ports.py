"""Where this test process's servers live: the sandbox's base port and directory.

`make test` runs the suite on several pytest-xdist workers (gw0, gw1, ...), each with a
sandbox of its own, so that no test shares a server with a test running beside it (many
stop, lock, kill or fill one). Worker N uses base port DBGAUGE_TEST_BASE_PORT (10000) +
10 * N: every sandbox port (base + 3306 ... base + 6433, and the sandbox tests' own at base +
2000) stays distinct across workers and below Linux's ephemeral range (32768-60999), so an
outgoing connection's local port can never squat on one. A developer's `make demo` sandbox
(base 20000) is never disturbed.
"""

from __future__ import annotations

import os
from pathlib import Path

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
WORKER_INDEX = int(WORKER[2:]) if WORKER.startswith("gw") and WORKER[2:].isdigit() else 0
BASE_PORT = int(os.environ.get("DBGAUGE_TEST_BASE_PORT", "10000")) + 10 * WORKER_INDEX
# The PostgreSQL major of the sandbox's pg-* members: 15 (Debian's) unless `make test-matrix
# PG=N` says otherwise; a test reads it from `sandbox.state.pg_version`.
PG_VERSION = int(os.environ.get("DBGAUGE_TEST_PG_VERSION", "15"))
_MAJOR = "" if PG_VERSION == 15 else f"-pg{PG_VERSION}"
# The base port and the major are part of the default directory: a sandbox keeps the ports
# and the major it was made with.
SANDBOX_DIR = Path(
    f"{os.environ['DBGAUGE_TEST_SANDBOX_DIR']}{_MAJOR}{f'-{WORKER}' if WORKER else ''}"
    if os.environ.get("DBGAUGE_TEST_SANDBOX_DIR")
    else f"/tmp/dbgauge-test-{os.getuid()}-{BASE_PORT}{_MAJOR}")
