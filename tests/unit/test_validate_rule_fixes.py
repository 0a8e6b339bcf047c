"""The rule fixes an outside check of public configs asked for (issue 17): each false
positive gone, each miss caught, each noisy pair merged, on small files built here."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from dbgauge.checks.innodb_cluster import ClusterOptions, validate_innodb_cluster, version_for
from dbgauge.checks.pgbouncer import PgbouncerOptions, validate_pgbouncer
from dbgauge.cli import cli
from dbgauge.toolkit.result import Finding, Severity, severity_of


def _pgb(tmp_path: Path, body: str, **opts: object) -> list[Finding]:
    ini = tmp_path / "pgbouncer.ini"
    ini.write_text(body)
    opts.setdefault("fd_limit", 1_000_000)
    return list(validate_pgbouncer(str(ini), PgbouncerOptions(**opts)).findings)  # type: ignore[arg-type]


def _rules(findings: list[Finding]) -> set[tuple[str, str, str | None]]:
    return {(severity_of(f).value, f.kind, f.key) for f in findings
            if severity_of(f) != Severity.INFO}


LOCAL = "[pgbouncer]\nlisten_addr = 127.0.0.1\nadmin_users = ops\nauth_type = trust\n"


def test_missing_server_tls_files_do_not_stop_pgbouncer(tmp_path: Path) -> None:
    found = _pgb(tmp_path, "[databases]\napp = host=db\n" + LOCAL +
                 "auth_file = users\nserver_tls_sslmode = verify-full\n"
                 "server_tls_ca_file = missing/ca.pem\n")
    (tls,) = [f for f in found if f.kind == "pgbouncer/tls"]
    assert severity_of(tls) == Severity.WARNING and "PgBouncer starts" in tls.detail
    assert "does not start" not in tls.detail
    off = _pgb(tmp_path, "[databases]\napp = host=db\n" + LOCAL +
               "server_tls_sslmode = disable\nserver_tls_ca_file = missing/ca.pem\n"
               "client_tls_key_file = missing/k\n")
    assert not [f for f in off if f.kind == "pgbouncer/tls"]  # unused files: no finding


def test_public_password_listener_without_client_tls(tmp_path: Path) -> None:
    users = tmp_path / "users"
    users.write_text('"ops" "md5b9fd0d7ba4e94a7a6a8f9f01b1e6a7b9"\n')
    for mode in ("disable", "allow", "prefer"):
        found = _pgb(tmp_path, "[databases]\napp = host=db\n[pgbouncer]\nlisten_addr = *\n"
                     f"auth_type = md5\nauth_file = users\nadmin_users = ops\n"
                     f"client_tls_sslmode = {mode}\n")
        assert ("warning", "pgbouncer/client-tls", "client_tls_sslmode") in _rules(found)
    for body in ("listen_addr = 127.0.0.1\n", "listen_addr = *\nclient_tls_sslmode = require\n"
                 "client_tls_key_file = users\nclient_tls_cert_file = users\n"):
        found = _pgb(tmp_path, "[databases]\napp = host=db\n[pgbouncer]\nauth_type = md5\n"
                     f"auth_file = users\nadmin_users = ops\n{body}")
        assert not [f for f in found if f.kind == "pgbouncer/client-tls"]


def test_wildcard_database_counts_in_sizing(tmp_path: Path) -> None:
    found = _pgb(tmp_path, "[databases]\n* = host=10.0.0.5 port=5432\n" + LOCAL +
                 "auth_file = users\ndefault_pool_size = 4096\n", max_connections=100,
                 reserved_connections=3)
    (sizing,) = [f for f in found if f.kind == "pgbouncer/sizing"]
    assert severity_of(sizing) == Severity.ERROR
    assert "up to at least 4096 server connections to 10.0.0.5:5432" in sizing.detail
    assert "'*' fallback counted as one database" in sizing.detail


def test_session_pool_far_below_max_client_conn(tmp_path: Path) -> None:
    body = ("[databases]\napp = host=db user=app\n" + LOCAL +
            "auth_file = users\ndefault_pool_size = 5\nmax_client_conn = 50000\n")
    (queue,) = [f for f in _pgb(tmp_path, body) if f.kind == "pgbouncer/sizing"]
    assert "serves at most 5 clients at once" in queue.detail and queue.key == "max_client_conn"
    assert not [f for f in _pgb(tmp_path, body + "pool_mode = transaction\n")
                if f.kind == "pgbouncer/sizing"]
    stock = "[databases]\napp = host=db\n" + LOCAL + "auth_file = users\n"  # 100 vs 20
    assert not [f for f in _pgb(tmp_path, stock) if f.kind == "pgbouncer/sizing"]


def test_empty_host_takes_the_next_word(tmp_path: Path) -> None:
    found = _pgb(tmp_path, "[databases]\napp = host= port=6000 dbname=app\n" + LOCAL)
    (db,) = [f for f in found if f.kind == "pgbouncer/database"]
    assert severity_of(db) == Severity.ERROR and db.line == 2
    assert "takes the next word 'port=6000' as the host" in db.detail


def test_open_door_and_auth_any_are_one_finding(tmp_path: Path) -> None:
    found = _pgb(tmp_path, "[databases]\napp = host=db user=app\n[pgbouncer]\n"
                 "listen_addr = 0.0.0.0\nauth_type = any\n")
    auth = [f for f in found if f.key == "auth_type" and severity_of(f) != Severity.INFO]
    assert [(f.kind, severity_of(f)) for f in auth] == [("pgbouncer/auth-open",
                                                         Severity.ERROR)]
    assert "every client is admin on the console" in auth[0].detail


def test_absolute_auth_file_of_another_host(tmp_path: Path) -> None:
    body = ("[databases]\napp = host=db\n[pgbouncer]\nlisten_addr = 127.0.0.1\n"
            "auth_type = scram-sha-256\nauth_file = /etc/dbgauge-test-absent/userlist.txt\n"
            "admin_users = ops\nclient_tls_sslmode = require\n"
            "client_tls_key_file = /etc/dbgauge-test-absent/k.pem\n"
            "client_tls_cert_file = /etc/dbgauge-test-absent/c.pem\n")
    found = _pgb(tmp_path, body)
    assert _rules(found) == set()  # not judged: they are not here
    (note,) = [f for f in found if f.kind == "pgbouncer/files"]
    assert note.detail.startswith("not available here: auth_file /etc/dbgauge-test-absent/"
                                  "userlist.txt, client_tls_cert_file")
    root = tmp_path / "host1"
    (root / "etc/dbgauge-test-absent").mkdir(parents=True)
    (root / "etc/dbgauge-test-absent/userlist.txt").write_text('"ops" ""\n"app" "md5x"\n')
    found = _pgb(tmp_path, body, root=str(root))
    assert _rules(found) == {("warning", "pgbouncer/auth-file", "ops")}
    (note,) = [f for f in found if f.detail.startswith("not available here")]
    assert f"client_tls_key_file /etc/dbgauge-test-absent/k.pem; absent under --root {root}" \
        in note.detail
    read = [f.detail for f in found if f.kind == "pgbouncer/files" and f is not note]
    assert read == [f"auth_file: read {root}/etc/dbgauge-test-absent/userlist.txt (under "
                    f"--root {root})"]
    res = CliRunner().invoke(cli, ["validate", "pgbouncer", str(tmp_path / "pgbouncer.ini"),
                                   "--root", str(root), "--format", "json"])
    assert res.exit_code == 0  # a warning only
    assert {f["rule"] for f in json.loads(res.output)["findings"]} >= {"pgbouncer/files"}


def _cnf(tmp_path: Path, files: dict[str, str], version: str = "8.4") -> list[Finding]:
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    opts = ClusterOptions(version=version_for(version))
    return list(validate_innodb_cluster(paths, opts).findings)


GR = ("[mysqld]\nserver_id = {n}\ngtid_mode = ON\nenforce_gtid_consistency = ON\n"
      "disabled_storage_engines = MyISAM,BLACKHOLE,FEDERATED,ARCHIVE,MEMORY\n"
      "plugin_load_add = group_replication.so\ngroup_replication = FORCE_PLUS_PERMANENT\n"
      "group_replication_group_name = aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee\n"
      "group_replication_local_address = {addr}:33061\n"
      "group_replication_group_seeds = {seeds}\n")


def _members(addrs: list[str], first_id: int = 1) -> dict[str, str]:
    seeds = ",".join(f"{a}:33061" for a in addrs)
    return {f"m{i + 1}.cnf": GR.format(n=first_id + i, addr=a, seeds=seeds)
            for i, a in enumerate(addrs)}


def test_plugin_activation_and_explicit_server_id_1(tmp_path: Path) -> None:
    found = _cnf(tmp_path, _members(["db1", "db2", "db3"]))
    assert _rules(found) == set()
    bad = _members(["db1", "db2", "db3"])
    bad["m1.cnf"] = bad["m1.cnf"].replace("FORCE_PLUS_PERMANENT", "MAYBE")
    assert _rules(_cnf(tmp_path, bad)) == {("error", "mycnf/bad-value", "group_replication")}


def test_report_host_is_one_finding_for_the_set_or_none(tmp_path: Path) -> None:
    assert not [f for f in _cnf(tmp_path, _members(["db1", "db2", "db3"]))
                if f.kind == "gr/report-address"]  # members reach each other by name
    found = [f for f in _cnf(tmp_path, _members(["10.0.0.1", "10.0.0.2", "10.0.0.3"]))
             if f.kind == "gr/report-address"]
    assert len(found) == 1 and "m1.cnf, " in found[0].detail and found[0].file
    assert severity_of(found[0]) == Severity.WARNING


def test_galera_and_no_group_replication_sets(tmp_path: Path) -> None:
    galera = {f"g{i}.cnf": "[mysqld]\nbinlog_format = ROW\nwsrep_on = ON\n"
                           "wsrep_provider = /usr/lib/galera/libgalera_smm.so\n"
                           f"wsrep_cluster_address = gcomm://10.0.0.1,10.0.0.2\nserver_id={i}\n"
              for i in (1, 2, 3)}
    found = _cnf(tmp_path, galera)
    assert [(severity_of(f).value, f.kind, f.line) for f in found] == [
        ("error", "gr/not-innodb-cluster", 3)]
    assert "Galera" in found[0].detail and "not InnoDB Cluster" in found[0].detail
    plain = {f"p{i}.cnf": f"[mysqld]\nserver_id = {i}\nlog_bin = mysql-bin\n" for i in (1, 2, 3)}
    kinds = [f for f in _cnf(tmp_path, plain) if f.kind == "gr/not-innodb-cluster"]
    assert len(kinds) == 1 and "none of the 3 file(s) configures Group Replication" in \
        kinds[0].detail


def test_a_second_pgbouncer_header_resets_the_settings_above(tmp_path: Path) -> None:
    found = _pgb(tmp_path, "[pgbouncer]\nlisten_addr = 127.0.0.1\nauth_type = trust\n"
                 "auth_file = users\n[databases]\napp = host=db\n[pgbouncer]\n"
                 "admin_users = ops\n")
    (reset,) = [f for f in found if f.kind == "pgbouncer/duplicate"]
    assert severity_of(reset) == Severity.ERROR and reset.line == 7
    assert "the 3 setting(s) above it are lost (auth_file, auth_type, listen_addr)" in \
        reset.detail
    # what is left is judged: md5 (the default) without auth_file
    assert ("error", "pgbouncer/auth", "auth_type") in _rules(found)
