"""Reading an operator's file safely: one home for the config, the web config, my.cnf and
queries files.

A path from a config or a flag may name anything: /dev/zero, a FIFO nobody writes to, a
directory, a 2 GB log. The file is opened without blocking and checked on the open
descriptor (so a file swapped in after a check is refused too), read up to a cap, and
decoded as UTF-8; anything else is a ConfigError naming the file (and the line of a bad
byte).
"""

from __future__ import annotations

import os
import stat

from dbgauge.toolkit.errors import ConfigError


def _kind(mode: int) -> str:
    return ("a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a file")


def read_text(path: str | os.PathLike[str], what: str, limit: int) -> str:
    """The UTF-8 text of the regular file at `path`, at most `limit` bytes; `what` names
    it in errors ("config", "queries file")."""
    source = os.fspath(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; regular files ignore it.
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror}", source=source) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigError(f"cannot read {what}: not a regular file ({_kind(mode)})",
                              source=source)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(65536, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror}", source=source) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise ConfigError(f"{what} is larger than {limit // 1024} KiB", source=source)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"not UTF-8 text (byte 0x{data[exc.start]:02x}): save the {what} "
                          "as UTF-8", source=source, line=line) from None


# An include tree (pgbouncer.ini's %include, my.cnf's !include/!includedir) is bounded
# in depth by each format, and in what it expands to here: eight 150-byte files that
# each include the next eight times stand for 8^7 files. A real configuration has a few
# dozen files; the same file may be included more than once, and each use counts.
MAX_INCLUDED_FILES = 1000
MAX_INCLUDED_BYTES = 16 << 20


class IncludeBudget:
    """Files and bytes one include tree has expanded so far: `take` each included file
    before parsing it; past either bound a ConfigError at the include that went over."""

    def __init__(self) -> None:
        self.files = 0
        self.bytes = 0

    def take(self, text: str, source: str, line: int | None) -> None:
        self.files += 1
        self.bytes += len(text)
        if self.files > MAX_INCLUDED_FILES or self.bytes > MAX_INCLUDED_BYTES:
            raise ConfigError(
                f"the includes expand to more than {MAX_INCLUDED_FILES} files or "
                f"{MAX_INCLUDED_BYTES >> 20} MiB (each use of a file counts): check for a "
                "file included again and again", source=source, line=line)
