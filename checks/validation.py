"""What the configuration validators share (pgbouncer.ini, InnoDB Cluster my.cnf)."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The closest known name, for 'unknown key' messages."""
    import difflib  # only when a key is unknown: most files load without it

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.75)
    return found[0] if found else None
