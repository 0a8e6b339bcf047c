"""mysql_accounts: each account's resource limits and, on request, its global privileges,
from mysql.user (MySQL and MariaDB).

An account that can connect more times than expected, or that holds SUPER or FILE, is what
an audit asks about; the per-hour limits (0: none) say why an account is refused. Opt-in,
as mysqld_exporter's `--collect.mysql.user`; `privileges` 1 adds a 1/0 series per global
privilege column (its `--collect.mysql.user.privileges`). `limit` (default 1000 accounts,
by user and host) bounds the label set and `..._truncated` says when accounts were left
out. Needs SELECT on mysql.user.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from dbgauge.collectors._summary import Summary, parse_summary, truncated_sample, truncated_spec
from dbgauge.toolkit.db import Connection
from dbgauge.toolkit.db.privileges import query
from dbgauge.toolkit.metrics import Collector, MetricSpec, MetricTable, Option, Sample

# mysql.user's global privilege columns, as the peer names them (its query's order)
PRIVILEGES = (
    "Select_priv", "Insert_priv", "Update_priv", "Delete_priv", "Create_priv", "Drop_priv",
    "Reload_priv", "Shutdown_priv", "Process_priv", "File_priv", "Grant_priv",
    "References_priv", "Index_priv", "Alter_priv", "Show_db_priv", "Super_priv",
    "Create_tmp_table_priv", "Lock_tables_priv", "Execute_priv", "Repl_slave_priv",
    "Repl_client_priv", "Create_view_priv", "Show_view_priv", "Create_routine_priv",
    "Alter_routine_priv", "Create_user_priv", "Event_priv", "Trigger_priv",
    "Create_tablespace_priv")
LIMITS = {  # column -> what it limits (0: no limit)
    "max_questions": "Statements an hour the account may run (MAX_QUERIES_PER_HOUR)",
    "max_updates": "Data-changing statements an hour (MAX_UPDATES_PER_HOUR)",
    "max_connections": "Connections an hour (MAX_CONNECTIONS_PER_HOUR)",
    "max_user_connections": "Connections at once (MAX_USER_CONNECTIONS)",
}
_LABELS = ("user", "host")
LIMIT_SPECS = {column: MetricSpec(f"dbgauge_mysql_account_{column}", "gauge",
                                  f"{what} per account, 0 for no limit (mysql.user.{column}).",
                                  _LABELS)
               for column, what in LIMITS.items()}
PRIVILEGE = MetricSpec("dbgauge_mysql_account_privilege", "gauge",
                       "1 if the account holds the global privilege (mysql.user.<privilege>"
                       "_priv is Y), else 0; only with the `privileges` option 1.",
                       (*_LABELS, "privilege"))
TRUNCATED = truncated_spec("dbgauge_mysql_accounts", "accounts")
METRICS = MetricTable(*LIMIT_SPECS.values(), PRIVILEGE, TRUNCATED)
MYSQL_USER_SELECT = ("SELECT on mysql.user (GRANT SELECT ON mysql.user TO ..., or "
                     "GRANT SELECT ON *.* TO ...)")
_KEYS = ("account_user", "account_host")


@dataclass(frozen=True)
class AccountsFacts:
    """The accounts' limits (numbers by column), and when asked for, their privileges
    (privilege column as the peer names it -> 1.0/0.0, per account in `accounts` order)."""

    accounts: Summary
    privileges: tuple[Mapping[str, float], ...] | None = None


def _privileges(row: Mapping[str, object]) -> dict[str, float]:
    """Y -> 1, N -> 0; anything else (NULL, another value) left out, as the peer does."""
    out = {}
    for column in PRIVILEGES:
        value = row.get(column.lower())
        value = value.decode() if isinstance(value, bytes) else value
        if value in ("Y", "N"):
            out[column] = 1.0 if value == "Y" else 0.0
    return out


def read_accounts(conn: Connection, limit: int, privileges: bool) -> AccountsFacts:
    rows = query(conn, "accounts", MYSQL_USER_SELECT, (limit + 1,))
    accounts = parse_summary(rows, _KEYS, tuple(LIMITS), limit)
    if not privileges:
        return AccountsFacts(accounts)
    return AccountsFacts(accounts, tuple(_privileges(r) for r in rows[:len(accounts.rows)]))


def accounts_samples(facts: AccountsFacts) -> Iterator[Sample]:
    yield truncated_sample(TRUNCATED, facts.accounts)
    for i, row in enumerate(facts.accounts.rows):
        labels = dict(zip(_LABELS, row.keys, strict=True))
        for column, spec in LIMIT_SPECS.items():
            if (value := row.values.get(column)) is not None:
                yield Sample(spec.name, value, labels)
        if facts.privileges is not None:
            for column, held in facts.privileges[i].items():
                yield Sample(PRIVILEGE.name, held,
                             {**labels, "privilege": column.removesuffix("_priv").lower()})


class MySQLAccounts(Collector[AccountsFacts]):
    name = "mysql_accounts"
    help = ("Each account's resource limits and, with `privileges` 1, its global "
            "privileges (mysql.user), the first N accounts; opt-in.")
    kind = "mysql"
    flavors = frozenset({"mysql", "mariadb"})
    default_enabled = False
    metrics = METRICS
    options = {
        "limit": Option(1000, "How many accounts at most (by user and host).",
                        maximum=100_000),
        "privileges": Option(0, "1: also each account's global privileges (one series per "
                             "privilege column), as mysqld_exporter's "
                             "--collect.mysql.user.privileges.", minimum=0, maximum=1),
    }

    def read(self, conn: Connection) -> AccountsFacts:
        return read_accounts(conn, int(self.setting("limit")),
                             bool(self.setting("privileges")))

    def samples(self, facts: AccountsFacts) -> Iterable[Sample]:
        return accounts_samples(facts)
