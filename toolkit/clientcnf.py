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
from collections.abc import Callable
from pathlib import Path

from toolkit.errors import ConfigError
from toolkit.files import read_text
from toolkit.mycnf import CnfDirective, CnfFile, client_options, flatten_mycnf

MAX_OPTION_FILE_BYTES = 1 << 20


def default_files() -> tuple[Path, ...]:
    """The files the mysql client reads when given no --defaults-file, in order."""
    files = [Path("/etc/my.cnf"), Path("/etc/mysql/my.cnf")]
    if os.environ.get("MYSQL_HOME"):
        files.append(Path(os.environ["MYSQL_HOME"]) / "my.cnf")
    files.append(Path("~/.my.cnf").expanduser())
    return tuple(files)


def _read(path: Path) -> str:
    return read_text(path, "option file", MAX_OPTION_FILE_BYTES)


def load_option_file(path: str, read: Callable[[Path], str] = _read) -> CnfFile:
    """One option file with its includes. The main file's errors are `read`'s to raise;
    an unreadable include becomes a non-fatal problem of the result."""
    text = read(Path(path))

    def resolve(d: CnfDirective) -> list[tuple[str, str]] | str:
        target = Path(d.path) if os.path.isabs(d.path) else Path(d.source).parent / d.path
        try:
            if d.kind == "includedir":
                files = sorted(f for f in target.iterdir() if f.suffix == ".cnf")
                return [(read(f), str(f)) for f in files]
            return [(read(target), str(target))]
        except (OSError, ConfigError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            return f"cannot read {target}: {why or exc}; mysqld skips it"

    return flatten_mycnf(text, path, resolve)


def client_settings(defaults_file: str | None = None) -> dict[str, str]:
    """user, password, host, port, socket, database, ssl_ca from the client's option
    files (a later file wins). A bad line in a file read is a ConfigError naming it."""
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
        settings.update(client_options(cnf))
    return settings
