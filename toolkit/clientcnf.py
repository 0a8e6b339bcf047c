"""Which MySQL option files a client reads, and reading them (`toolkit.mycnf` parses).

Like the mysql client: without --defaults-file (a DSN's `read_default_file=`), the
global files then the user's (/etc/my.cnf, /etc/mysql/my.cnf, $MYSQL_HOME/my.cnf,
~/.my.cnf), each skipped when absent; with one, only that file, which must exist.
`!include` and `!includedir` are followed; an include that cannot be read is skipped,
as mysqld and the client skip it. Files are read with the size cap and checks of
`toolkit.files` (regular files only).
"""

from __future__ import annotations

import os
from pathlib import Path

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.files import read_text
from dbgauge.toolkit.mycnf import (
    CLIENT_GROUPS,
    CnfDirective,
    CnfFile,
    client_options,
    flatten_mycnf,
)

MAX_OPTION_FILE_BYTES = 1 << 20


def default_files() -> tuple[Path, ...]:
    """The files the mysql client reads when given no --defaults-file, in order."""
    files = [Path("/etc/my.cnf"), Path("/etc/mysql/my.cnf")]
    if os.environ.get("MYSQL_HOME"):
        files.append(Path(os.environ["MYSQL_HOME"]) / "my.cnf")
    files.append(Path("~/.my.cnf").expanduser())
    return tuple(files)


def read_option_file(path: Path, named_by: CnfDirective | None = None) -> str:
    """A regular UTF-8 option file of sensible size, or a ConfigError; for an included
    file, located at the directive that names it."""
    try:
        return read_text(path, "option file", MAX_OPTION_FILE_BYTES)
    except ConfigError as exc:
        if named_by is None:
            raise
        raise ConfigError(f"!{named_by.kind} {path}: {exc.detail}", source=named_by.source,
                          line=named_by.line) from None


def include_files(d: CnfDirective) -> list[Path] | str:
    """The files an !include/!includedir names (relative to the including file; a
    directory's *.cnf in order), or why there are none: mysqld skips such a directive."""
    target = Path(d.path) if os.path.isabs(d.path) else Path(d.source).parent / d.path
    if d.kind == "includedir":
        try:
            return sorted(f for f in target.iterdir() if f.suffix == ".cnf")
        except OSError as exc:
            return f"cannot read {target}: {exc.strerror or exc}; mysqld skips it"
    if not os.path.lexists(target):
        return f"cannot read {target}: not found; mysqld skips it"
    return [target]


def load_option_file(path: str, skip_unreadable: bool = True) -> CnfFile:
    """One option file with its includes; the main file's errors are ConfigErrors. A
    missing include is a non-fatal problem of the result, as mysqld only warns about it;
    an include that exists but cannot be read (not a regular UTF-8 file, too large) is
    one too, as the client skips it, unless `skip_unreadable` is off (validating: a
    ConfigError at its directive)."""
    text = read_option_file(Path(path))

    def resolve(d: CnfDirective) -> list[tuple[str, str]] | str:
        files = include_files(d)
        if isinstance(files, str):
            return files
        try:
            return [(read_option_file(f, d), str(f)) for f in files]
        except ConfigError as exc:
            if not skip_unreadable:
                raise
            return f"{exc.detail}; mysqld skips it"

    return flatten_mycnf(text, path, resolve)


def client_settings(defaults_file: str | None = None, group: str | None = None
                    ) -> dict[str, str]:
    """user, password, host, port, socket, database, ssl_ca from the client's option
    files (a later file wins), in the client's groups and `group` (--defaults-group,
    check_mysql's -g: read as the C client reads MYSQL_READ_DEFAULT_GROUP, beside
    [client]). A bad line in a file read is a ConfigError naming it."""
    if defaults_file is not None:
        paths = [Path(defaults_file).expanduser()]
    else:
        paths = [p for p in default_files() if p.exists()]
    settings: dict[str, str] = {}
    for path in paths:
        try:
            cnf = load_option_file(str(path))
        except ConfigError:
            if defaults_file is not None:
                raise
            continue  # an unreadable global file: the client goes on without it
        fatal = next((p for p in cnf.problems if p.fatal), None)
        if fatal is not None:
            raise ConfigError(f"{fatal.message}", source=fatal.source, line=fatal.line)
        settings.update(client_options(cnf, (*CLIENT_GROUPS, *((group,) if group else ()))))
    return settings
