"""Where this test process's servers live: the sandbox's base port and directory.

`make test` runs the suite on several pytest-xdist workers (gw0, gw1, ...), each with a
sandbox of its own, so that no test shares a server with a test running beside it (many
stop, lock, kill or fill one). Worker N uses base port B + 10 * N, where B is
DBGAUGE_TEST_BASE_PORT if set, else derived from the checkout's path (`checkout_base`):
10000 + 40 * (a hash of the path, mod 25), so two checkouts on one machine get sandboxes of
their own (`claimed_by` names the other one when two still meet). Every sandbox port
(base + 3306 ... base + 6432, and the sandbox tests' own at base + 2000) stays distinct
across workers and checkouts (bases differ by less than the 998 between two offsets) and
below Linux's ephemeral range (32768-60999), so an outgoing connection's local port can
never squat on one. A developer's `make demo` sandbox (base 20000) is never disturbed.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from tests.helpers import REPO

SLOTS = 25  # 40 * 24 + 10 * workers stays under 998, the nearest two port offsets' gap
OWNER_FILE = "checkout"  # in a test sandbox's directory: the checkout whose it is


def checkout_base(checkout: Path) -> int:
    """The default base port of a checkout's test sandboxes."""
    return 10000 + 40 * (zlib.crc32(str(checkout).encode()) % SLOTS)


WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
WORKER_INDEX = int(WORKER[2:]) if WORKER.startswith("gw") and WORKER[2:].isdigit() else 0
ROOT_PORT = int(os.environ.get("DBGAUGE_TEST_BASE_PORT") or checkout_base(REPO))
BASE_PORT = ROOT_PORT + 10 * WORKER_INDEX
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


def claimed_by(directory: Path, checkout: Path, running: bool) -> str | None:
    """The other checkout whose running sandbox is in `directory`, if any: two checkouts
    whose paths hash alike (or that set the same DBGAUGE_TEST_BASE_PORT) are told so
    plainly rather than share servers."""
    owner_file = directory / OWNER_FILE
    owner = owner_file.read_text().strip() if owner_file.is_file() else ""
    return owner if owner and owner != str(checkout) and running else None


def claim(directory: Path, checkout: Path) -> None:
    (directory / OWNER_FILE).write_text(f"{checkout}\n")
