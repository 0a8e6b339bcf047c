"""The dialect plumbing: `compat:` in the config and on the command line, which targets speak
which peer's names, and how the peer's series are rendered (the peers' own names are tested
per dialect, against the peers themselves, in tests/integration/test_compat_*.py)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dbgauge.app import parse_config, registry
from dbgauge.cli import cli
from dbgauge.toolkit.db import ServerInfo
from dbgauge.toolkit.dialect import Dialect, PeerFamilies, PeerSpec
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.exporter.scrape import SampleOut, TargetResult
from dbgauge.toolkit.metrics import Sample
from dbgauge.toolkit.render.prometheus import encode

CONFIG = """
daemon: {compat: [mysqld_exporter, postgres_exporter]}
targets:
  - {name: db1, kind: mysql, dsn: "mysql://u@h1/"}
  - {name: db2, kind: mysql, dsn: "mysql://u@h2/", compat: []}
  - {name: pg, kind: postgres, dsn: "postgresql://u@h3/app", labels: {env: prod}}
  - {name: pool, kind: pgbouncer, dsn: "postgresql://u@h4/pgbouncer",
     compat: [pgbouncer_exporter]}
"""


def test_daemon_compat_applies_to_targets_of_its_kind_and_a_target_list_wins() -> None:
    config = parse_config(CONFIG)
    reg = registry()
    spoken = {t.name: [d.name for d in reg.dialects_for(t)] for t in config.all_targets()}
    assert spoken == {"db1": ["mysqld_exporter"], "db2": [], "pg": ["postgres_exporter"],
                      "pool": ["pgbouncer_exporter"]}
    override = config.with_compat(["pgbouncer_exporter"])
    spoken = {t.name: [d.name for d in reg.dialects_for(t)] for t in override.all_targets()}
    assert spoken == {"db1": [], "db2": [], "pg": [], "pool": ["pgbouncer_exporter"]}


@pytest.mark.parametrize(("yaml_text", "message"), [
    ("daemon: {compat: [mysqld]}\ntargets: [{name: a, kind: mysql, dsn: 'mysql://u@h/'}]",
     "unknown exporter 'mysqld'; dbgauge speaks mysqld_exporter, pgbouncer_exporter, "
     "postgres_exporter"),
    ("targets: [{name: a, kind: mysql, dsn: 'mysql://u@h/', compat: [postgres_exporter]}]",
     "postgres_exporter speaks for kind postgres targets, not mysql"),
])
def test_a_wrong_compat_name_is_a_config_error(yaml_text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(yaml_text)


def test_a_dialects_default_collectors_join_the_kinds_defaults_only() -> None:
    from dataclasses import replace

    from dbgauge.toolkit.registry import Registry

    reg = registry()
    opt_in = type(reg["mysql_tables"])
    quiet = type("QuietTables", (opt_in,), {"name": "quiet_tables", "default_enabled": False})
    demo = Dialect("demo", "mysql", "", PeerSpec("demo_up", "gauge", ""), PeerFamilies(),
                   collectors=("quiet_tables",))
    with_demo = Registry([*reg.all, quiet()], [*reg.dialects.values(), demo])
    config = parse_config("targets: [{name: a, kind: mysql, dsn: 'mysql://u@h/'},"
                          "{name: b, kind: mysql, dsn: 'mysql://u@h/',"
                          " collectors: [mysql_status]}]")
    a, b = config.all_targets()
    defaults = {c.name for c in with_demo.for_target(a)}
    assert "quiet_tables" not in defaults
    speaking = replace(a, compat=("demo",))
    assert {c.name for c in with_demo.for_target(speaking)} == defaults | {"quiet_tables"}
    # a target's own collectors: list is what it runs, dialect or not
    assert [c.name for c in with_demo.for_target(replace(b, compat=("demo",)))] == [
        "mysql_status"]


def _speaking(name: str, up: bool, value: float, extra: tuple[tuple[str, str], ...] = ()
              ) -> TargetResult:
    spec = PeerSpec("mysql_global_status_questions", "untyped", "Generic metric.")
    peer = (SampleOut(spec.name, extra, value, spec),) if up else ()
    return TargetResult(name, "mysql", tuple(sorted((("target", name), *extra))), up, 0.01,
                        ServerInfo("mariadb", (10, 11, 6), "10.11.6-MariaDB") if up else None,
                        None if up else "down", peer_samples=peer,
                        peer_up=(PeerSpec("mysql_up", "gauge", "Whether the MySQL server "
                                          "is up."),))


def test_one_target_speaks_with_the_peers_labels_only() -> None:
    text = encode([_speaking("db1", True, 42, (("env", "prod"),))])[0].decode()
    assert 'mysql_up{env="prod"} 1.0' in text
    assert "# TYPE mysql_global_status_questions untyped" in text
    assert 'mysql_global_status_questions{env="prod"} 42.0' in text
    assert 'dbgauge_up{env="prod",target="db1"} 1.0' in text  # dbgauge's own keep target


def test_several_targets_on_one_scrape_are_told_apart_by_target() -> None:
    text = encode([_speaking("db1", True, 1), _speaking("db2", False, 0)])[0].decode()
    assert 'mysql_up{target="db1"} 1.0' in text
    assert 'mysql_up{target="db2"} 0.0' in text  # a down target's peer up is 0, not absent
    assert 'mysql_global_status_questions{target="db1"} 1.0' in text
    assert text.count("# TYPE mysql_up gauge") == 1


def test_targets_of_different_dialects_on_one_scrape_keep_the_peers_labels() -> None:
    pg = TargetResult("pg", "postgres", (("target", "pg"),), True, 0.01,
                      ServerInfo("postgresql", (16, 4), "16.4"), None,
                      peer_up=(PeerSpec("pg_up", "gauge", "up"),))
    text = encode([_speaking("db1", True, 1), pg])[0].decode()
    assert "mysql_up 1.0" in text
    assert "pg_up 1.0" in text
    assert "mysql_global_status_questions 1.0" in text


def test_openmetrics_keeps_a_peer_counter_without_total_by_its_name() -> None:
    spec = PeerSpec("pg_stat_database_xact_commit", "counter", "Transactions committed.",
                    ("datname",))
    result = TargetResult("pg", "postgres", (("target", "pg"),), True, 0.01,
                          ServerInfo("postgresql", (16, 4), "16.4"), None,
                          peer_samples=(SampleOut(spec.name, (("datname", "app"),), 7, spec),),
                          peer_up=(PeerSpec("pg_up", "gauge", "up"),))
    text = encode([result], "application/openmetrics-text; version=1.0.0")[0].decode()
    assert "# TYPE pg_stat_database_xact_commit unknown" in text
    assert 'pg_stat_database_xact_commit{datname="app"} 7.0' in text
    text = encode([result])[0].decode()
    assert "# TYPE pg_stat_database_xact_commit counter" in text


def test_a_dialect_refuses_a_sample_of_an_undeclared_family_or_label_set() -> None:
    dialect = registry().dialects["mysqld_exporter"]
    with pytest.raises(ValueError, match="undeclared pg_up"):
        dialect.validate_sample(Sample("pg_up", 1, {}, PeerSpec("pg_up", "gauge", "")))
    with pytest.raises(ValueError, match="undeclared mysql_global_status_"):
        dialect.validate_sample(Sample("mysql_global_status_", 1))
    with pytest.raises(ValueError, match="declared"):
        dialect.validate_sample(Sample("mysql_up", 1, {"a": "b"}))
    sample = dialect.families.sample("mysql_global_status_uptime", 5)
    assert dialect.validate_sample(sample).type == "untyped"


def test_compat_on_the_command_line_is_checked_and_takes_a_comma_list() -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["collect", "--compat", "mysqld_exporter,bogus", "x"])
    assert result.exit_code == 2
    assert "unknown exporter 'bogus'" in result.output
    result = runner.invoke(cli, ["serve", "--help"])
    assert "--compat EXPORTER" in result.output


def test_compat_only_runs_the_peers_default_collectors_unless_the_target_lists_its_own() -> None:
    config = parse_config(CONFIG).with_compat(None, only=True)
    reg = registry()
    db1, db2, _pg, _pool = config.all_targets()
    assert db1.compat_only and "mysqld_exporter" in db1.compat
    assert [c.name for c in reg.for_target(db1)] == sorted(
        reg.dialects["mysqld_exporter"].collectors)
    assert [c.name for c in reg.for_target(db2)] == [  # speaks no dialect: its defaults
        c.name for c in reg.for_kind("mysql") if c.default_enabled]
    listed = parse_config(CONFIG.replace(
        '{name: pg, kind: postgres, dsn: "postgresql://u@h3/app", labels: {env: prod}}',
        '{name: pg, kind: postgres, dsn: "postgresql://u@h3/app", '
        'collectors: [postgres_server]}')).with_compat(None, only=True)
    assert [c.name for c in reg.for_target(listed.target("pg"))] == ["postgres_server"]


def test_compat_only_makes_only_the_peers_samples_of_what_a_dialect_translates() -> None:
    """A translated collector's facts become the peer's samples only; a part the role
    could not read is still reported (the collector fails, what stands is kept)."""
    from dataclasses import replace

    from dbgauge.collectors.mysql_global_status import GlobalStatusFacts
    from dbgauge.collectors.mysql_innodb import InnodbFacts
    from dbgauge.toolkit.exporter.scrape import TargetRunner

    reg = registry()
    target = replace(parse_config(CONFIG).target("db1"), compat_only=True)
    runner = TargetRunner(target, [], reg.dialects_for(target))

    def canned(name: str, facts: object) -> object:
        base = type(reg[name])
        return type("Canned", (base,), {"read": lambda self, conn: facts})()

    own: list[SampleOut] = []
    peer: list[SampleOut] = []
    status = canned("mysql_global_status", GlobalStatusFacts({"Questions": 5.0,
                                                              "Com_select": 2.0}))
    run = runner._run(status, None, own, peer)  # type: ignore[arg-type]
    assert run.success and not own
    assert {s.name for s in peer} >= {"mysql_global_status_questions",
                                      "mysql_global_status_commands_total"}
    peer.clear()
    innodb = canned("mysql_innodb", InnodbFacts({"Innodb_buffer_pool_pages_total": 8.0},
                                                metrics_error="INNODB_METRICS: no PROCESS"))
    run = runner._run(innodb, None, own, peer)  # type: ignore[arg-type]
    assert not run.success and run.error == "INNODB_METRICS: no PROCESS"
    assert not own
    # the same collector in dbgauge's names when compat_only is off
    speaking = TargetRunner(parse_config(CONFIG).target("db1"), [],
                            reg.dialects_for(target))
    run = speaking._run(status, None, own, peer)  # type: ignore[arg-type]
    assert run.success and {s.name for s in own} >= {"dbgauge_mysql_global_status_questions_total"}


def test_compat_only_without_any_dialect_says_what_to_add() -> None:
    config = parse_config("targets: [{name: a, kind: mysql, dsn: 'mysql://u@h/'}]")
    with pytest.raises(ConfigError, match="add --compat NAME"):
        config.with_compat(None, only=True)
    assert config.with_compat(["mysqld_exporter"], only=True).all_targets()[0].compat_only
    result = CliRunner().invoke(cli, ["collect", "--compat-only", "--config", "/dev/null", "a"])
    assert result.exit_code != 0
