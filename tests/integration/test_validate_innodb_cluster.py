"""validate innodb-cluster --live against the sandbox's MariaDB, PostgreSQL and PgBouncer.

MySQL 8 cannot be installed here (the live rules are tested on published MySQL outputs
in tests/unit); against MariaDB the command must say plainly that Group Replication does
not exist there and exit 2; a DSN that reaches PostgreSQL or PgBouncer is one
live/not-mysql finding. The table-compatibility SQL is MySQL/MariaDB-neutral, so it
is proven on real tables here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dbgauge.checks.innodb_cluster.live import check_tables
from dbgauge.cli import cli
from dbgauge.toolkit.db import connect_dsn
from tests.helpers.servers import Sandbox
from tests.helpers.validate import FIXTURES

pytestmark = pytest.mark.integration
SCHEMA = "dbgauge_validate_it"


def _pw(tmp_path: Path, secret: str) -> str:
    path = tmp_path / "pw"
    path.write_text(secret)
    return str(path)


def test_mariadb_live_says_group_replication_does_not_exist(sandbox: Sandbox,
                                                            tmp_path: Path) -> None:
    dsn = sandbox.state.dbgauge_dsn("mariadb-primary")
    pw = _pw(tmp_path, sandbox.state.dbgauge_password)
    good = FIXTURES / "innodb" / "good" / "cluster-8.4" / "m1.cnf"
    for args in (["--live", dsn], [str(good), "--live", dsn]):
        res = CliRunner().invoke(cli, ["validate", "innodb-cluster", *args,
                                       "--password-file", pw])
        assert res.exit_code == 2, res.output
        assert "is MariaDB" in res.output
        assert "Group Replication and InnoDB Cluster do not exist on MariaDB" in res.output
        assert "Traceback" not in res.output
        assert sandbox.state.dbgauge_password not in res.output


@pytest.mark.parametrize(("name", "product"), [("pg-primary", "PostgreSQL"),
                                              ("pgbouncer", "PgBouncer")])
def test_live_server_that_is_not_mysql(sandbox: Sandbox, tmp_path: Path, name: str,
                                       product: str) -> None:
    """The DSN is spoken in its own protocol (no MySQL handshake a PostgreSQL server never
    answers) and the server is named for what it is: one error finding, no member."""
    dsn = sandbox.state.dbgauge_dsn(name)
    pw = _pw(tmp_path, sandbox.state.dbgauge_password)
    res = CliRunner().invoke(cli, ["validate", "innodb-cluster", "--live", dsn,
                                   "--password-file", pw, "--format", "json"])
    assert res.exit_code == 1, res.output
    found = json.loads(res.output)["findings"]
    assert [(f["rule"], f["severity"], f["file"]) for f in found] == [
        ("live/not-mysql", "error", None)]
    address = f"127.0.0.1:{sandbox.state.port(name)}"
    assert found[0]["message"].startswith(f"{address} is {product} ")
    assert found[0]["node"] == address and "not MySQL" in found[0]["message"]
    assert sandbox.state.dbgauge_password not in res.output

    # Beside member files: the files are validated as ever, the server adds one finding.
    good = FIXTURES / "innodb" / "good" / "cluster-8.4"
    files = [str(good / f"m{i}.cnf") for i in (1, 2, 3)]
    sarif = CliRunner().invoke(cli, ["validate", "innodb-cluster", *files, "--live", dsn,
                                     "--password-file", pw, "--format", "sarif"])
    assert sarif.exit_code == 1, sarif.output
    run = json.loads(sarif.output)["runs"][0]
    assert [r["ruleId"] for r in run["results"] if r["level"] != "note"] == ["live/not-mysql"]
    assert {"id": "live/not-mysql", "name": "live.not-mysql",
            "shortDescription": {"text": "Server is not MySQL"}} in run["tool"]["driver"]["rules"]
    offline = CliRunner().invoke(cli, ["validate", "innodb-cluster", *files])
    assert offline.exit_code == 0, offline.output


def test_incompatible_tables_query_on_real_tables(sandbox: Sandbox) -> None:
    admin = connect_dsn(sandbox.admin_dsn("mariadb-primary"))
    monitor = connect_dsn(sandbox.state.dbgauge_dsn("mariadb-primary"),
                          password=sandbox.state.dbgauge_password)
    try:
        admin.execute_sql(f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
        for ddl in ("ok_pk (id INT PRIMARY KEY) ENGINE=InnoDB",
                    "ok_uk (a INT NOT NULL, UNIQUE KEY (a)) ENGINE=InnoDB",
                    "null_uk (a INT NULL, UNIQUE KEY (a)) ENGINE=InnoDB",
                    "no_key (a INT) ENGINE=InnoDB",
                    "aria_pk (id INT PRIMARY KEY) ENGINE=Aria"):
            admin.execute_sql(f"CREATE TABLE {SCHEMA}.{ddl}")
        rows = [r for r in monitor.query("validate_incompatible_tables")
                if r["table_schema"] == SCHEMA]
        found = sorted((f.key, f.detail.split(" ")[2]) for f in check_tables(rows, "maria"))
        assert found == [(f"{SCHEMA}.aria_pk", "uses"), (f"{SCHEMA}.no_key", "has"),
                         (f"{SCHEMA}.null_uk", "has")]
    finally:
        admin.execute_sql(f"DROP DATABASE IF EXISTS {SCHEMA}")
        admin.close()
        monitor.close()
