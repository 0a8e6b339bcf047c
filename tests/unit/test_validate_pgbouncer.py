"""validate pgbouncer: parsers (golden + fuzzed), the parameter table against a real 1.18
SHOW CONFIG, the good/bad corpus with expected findings, drift logic, renderings, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbgauge.checks.pgbouncer.authfile import parse_auth_file
from dbgauge.checks.pgbouncer.check import check_pgbouncer
from dbgauge.checks.pgbouncer.connstr import parse_connstr
from dbgauge.checks.pgbouncer.hba import parse_hba
from dbgauge.checks.pgbouncer.ini import Entry, flatten, parse_pgbouncer_ini
from dbgauge.checks.pgbouncer.live import compare_show_config, compare_show_databases
from dbgauge.checks.pgbouncer.model import Environment, build_config, check_value, strtol
from dbgauge.checks.pgbouncer.params import LATEST, PARAMS
from dbgauge.checks.pgbouncer.params import table_version as parse_version
from dbgauge.checks.pgbouncer.rules import RULES
from dbgauge.checks.pgbouncer.run import environment_for, load_config
from dbgauge.cli import cli
from dbgauge.toolkit.render.findings import render_sarif
from dbgauge.toolkit.result import Severity, config_result, severity_of
from tests.helpers.validate import (
    FIXTURES,
    as_plain,
    check_golden,
    finding_lines,
    json_rows,
    read_expected,
)

PGB = FIXTURES / "pgbouncer"
BAD = sorted(p.name for p in (PGB / "bad").iterdir() if p.is_dir())


def _run(directory: Path, options: dict[str, str]) -> list[str]:
    opts = dict(options)
    version = parse_version(opts.pop("version")) if "version" in opts else LATEST
    kw = {k: int(v) for k, v in opts.items()}
    kw.setdefault("fd_limit", 1_000_000)
    cfg = load_config(str(directory / "pgbouncer.ini"))
    return finding_lines(check_pgbouncer(cfg, environment_for(cfg, version, **kw)), directory)


@pytest.mark.parametrize("case", BAD)
def test_bad_corpus_gives_exactly_the_expected_findings(case: str) -> None:
    directory = PGB / "bad" / case
    options, expected = read_expected(directory)
    assert expected, "a bad fixture must expect at least one finding"
    assert _run(directory, options) == expected


@pytest.mark.parametrize(("case", "version"), [("minimal", "1.18"), ("minimal", "1.25"),
                                               ("full", "1.18"), ("full", "1.24"),
                                               ("transaction-1.21", "1.21")])
def test_good_corpus_has_no_errors_or_warnings(case: str, version: str) -> None:
    assert _run(PGB / "good" / case, {"version": version, "max_connections": "500"}) == []


def test_the_same_good_file_fails_on_a_version_that_lacks_its_features() -> None:
    lines = _run(PGB / "good" / "transaction-1.21", {"version": "1.20"})
    assert lines == ["error pgbouncer.ini:13 pgbouncer/version max_prepared_statements"]


# ------------------------------------------------------------ table vs a real server


def _show_config() -> list[dict[str, str | None]]:
    return json_rows(PGB / "show_config_1.18.txt")


def test_parameter_table_matches_pgbouncer_1_18_show_config() -> None:
    rows = {str(r["key"]): r for r in _show_config()}
    in_table = {name for name, p in PARAMS.items() if p.exists_in((1, 18))}
    assert set(rows) == in_table
    for name, row in rows.items():
        param = PARAMS[name]
        assert param.restart == (row["changeable"] == "no"), name
        default = param.default_for((1, 18))
        if row["default"] is not None and default is not None:
            if param.kind in ("int", "bool", "uint"):
                assert strtol(default) == strtol(row["default"]), name
            else:
                assert default == row["default"], name


def test_sandbox_file_matches_its_show_config_capture() -> None:
    cfg = load_config(str(PGB / "sandbox_pgbouncer_1.18.ini"))
    assert compare_show_config(cfg, _show_config(), "pgbouncer") == []
    assert compare_show_databases(cfg, json_rows(PGB / "show_databases_1.18.txt"),
                                  "pgbouncer") == []


def test_drift_and_pending_restart_are_told_apart(tmp_path: Path) -> None:
    text = (PGB / "sandbox_pgbouncer_1.18.ini").read_text()
    text = text.replace("default_pool_size = 10", "default_pool_size = 25")
    text = text.replace("listen_port = 36432", "listen_port = 36433")
    text = text.replace("[pgbouncer]", "reports = host=127.0.0.1 port=35432\n\n[pgbouncer]")
    ini = tmp_path / "pgbouncer.ini"
    ini.write_text(text)
    cfg = load_config(str(ini))
    found = compare_show_config(cfg, _show_config(), "pgbouncer")
    found += compare_show_databases(cfg, json_rows(PGB / "show_databases_1.18.txt"), "p")
    got = {(f.kind, f.key, f.line) for f in found}
    assert got == {("pgbouncer/drift", "default_pool_size", 19),
                   ("pgbouncer/restart-pending", "listen_port", 10),
                   ("pgbouncer/live-databases", "reports", 6)}
    assert all(severity_of(f) == Severity.WARNING for f in found)


def test_values_normalised_like_pgbouncer_before_comparing() -> None:
    assert strtol("0777") == 511 and strtol("0x1F") == 31 and strtol("-5") == -5
    assert strtol("08") is None and strtol("10k") is None and strtol("") is None
    err, fix, _ = check_value(PARAMS["server_lifetime"], "1h")
    assert err and fix == "write 3600"
    assert check_value(PARAMS["server_lifetime"], "1.5")[0] is None
    assert check_value(PARAMS["server_lifetime"], "nan")[0]
    assert check_value(PARAMS["auth_type"], "SCRAM-SHA-256")[0] is None


# ------------------------------------------------------------------------- parsers


def test_ini_parser_golden() -> None:
    text = (FIXTURES / "golden" / "pgbouncer.ini").read_text()
    check_golden(FIXTURES / "golden" / "pgbouncer.ini.json",
                 as_plain(parse_pgbouncer_ini(text, "pgbouncer.ini")))


def test_connstr_and_auth_file_follow_pgbouncer() -> None:
    cs = parse_connstr("host=h  dbname='it''s db' password='a b'")
    assert cs.pairs == (("host", "h"), ("dbname", "it's db"), ("password", "a b"))
    assert parse_connstr("host").error and parse_connstr("host=").error
    text = '; c\n"a" "md5b9fd0d7ba4e94a7a6a8f9f01b1e6a7b9"\n"b""q" "x"\n# no\n"c" ""'
    auth = parse_auth_file(text, "u")
    assert [(u.name, u.secret_kind, u.line) for u in auth.users] == [
        ("a", "md5", 2), ('b"q', "plain", 3)]
    assert [p.line for p in auth.problems] == [4]


def test_hba_parser_reads_addresses_and_masks() -> None:
    hba = parse_hba('host "all" "odd user" 10.1.2.3 255.255.0.0 md5\nlocal all all peer\n', "h")
    assert [(r.network, r.users, r.method) for r in hba.rules] == [
        ("10.1.0.0/16", ("odd user",), "md5"), (None, ("all",), "peer")]
    assert [p.fatal for p in hba.problems] == [False]  # bits outside the mask


_LINES = st.lists(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=60),
                  max_size=30).map("\n".join)
_INIISH = st.lists(st.sampled_from(["[databases]", "[pgbouncer]", "[users]", "[peers]",
                                    "a = host=x port=1", "auth_type = trust", "x", "%include y",
                                    '"q""" = dbname=1', "pool_mode = statement", "= =",
                                    "listen_addr = *", "auth_file = u", "[", ";c", "1 = host=h"]),
                   max_size=25).map("\n".join)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_LINES, _INIISH))
