"""Config validation: every error names file, line and YAML path, and never a password."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbgauge.app import load_config, parse_config
from dbgauge.toolkit.config import Config, parse_duration
from dbgauge.toolkit.errors import ConfigError

GOOD = """\
daemon:
  listen: ":9860"
  scrape_timeout: 8s
  log_format: json
targets:
  - name: db1
    kind: mysql
    dsn: mysql://monitor@db1.example:3306/
    password_env: DB1_PW
    labels: {role: primary}
    collectors: [mysql_status]
    query_timeout: 500ms
  - name: pg1
    kind: postgres
    dsn: postgresql://monitor@pg1.example/app?sslmode=require
"""


def test_good_config_parses_with_defaults() -> None:
    cfg = parse_config(GOOD, "good.yaml")
    assert isinstance(cfg, Config)
    assert cfg.daemon.scrape_timeout == 8.0
    assert cfg.daemon.log_format == "json"
    db1 = cfg.target("db1")
    assert db1.query_timeout == 0.5
    assert db1.labels == {"role": "primary"}
    pg1 = cfg.target("pg1")
    assert pg1.collectors is None
    params = pg1.connection_params()
    assert (params.host, params.port, params.dbname) == ("pg1.example", 5432, "app")
    assert params.options == (("sslmode", "require"),)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("targets:\n  - name: a\n    kind: oracle\n    dsn: mysql://u@h/\n",
         "cfg.yaml:3: targets[0].kind: Input should be 'mysql', 'postgres' or 'pgbouncer'"),
        ("targets:\n  - name: a\n    kind: mysql\n    dns: mysql://u@h/\n",
         "cfg.yaml:4: targets[0].dns: unknown key"),
        ("targets:\n  - name: a\n    kind: mysql\n",
         "cfg.yaml:2: targets[0].dsn: required key is missing"),
        ("targets:\n  - name: a\n    kind: postgres\n    dsn: mysql://u@h/\n",
         "cfg.yaml:2: targets[0]: kind 'postgres' needs a postgresql:// DSN"),
        ("daemon:\n  listen: nowhere\ntargets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h/'}\n",
         "cfg.yaml:2: daemon.listen: 'nowhere' is not HOST:PORT"),
        ("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h/', query_timeout: soon}\n",
         "cfg.yaml:2: targets[0].query_timeout: 'soon' is not a duration"),
        ("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h/', collectors: [nope]}\n",
         "cfg.yaml:2: targets[0]: unknown collector(s) nope for kind mysql; available:"),
        ("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h/', labels: {target: x}}\n",
         "cfg.yaml:2: targets[0].labels: label 'target' is reserved"),
        ("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h/'}\n"
         "  - {name: a, kind: mysql, dsn: 'mysql://u@h2/'}\n",
         "cfg.yaml:1: targets: target name 'a' is used twice"),
        ("targets: [\n", "cfg.yaml:2: invalid YAML"),
        ("- just\n- a list\n", "cfg.yaml: the top level must be a mapping"),
        ("targets: []\n", "cfg.yaml:1: targets: List should have at least 1 item"),
    ],
)
def test_errors_name_line_and_path(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg.yaml")
    assert str(info.value).startswith(expected), str(info.value)


def test_dsn_error_never_shows_the_password() -> None:
    text = "targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u:s3cretpw@h:notaport/'}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg.yaml")
    assert "s3cretpw" not in str(info.value)
    assert "targets[0].dsn" in str(info.value)


def test_password_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pw = tmp_path / "pw"
    pw.write_text("from-file\n")
    cfg = parse_config(
        "targets:\n"
        f"  - {{name: f, kind: mysql, dsn: 'mysql://u@h/', password_file: '{pw}'}}\n"
        "  - {name: e, kind: mysql, dsn: 'mysql://u@h/', password_env: DBG_TEST_PW}\n"
        "  - {name: d, kind: mysql, dsn: 'mysql://u:in-dsn@h/'}\n"
        f"  - {{name: m, kind: mysql, dsn: 'mysql://u@h/', password_file: '{tmp_path}/nope'}}\n",
    )
    assert cfg.target("f").connection_params().password == "from-file"
    assert cfg.target("d").connection_params().password == "in-dsn"
    monkeypatch.delenv("DBG_TEST_PW", raising=False)
    with pytest.raises(ConfigError, match="DBG_TEST_PW is not set"):
        cfg.target("e").connection_params()
    monkeypatch.setenv("DBG_TEST_PW", "from-env")
    assert cfg.target("e").connection_params().password == "from-env"
    with pytest.raises(ConfigError, match="cannot read password_file"):
        cfg.target("m").connection_params()


def test_both_password_sources_rejected() -> None:
    with pytest.raises(ConfigError, match="password_env or password_file, not both"):
        parse_config("targets:\n  - {name: a, kind: mysql, dsn: 'mysql://u@h/', "
                     "password_env: X, password_file: /x}\n")


def test_load_config_uses_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(GOOD)
    monkeypatch.setenv("DBGAUGE_CONFIG", str(path))
    assert [t.name for t in load_config().targets] == ["db1", "pg1"]
    monkeypatch.delenv("DBGAUGE_CONFIG")
    with pytest.raises(ConfigError, match="pass --config FILE or set DBGAUGE_CONFIG"):
        load_config()
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "missing.yaml")


@pytest.mark.parametrize(("raw", "seconds"),
                         [(5, 5.0), (2.5, 2.5), ("500ms", 0.5), ("10s", 10.0), ("1m", 60.0)])
def test_durations(raw: object, seconds: float) -> None:
    assert parse_duration(raw) == seconds


def test_all_errors_are_listed_one_per_line() -> None:
    text = "targets:\n  - name: a\n    kind: mysql\n    dns: mysql://u@h/\n    labels: {x-y: z}\n"
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg.yaml")
    lines = str(info.value).splitlines()
    assert lines[0].startswith("cfg.yaml:4: targets[0].dns: unknown key")
    assert "cfg.yaml:2: targets[0].dsn: required key is missing" in lines
    assert any(ln.startswith("cfg.yaml:5: targets[0].labels: 'x-y' is not a valid") for ln in lines)


def test_shipped_example_config_is_valid() -> None:
    example = Path(__file__).resolve().parents[2] / "deploy" / "dbgauge.example.yaml"
    cfg = load_config(example)
    assert {t.kind for t in cfg.targets} == {"mysql", "postgres", "pgbouncer"}


# ------------------------------------------------------------- files and absurd values

HEAD = "targets:\n  - name: a\n    kind: mysql\n    dsn: mysql://u@h/\n"


@pytest.mark.parametrize(("line", "where", "says"), [
    ("    query_timeout: 1.0e+300\n", "targets[0].query_timeout", "at most 1 day"),
    ("    query_timeout: 99999999999s\n", "targets[0].query_timeout", "at most 1 day"),
    ("    lock_timeout: " + "9" * 60 + "s\n", "targets[0].lock_timeout", "not a duration"),
    ("    connect_timeout: " + "9" * 5000 + "\n", "targets[0].connect_timeout",
     "not plausible"),
    ("    connect_timeout: .inf\n", "targets[0].connect_timeout", "not a duration"),
    ("    heartbeat: {mode: read, source_server_id: 99999999999999}\n",
     "targets[0].heartbeat.source_server_id", "less than or equal"),
])
def test_absurd_values_are_refused_at_load_naming_line_and_path(
        tmp_path: Path, line: str, where: str, says: str) -> None:
    """Values that would pass and then break every scrape (a 1e300 s timeout, a
    5,000-digit number) are config errors at load time, with file:line and YAML path."""
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + line)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:5: {where}: "), info.value
    assert says in str(info.value)


def test_intervals_may_be_long_but_not_absurd() -> None:
    ok = parse_config(HEAD + "checks:\n  - {check: replication, interval: 168h}\n")
    assert ok.checks[0].interval == 7 * 86400
    with pytest.raises(ConfigError, match=r"checks\[0\].interval: .*at most 31 days"):
        parse_config(HEAD + "checks:\n  - {check: replication, interval: 10000h}\n")
    with pytest.raises(ConfigError, match=r"daemon.scrape_timeout: .*at most 1 day"):
        parse_config("daemon: {scrape_timeout: 25h}\n" + HEAD)


def test_config_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(HEAD.encode() + "    labels: {site: Zürich}\n".encode("latin-1"))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:5: not UTF-8"), info.value


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "dir", "huge"])
def test_config_must_be_a_regular_file_of_sane_size(tmp_path: Path, special: str) -> None:
    path = Path(special) if special.startswith("/") else tmp_path / special
    if special == "fifo":
        os.mkfifo(path)  # no writer: reading must not wait for one
    elif special == "dir":
        path.mkdir()
    elif special == "huge":
        path.write_text(HEAD + "#" * (2 << 20) + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    expected = "larger than 1024 KiB" if special == "huge" else "not a regular file"
    assert str(info.value).startswith(f"{path}: cannot read config") or special == "huge"
    assert expected.lower() in str(info.value).lower(), info.value


def test_config_check_exits_2_without_traceback_on_bad_bytes_and_values(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from dbgauge.cli import cli

    bad = tmp_path / "bad.yaml"
    for text in (HEAD.encode() + b"    labels: {x: \xff}\n",
                 (HEAD + "    query_timeout: 1.0e+300\n").encode(),
                 (HEAD + "    query_timeout: " + "1" * 5000 + "\n").encode()):
        bad.write_bytes(text)
        result = CliRunner().invoke(cli, ["config", "check", str(bad)])
        assert result.exit_code == 2, result.output
        assert f"{bad}:5: " in result.output and "Traceback" not in result.output


def _laughs(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs": `levels` lists of `width` aliases of the level below, some
    500 bytes that stand for width**levels values."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]"
              for i in range(1, levels)]
    return "\n".join(lines) + f"\n{HEAD}    labels: {{x: y}}\n" + f"extra: *l{levels - 1}\n"


def test_yaml_alias_bomb_is_refused_by_its_expansion_not_walked() -> None:
    """9 levels x 9 aliases (387 million values in 500 bytes) is refused by counting what
    the aliases expand to, each node measured once: the error names the bound, and the
    refusal does not depend on how fast the machine walks 387 million values."""
    text = _laughs()
    assert len(text) < 600
    with pytest.raises(ConfigError, match=r"expands to more than 200,000 values .*alias bomb"):
        parse_config(text)
    # a huge number behind the aliases is the same refusal, not a walk of every copy
    with pytest.raises(ConfigError, match="alias bomb"):
        parse_config(_laughs().replace('"lol"', "9" * 5000).replace("lol", "9" * 5000))


def test_yaml_aliases_in_reasonable_use_still_load() -> None:
    config = parse_config("targets:\n"
                          "  - &a {name: a, kind: mysql, dsn: 'mysql://u@a/', query_timeout: 2s}\n"
                          "  - {<<: *a, name: b, dsn: 'mysql://u@b/'}\n")
    assert [t.name for t in config.targets] == ["a", "b"]
    assert config.targets[1].query_timeout == 2


def test_yaml_alias_that_contains_itself_is_refused() -> None:
    with pytest.raises(ConfigError, match="alias refers to a value that contains it"):
        parse_config("a: &a [1, *a]\n" + HEAD)


def test_checks_entries_take_thresholds_with_units() -> None:
    """`warning: 10s` and `critical: "1 minute"` under `checks:` are the CLI's ranges,
    read by the same parser; a unit the check cannot take names the entry."""
    ok = parse_config(HEAD + "checks:\n  - {check: lag, warning: 10s, critical: '1 minute'}\n"
                      "  - {check: last-vacuum, warning: 1d, critical: 2d}\n"
                      "  - {check: connections, warning: 80%, critical: 95%}\n")
    assert [(c.warning, c.critical) for c in ok.checks] == [
        ("10s", "1 minute"), ("1d", "2d"), ("80%", "95%")]
    with pytest.raises(ConfigError, match=r"checks\[0\].*not a size"):
        parse_config(HEAD + "checks:\n  - {check: lag, warning: 10GB}\n")
