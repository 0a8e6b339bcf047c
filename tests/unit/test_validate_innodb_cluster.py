"""validate innodb-cluster: my.cnf parsing (golden + fuzzed), the member/group/router
corpus with expected findings, and the live path on published MySQL 8.0/8.4 outputs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from dbgauge.checks.innodb_cluster.group_rules import check_group
from dbgauge.checks.innodb_cluster.live import check_group_members, check_member_stats, check_tables
from dbgauge.checks.innodb_cluster.member_rules import check_member
from dbgauge.checks.innodb_cluster.model import member_from_file, member_from_variables, version_for
from dbgauge.checks.innodb_cluster.mycnf import (
    CnfFile,
    as_bool,
    as_int,
    effective,
    flatten_mycnf,
    lookup,
    parse_mycnf,
)
from dbgauge.checks.innodb_cluster.run import ClusterOptions, load_cnf, validate_innodb_cluster
from dbgauge.cli import cli
from dbgauge.toolkit.result import Severity, severity_of
from tests.helpers.validate import (
    FIXTURES,
    as_plain,
    check_golden,
    finding_lines,
    json_rows,
    mysql_table_rows,
    read_expected,
)

INNO = FIXTURES / "innodb"
LIVE = INNO / "live"
BAD = sorted(p.name for p in (INNO / "bad").iterdir() if p.is_dir())


def _validate(directory: Path, options: dict[str, str]) -> list[str]:
    files = [str(directory / f) for f in options["files"].split(",")]
    replicas = tuple(str(directory / f) for f in options.get("read-replicas", "").split(",")
                     if f)
    router = str(directory / options["router"]) if "router" in options else None
    result = validate_innodb_cluster(files, ClusterOptions(
        version=version_for(options["version"]), read_replicas=replicas, router=router))
    return finding_lines(result.findings, directory)


@pytest.mark.parametrize("case", BAD)
def test_bad_corpus_gives_exactly_the_expected_findings(case: str) -> None:
    directory = INNO / "bad" / case
    options, expected = read_expected(directory)
    assert expected
    assert _validate(directory, options) == expected


def test_good_8_4_cluster_with_read_replica_and_router() -> None:
    d = INNO / "good" / "cluster-8.4"
    assert _validate(d, {"version": "8.4", "files": "m1.cnf,m2.cnf,m3.cnf,r1.cnf",
                         "router": "mysqlrouter.conf"}) == []


def test_good_8_0_cluster() -> None:
    d = INNO / "good" / "cluster-8.0"
    assert _validate(d, {"version": "8.0", "files": "m1.cnf,m2.cnf,m3.cnf"}) == []


def test_8_0_files_fail_on_8_4_and_the_reverse() -> None:
    lines = _validate(INNO / "good" / "cluster-8.0",
                      {"version": "8.4", "files": "m1.cnf,m2.cnf,m3.cnf"})
    assert lines == [f"error m{i}.cnf:8 mycnf/removed binlog_transaction_dependency_tracking"
                     for i in (1, 2, 3)]
    # [mysqld-8.0] is read by an 8.0 server only: there it supplies WRITESET, on 8.4 nothing
    d = INNO / "good" / "cluster-8.4"
    assert _validate(d, {"version": "8.0", "files": "m1.cnf,m2.cnf,m3.cnf"}) == []


def test_version_groups_includes_and_marker() -> None:
    cnf = _load(INNO / "good" / "cluster-8.4" / "m1.cnf")
    assert [Path(s).name for s in cnf.sources] == ["m1.cnf", "tuning.cnf"]  # README.txt skipped
    eff84 = effective(cnf.options, (8, 4, 3))
    assert "binlog_transaction_dependency_tracking" not in eff84
    assert as_int(eff84["innodb_buffer_pool_size"].value) == 4 << 30
    assert "binlog_transaction_dependency_tracking" in effective(cnf.options, (8, 0, 40))
    replica = member_from_file(_load(INNO / "good" / "cluster-8.4" / "r1.cnf"), (8, 4, 3))
    assert replica.role == "read-replica" and replica.role_line == 1


def _load(path: Path) -> CnfFile:
    return load_cnf(str(path))


def test_mycnf_golden_and_prefixes() -> None:
    text = (FIXTURES / "golden" / "my.cnf").read_text()
    parsed = parse_mycnf(text, "my.cnf")
    check_golden(FIXTURES / "golden" / "my.cnf.json", as_plain(parsed))
    flat = flatten_mycnf(text, "my.cnf", lambda directive: [])
    eff = effective(flat.options, (8, 4, 3))
    assert eff["report_host"].value == "db1 # not a comment"
    assert eff["tmpdir"].value == "C:\\temp\\new"
    log_bin = lookup(eff, "log_bin")
    assert log_bin is not None and log_bin.name == "disable_log_bin" and as_bool(log_bin) is False
    assert lookup(effective(flat.options, (8, 0, 40)), "log_bin").name == "log_bin"  # type: ignore[union-attr]
    assert eff["group_replication_group_name"].loose


_LINES = st.lists(st.text(max_size=50), max_size=25).map("\n".join)
_CNFISH = st.lists(st.sampled_from(["[mysqld]", "[mysqld-8.0]", "[client]", "gtid_mode=ON",
                                    "server_id=0", "skip-log-bin", "!include x", "!includedir d",
                                    "group_replication_group_name=zz", "loose-x", "a = 'b # c'",
                                    "[", "= 1", "log_bin=OFF", "report_port=7", "# c"]),
                   max_size=25).map("\n".join)


@settings(max_examples=300)
@given(st.one_of(_LINES, _CNFISH), st.sampled_from(["8.0.19", "8.0", "8.4"]))
def test_mycnf_parser_and_rules_never_raise(text: str, version: str) -> None:
    nlines = text.count("\n") + 1
    cnf = flatten_mycnf(text, "m.cnf", lambda directive: "no such file")
    for line in [o.line for o in cnf.options] + [p.line for p in cnf.problems] + \
            [d.line for d in cnf.directives]:
        assert 1 <= line <= nlines
    member = member_from_file(cnf, version_for(version))
    for f in check_member(member) + check_group([member, member]):
        assert f.line is None or 1 <= f.line <= nlines


# ----------------------------------------------------------------------- live path


def _fixture_version(path: Path) -> str:
    header = next(ln for ln in path.read_text().splitlines() if ln.startswith("# server:"))
    return header.split("MySQL", 1)[1].split()[0]


@pytest.mark.parametrize("name", ["group_members_8.0.27.txt", "group_members_8.4.8.txt",
                                  "group_members_8.4.6.txt"])
def test_healthy_published_groups_have_no_findings(name: str) -> None:
    path = LIVE / name
    rows = mysql_table_rows(path)
    assert {r["MEMBER_VERSION"] for r in rows} == {_fixture_version(path)}
    assert check_group_members(rows, True, "db") == []


def test_four_member_group_is_flagged_as_even() -> None:
    found = check_group_members(mysql_table_rows(LIVE / "group_members_8.0.20_four.txt"),
                                None, "db")
    assert [(f.kind, severity_of(f)) for f in found] == [("gr/size", Severity.WARNING)]


def test_degraded_group() -> None:
    found = check_group_members(mysql_table_rows(LIVE / "group_members_constructed_degraded.txt"),
                                True, "db")
    got = sorted((severity_of(f).value, f.key or "-", f.detail.split(":")[0]) for f in found)
    assert got == [
        ("error", "-", "single-primary group has 0 ONLINE PRIMARY members"),
        ("error", "example2:4420", "member example2"),
        ("warning", "-", "4 members"),
        ("warning", "-", "members run different versions (8.0.27, 8.4.3)"),
        ("warning", "example3:4430", "member example3"),
    ]


def test_group_replication_not_running() -> None:
    found = check_group_members([], None, "db")
    assert [severity_of(f) for f in found] == [Severity.ERROR]
    assert "not running" in found[0].detail


def test_member_stats_against_flow_control() -> None:
    variables = {"group_replication_flow_control_certifier_threshold": "25000",
                 "group_replication_flow_control_applier_threshold": "25000"}
    assert check_member_stats(mysql_table_rows(LIVE / "member_stats_8.0.18.txt"), variables,
                              "db") == []
    found = check_member_stats(mysql_table_rows(LIVE / "member_stats_constructed_backlog.txt"),
                               variables, "db")
    assert sorted((severity_of(f).value, f.key) for f in found) == [
        ("info", "acdadf61-0426-11ea-ba4c-080027c52883"),
        ("warning", "acdadf61-0426-11ea-ba4c-080027c52883"),
        ("warning", "acdadf61-0426-11ea-ba4c-080027c52883")]
    lowered = dict(variables, group_replication_flow_control_applier_threshold="30")
    found = check_member_stats(mysql_table_rows(LIVE / "member_stats_constructed_backlog.txt"),
                               lowered, "db")
    assert "e136faa2-eeab-11e9-9494-080027cb3816" in {f.key for f in found}


def test_incompatible_tables_from_a_real_server() -> None:
    found = check_tables(json_rows(LIVE / "incompatible_tables_mariadb_10.11.txt"), "db")
    assert sorted((f.key, f.detail.split(":")[0]) for f in found) == [
        ("dbgauge_validate_fixture.myisam_pk",
         "table dbgauge_validate_fixture.myisam_pk uses MyISAM engine"),
        ("dbgauge_validate_fixture.no_key",
         "table dbgauge_validate_fixture.no_key has no primary key (or non-null unique key)"),
        ("dbgauge_validate_fixture.nullable_unique",
         "table dbgauge_validate_fixture.nullable_unique has no primary key (or non-null "
         "unique key)")]


def _variables(name: str) -> list[dict[str, str]]:
    return mysql_table_rows(LIVE / name)


def test_live_variables_use_the_same_rules() -> None:
    good = member_from_variables(_variables("global_variables_8.0.36_constructed.txt"),
                                 (8, 0, 36), "db1:3306")
    assert [f for f in check_member(good) if severity_of(f) != Severity.INFO] == []
    bad = member_from_variables(_variables("global_variables_8.4.3_constructed.txt"),
                                (8, 4, 3), "db2:3306")
    got = sorted((severity_of(f).value, f.key) for f in check_member(bad))
    assert got == [("error", "enforce_gtid_consistency"), ("error", "gtid_mode"),
                   ("error", "log_bin"), ("error", "replica_preserve_commit_order"),
                   ("warning", "disabled_storage_engines"), ("warning", "server_id")]
    assert all(f.file is None for f in check_member(bad))
    dup = member_from_variables(_variables("global_variables_8.0.36_constructed.txt"),
                                (8, 0, 36), "db9:3306")
    assert {f.kind for f in check_group([good, dup])} >= {"gr/server-id", "gr/size"}


def test_cli_innodb_cluster(tmp_path: Path) -> None:
    runner = CliRunner()
    d = INNO / "good" / "cluster-8.4"
    ok = runner.invoke(cli, ["validate", "innodb-cluster", str(d / "m1.cnf"), str(d / "m2.cnf"),
                             str(d / "m3.cnf"), "--read-replica", str(d / "r1.cnf"),
                             "--router", str(d / "mysqlrouter.conf")])
    assert ok.exit_code == 0, ok.output
    bad = INNO / "bad" / "removed-8.4" / "m1.cnf"
    res = runner.invoke(cli, ["validate", "innodb-cluster", str(bad), "--mysql-version", "8.4"])
    assert res.exit_code == 1 and "mycnf/removed" in res.output
    assert runner.invoke(cli, ["validate", "innodb-cluster", str(bad), "--mysql-version",
                               "8.0"]).exit_code == 0
    wrong = runner.invoke(cli, ["validate", "innodb-cluster", str(bad), "--mysql-version", "5.7"])
    assert wrong.exit_code == 2 and "use 8.0 or 8.4" in wrong.output
    none = runner.invoke(cli, ["validate", "innodb-cluster"])
    assert none.exit_code == 2 and "at least one" in none.output
    missing = runner.invoke(cli, ["validate", "innodb-cluster", str(tmp_path / "x.cnf")])
    assert missing.exit_code == 2 and "Traceback" not in missing.output
