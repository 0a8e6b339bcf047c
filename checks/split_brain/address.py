"""Whether two addresses name the same server: a replica names its source by host and
port (as configured on it), dbgauge knows the node by its DSN; either may be a name or an
IP. Resolution is cached: the check compares every channel with every node.
"""

from __future__ import annotations

import socket
from functools import lru_cache

from dbgauge.checks.split_brain.model import Address


@lru_cache(maxsize=256)
def _ips(host: str) -> frozenset[str]:
    """The addresses a host name stands for (itself when it does not resolve)."""
    try:
        return frozenset(str(info[4][0]) for info in socket.getaddrinfo(host, None))
    except (OSError, UnicodeError):
        return frozenset({host.lower()})


def same_address(a: Address, b: Address) -> bool:
    """Same port and same host, by name or by any resolved address."""
    if a[1] != b[1]:
        return False
    return a[0].lower() == b[0].lower() or bool(_ips(a[0]) & _ips(b[0]))
