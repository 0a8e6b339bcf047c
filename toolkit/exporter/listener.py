"""The listening socket systemd hands over (the Go exporters' `--web.systemd-socket`): a
`.socket` unit owns the port, so the daemon can restart without refusing a scrape and
needs no privilege to bind a low port."""

from __future__ import annotations

import os
import socket

from dbgauge.toolkit.errors import ConfigError

SD_LISTEN_FDS_START = 3  # sd_listen_fds(3): the first socket passed is fd 3
_VARIABLES = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")


def systemd_listener(env: dict[str, str] | None = None) -> socket.socket:
    """The one stream socket systemd passed to this process (LISTEN_PID is ours and
    LISTEN_FDS is 1); ConfigError saying what is wrong otherwise. The variables are
    cleared, as sd_listen_fds(1) does, so no child process takes them as its own."""
    environ = os.environ if env is None else env
    pid, count = environ.get("LISTEN_PID", ""), environ.get("LISTEN_FDS", "")
    if pid != str(os.getpid()) or not count.isdigit() or len(count) > 4 or int(count) < 1:
        raise ConfigError("--web.systemd-socket: systemd passed no socket to this process "
                          "(LISTEN_FDS and LISTEN_PID are not set for it): start dbgauge from "
                          "the service of a .socket unit, or drop the flag and use --listen")
    if int(count) > 1:
        raise ConfigError(f"--web.systemd-socket: systemd passed {int(count)} sockets; dbgauge "
                          "listens on one: give the .socket unit a single ListenStream=")
    for name in _VARIABLES:
        environ.pop(name, None)
    try:
        sock = socket.socket(fileno=SD_LISTEN_FDS_START)
    except OSError as exc:
        raise ConfigError(f"--web.systemd-socket: fd {SD_LISTEN_FDS_START} is not a socket "
                          f"({exc.strerror})") from None
    if sock.type != socket.SOCK_STREAM:
        sock.detach()
        raise ConfigError("--web.systemd-socket: the socket systemd passed is not a stream "
                          "socket: use ListenStream= in the .socket unit")
    return sock