def test_ini_parser_never_raises_and_locates_problems(text: str) -> None:
    parsed = parse_pgbouncer_ini(text, "f.ini")
    nlines = text.count("\n") + 1
    for item in parsed.items:
        assert 1 <= item.line <= nlines
    flat = flatten(parsed, lambda include: "not found")
    cfg = build_config("f.ini", flat)
    findings = check_pgbouncer(cfg, Environment(auth_file="missing"))
    for f in findings:
        assert f.line is None or 1 <= f.line <= nlines


@settings(max_examples=300)
@given(_LINES)
def test_aux_parsers_never_raise(text: str) -> None:
    nlines = text.count("\n") + 1
    parse_connstr(text.replace("\n", " "))
    for problems in (parse_auth_file(text, "a").problems, parse_hba(text, "h").problems):
        assert all(1 <= p.line <= nlines for p in problems)


def test_thousand_databases_validate(tmp_path: Path) -> None:
    """A large [databases] section is read whole and judged clean (how long it takes is a
    benchmark's business, not a test's)."""
    dbs = "\n".join(f"db{i} = host=10.0.{i // 250}.{i % 250 + 1} port=5432 dbname=db{i} "
                    f"pool_size={5 + i % 7}" for i in range(1000))
    ini = tmp_path / "pgbouncer.ini"
    ini.write_text(f"[databases]\n{dbs}\n[pgbouncer]\nlisten_addr = 127.0.0.1\n"
                   "auth_file = users.txt\nadmin_users = ops\nmax_client_conn = 10000\n")
    (tmp_path / "users.txt").write_text('"ops" "pw"\n')
    cfg = load_config(str(ini))
    findings = check_pgbouncer(cfg, environment_for(cfg, LATEST, max_connections=100000,
                                                    fd_limit=1_000_000))
    assert len(cfg.databases) == 1000
    assert not [f for f in findings if severity_of(f) != Severity.INFO]


