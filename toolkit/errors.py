"""One exception tree for expected failures; the CLI maps it to exit codes.

Messages are written for operators: what is wrong, where, and what to do. They must
never contain a password (DSNs are redacted before they reach a message).
"""

from __future__ import annotations


class DbgaugeError(Exception):
    """An expected failure: shown to the user as one line, never as a traceback."""

    exit_code = 1


class ConfigError(DbgaugeError):
    """Invalid configuration or command-line input (monitoring-plugin UNKNOWN is 3,
    but a bad config is a usage error: exit 2 like click's usage errors)."""

    exit_code = 2

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

    exit_code = 2


class AuthError(ConnectError):
    """The server rejected the credentials."""


class QueryError(DbgaugeError):
    """A statement failed or timed out on a reachable server."""

    exit_code = 2
