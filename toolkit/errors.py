"""One exception tree for expected failures; the CLI alone maps it to exit codes.

Messages are written for operators: what is wrong, where, and what to do. They must
never contain a password (DSNs are redacted before they reach a message). Exceptions
carry facts (a file and line, a server error number), never an exit code: what a
failure means for a command's exit status is decided in one table in `dbgauge.cli`.
"""

from __future__ import annotations


class DbgaugeError(Exception):
    """An expected failure: shown to the user as one line, never as a traceback."""


class ConfigError(DbgaugeError):
    """Invalid configuration or command-line input, with where it was found."""

    def __init__(self, message: str, *, source: str | None = None, path: str | None = None,
                 line: int | None = None) -> None:
        self.source = source
        self.path = path
        self.line = line
        where = ""
        if source:
            where = source if line is None else f"{source}:{line}"
        if path:
            where = f"{where}: {path}" if where else path
        super().__init__(f"{where}: {message}" if where else message)
        self.detail = message


class ConnectError(DbgaugeError):
    """Could not connect or authenticate to a target."""


class AuthError(ConnectError):
    """The server rejected the credentials."""


class QueryError(DbgaugeError):
    """A statement failed or timed out on a reachable server.

    `errno` is the MySQL/MariaDB server error number and `sqlstate` the SQLSTATE code
    (PostgreSQL's, or MySQL's where the driver gives one), so callers test the error
    itself rather than its message text. `timed_out` is True when a server-side or
    client-side time limit ended the statement.
    """

    def __init__(self, message: str, *, errno: int | None = None, sqlstate: str | None = None,
                 timed_out: bool = False) -> None:
        super().__init__(message)
        self.errno = errno
        self.sqlstate = sqlstate
        self.timed_out = timed_out

    def again(self, message: str) -> QueryError:
        """The same error with another message (e.g. prefixed with which server it was)."""
        return QueryError(message, errno=self.errno, sqlstate=self.sqlstate,
                          timed_out=self.timed_out)


class NotVisible(DbgaugeError):
    """The monitoring role cannot see what a value depends on (PostgreSQL answers with
    what the role may see, rather than refuse): the message names the grant to run. A
    check is UNKNOWN with it; it is never reported as a value."""


class Incomplete(DbgaugeError):
    """A collector finished with some of its parts failed (one custom query of several):
    the samples it gave before raising stand, and the collector is reported as failed."""


class CheckFailed(DbgaugeError):
    """A check, a checksum or a validation could not be done at all (an unreadable file, a
    replica whose replication stopped, a server that is not what was expected): any result
    would be meaningless, so none is given."""


class SandboxError(DbgaugeError):
    """The local sandbox could not be set up or driven."""


class MissingBinaryError(SandboxError):
    """A server binary the sandbox needs is not installed (deploy/install-deps adds it)."""


class WriteRefused(DbgaugeError):
    """A writer found its server read-only (a replica, a standby) and wrote nothing there
    (`toolkit.write_guard`): the message names the setting found and what to do."""
