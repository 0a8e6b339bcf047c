"""mysqld_exporter's mysql.user scraper (`--collect.mysql.user`, and
`--collect.mysql.user.privileges`), from the facts of dbgauge's mysql_accounts: merged into
the mysqld_exporter dialect (`FAMILIES`, `TRANSLATE`).

The same names in Debian's 0.14 and upstream: `mysql_mysql_max_*` per account, labelled
`mysql_user` and `hostmask`, and with the privileges switch one gauge per privilege column
(`mysql_mysql_select_priv`...: 1 for Y, 0 for N, anything else left out), which dbgauge
reads with its collector's `privileges` option 1.
"""

from __future__ import annotations

from collections.abc import Iterator

from dbgauge.collectors.mysql_accounts import LIMITS, PRIVILEGES, AccountsFacts
from dbgauge.toolkit.dialect import PeerFamilies, PeerFamily, PeerSpec, Translate
from dbgauge.toolkit.metrics import Sample

_LABELS = ("mysql_user", "hostmask")
_TOP_N = "dbgauge keeps the collector's first N accounts (`limit`); the peer has no limit"
_LIMITS = {column: PeerFamily(PeerSpec(f"mysql_mysql_{column}", "gauge",
                                       f"The number of {column} by user.", _LABELS),
                              f"dbgauge_mysql_account_{column}", _TOP_N)
           for column in LIMITS}
_PRIVILEGES = {column: PeerFamily(PeerSpec(f"mysql_mysql_{column.lower()}", "gauge",
                                           f"{column} by user.", _LABELS),
                                  "dbgauge_mysql_account_privilege",
                                  _TOP_N + "; dbgauge's `privileges` option 1, as the peer's "
                                  "--collect.mysql.user.privileges")
               for column in PRIVILEGES}
FAMILIES: tuple[PeerFamily, ...] = (*_LIMITS.values(), *_PRIVILEGES.values())
_MINE = PeerFamilies(*FAMILIES)


def accounts(facts: AccountsFacts) -> Iterator[Sample]:
    """mysql.user: per account its privileges (when read) then its four limits, as the
    peer sends them."""
    for i, row in enumerate(facts.accounts.rows):
        labels = dict(zip(_LABELS, row.keys, strict=True))
        if facts.privileges is not None:
            for column, held in facts.privileges[i].items():
                yield _MINE.sample(_PRIVILEGES[column].spec.name, held, labels)
        for column, family in _LIMITS.items():
            if (value := row.values.get(column)) is not None:
                yield _MINE.sample(family.spec.name, value, labels)


TRANSLATE: dict[str, Translate] = {"mysql_accounts": accounts}