# ----------------------------------------------------------------------- renderings


def _result() -> object:
    cfg = load_config(str(PGB / "bad" / "tls" / "pgbouncer.ini"))
    return config_result("t", check_pgbouncer(cfg, environment_for(cfg, LATEST)))


def test_exit_codes_and_strict() -> None:
    from dbgauge.cli.base import RESULT_EXIT
    from dbgauge.toolkit.result import CheckResult

    bad = _result()
    assert isinstance(bad, CheckResult) and RESULT_EXIT["validate"][bad.status] == 1
    warn_only = config_result("w", [f for f in bad.findings
                                    if severity_of(f) != Severity.ERROR])
    assert RESULT_EXIT["validate"][warn_only.status] == 0
    assert RESULT_EXIT["validate --strict"][warn_only.status] == 1


def test_sarif_has_rules_levels_and_locations() -> None:
    from dbgauge.toolkit.result import CheckResult

    result = _result()
    assert isinstance(result, CheckResult)
    doc = json.loads(render_sarif(result, RULES, base=FIXTURES.parents[1]))
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert len(run["results"]) == len(result.findings)
    for res in run["results"]:
        assert rule_ids[res["ruleIndex"]] == res["ruleId"]
        assert res["level"] in ("error", "warning", "note")
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].startswith("fixtures/validate/pgbouncer/bad/tls")
        assert loc["region"]["startLine"] >= 1


def test_cli_formats_and_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    good = str(PGB / "good" / "minimal" / "pgbouncer.ini")
    ok = runner.invoke(cli, ["validate", "pgbouncer", good, "--pgbouncer-version", "1.18"])
    assert ok.exit_code == 0, ok.output
    bad = str(PGB / "bad" / "values" / "pgbouncer.ini")
    res = runner.invoke(cli, ["validate", "pgbouncer", bad, "--format", "json",
                              "--pgbouncer-version", "1.25"])
    assert res.exit_code == 1
    doc = json.loads(res.output)
    assert doc["counts"]["error"] == 9
    assert {"severity", "file", "line", "key", "message", "fix"} <= set(doc["findings"][0])
    sarif = runner.invoke(cli, ["validate", "pgbouncer", bad, "--format", "sarif"])
    assert sarif.exit_code == 1 and json.loads(sarif.output)["version"] == "2.1.0"
    warn = str(PGB / "bad" / "transaction-pooling" / "pgbouncer.ini")
    assert runner.invoke(cli, ["validate", "pgbouncer", warn]).exit_code == 0
    assert runner.invoke(cli, ["validate", "pgbouncer", warn, "--strict"]).exit_code == 1
    missing = runner.invoke(cli, ["validate", "pgbouncer", str(tmp_path / "nope.ini")])
    assert missing.exit_code == 2
    assert "cannot read" in missing.output and "Traceback" not in missing.output
    badver = runner.invoke(cli, ["validate", "pgbouncer", good, "--pgbouncer-version", "2.0"])
    assert badver.exit_code == 2 and "not in the parameter table" in badver.output


def test_entry_dataclass_is_frozen() -> None:
    e = Entry("k", "v", "s", 1)
    with pytest.raises(AttributeError):
        e.key = "x"  # type: ignore[misc]


def test_the_parameter_table_follows_the_version_known_and_says_which() -> None:
    """--pgbouncer-version, else the live pooler's, else the installed pgbouncer's (1.18 on
    Debian 12), else the latest known; the result's summary names the table and why."""
    from dbgauge.checks.pgbouncer.params import LATEST
    from dbgauge.checks.pgbouncer.run import PgbouncerOptions, chosen_version

    assert chosen_version(PgbouncerOptions(installed=(1, 18)), None) == (
        (1, 18), "the installed pgbouncer's version")
    assert chosen_version(PgbouncerOptions(installed=(1, 18)), (1, 21)) == (
        (1, 21), "the live pooler's version")
    assert chosen_version(PgbouncerOptions(version=(1, 20), installed=(1, 18)), (1, 21)) == (
        (1, 20), "--pgbouncer-version")
    assert chosen_version(PgbouncerOptions(installed=(1, 99)), None)[0] == LATEST
    assert chosen_version(PgbouncerOptions(), None) == (
        LATEST, "the latest known; set --pgbouncer-version")
