"""The peers' start-up spellings (toolkit/peers): environment variables and flags to
targets, read as postgres_exporter and mysqld_exporter read them, and hostile values
refused in one clear line without the password. No server: targets are made, never
contacted."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from dbgauge import app
from dbgauge.cli import cli
from dbgauge.toolkit.config import Config
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.exporter.wiring import Wiring, with_peers
from dbgauge.toolkit.peers import env as peer_env
from dbgauge.toolkit.peers.collectors import PEERS, Switches, parse_switches, switch_table
from dbgauge.toolkit.peers.env import PeerFlags, read_startup
from dbgauge.toolkit.peers.targets import MAX_SECRET_BYTES

SECRET = "s3cr3t-P@ss:w/rd"


def wiring(flags: PeerFlags | None = None, env: Mapping[str, str] | None = None,
           compat: bool = True) -> Wiring:
    startup = read_startup(flags or PeerFlags(), env or {})
    return with_peers(app.wiring(), app.parse_config, startup, compat=compat)


def load(flags: PeerFlags | None = None, env: Mapping[str, str] | None = None,
         config: str | None = None, compat: bool = True) -> Config:
    return wiring(flags, env, compat).load_config(config)


def refused(flags: PeerFlags | None = None, env: Mapping[str, str] | None = None,
            config: str | None = None) -> str:
    """The one-line message a bad spelling is refused with (never the password)."""
    with pytest.raises(ConfigError) as caught:
        load(flags, env, config)
    message = str(caught.value)
    assert SECRET not in message and "\n" not in message and len(message) < 400, message
    return message


def switched(*args: str) -> Mapping[str, Switches]:
    """What a command line's collector switches `args` switched, by peer."""
    return parse_switches(args)


def error(call: Callable[..., object], *args: object) -> str:
    """The ConfigError `call(*args)` raises, as text."""
    with pytest.raises(ConfigError) as caught:
        call(*args)
    return str(caught.value)


# ------------------------------------------------------------------ postgres_exporter


def test_data_source_name_is_one_target_per_dsn_in_its_order() -> None:
    uri = f"postgresql://exporter:{SECRET.replace('@', '%40').replace('/', '%2F')}@db1:5433/app"
    config = load(env={"DATA_SOURCE_NAME": f"{uri},host=db2 user=exporter dbname=app,"
                                           "postgres://db3/postgres?sslmode=disable"})
    targets = config.all_targets()
    assert [(t.name, t.kind, t.dsn) for t in targets] == [
        ("postgres", "postgres", uri),
        ("postgres-2", "postgres", "host=db2 user=exporter dbname=app"),
        ("postgres-3", "postgres", "postgres://db3/postgres?sslmode=disable")]
    params = targets[0].connection_params()
    assert (params.user, params.password, params.host, params.port) == \
        ("exporter", SECRET, "db1", 5433)
    assert all(t.compat == ("postgres_exporter",) for t in targets)


def test_data_source_uri_takes_user_and_password_as_postgres_exporter_joins_them() -> None:
    target = load(env={"DATA_SOURCE_URI": "db1:5432/app?sslmode=disable",
                       "DATA_SOURCE_USER": "exp orter", "DATA_SOURCE_PASS": SECRET}
                  ).target("postgres")
    params = target.connection_params()
    assert (params.user, params.password, params.host, params.dbname) == \
        ("exp orter", SECRET, "db1", "app")
    assert params.option("sslmode") == "disable"


def test_the_file_forms_win_over_the_variables_and_are_trimmed(tmp_path: Path) -> None:
    (tmp_path / "uri").write_text("  db9:6432/app\n")
    (tmp_path / "user").write_text("from-file\n")
    (tmp_path / "pass").write_text(f"{SECRET}\n")
    target = load(env={"DATA_SOURCE_URI": "db1/app", "DATA_SOURCE_URI_FILE": str(tmp_path / "uri"),
                       "DATA_SOURCE_USER": "from-var",
                       "DATA_SOURCE_USER_FILE": str(tmp_path / "user"),
                       "DATA_SOURCE_PASS": "wrong",
                       "DATA_SOURCE_PASS_FILE": str(tmp_path / "pass")}).target("postgres")
    params = target.connection_params()
    assert (params.host, params.port, params.user, params.password) == \
        ("db9", 6432, "from-file", SECRET)


def test_the_password_file_is_read_again_on_every_load(tmp_path: Path) -> None:
    """SIGHUP re-reads DATA_SOURCE_PASS_FILE: the daemon's loader is this one."""
    secret = tmp_path / "pass"
    secret.write_text("first-password")
    w = wiring(env={"DATA_SOURCE_URI": "db1/app", "DATA_SOURCE_USER": "u",
                    "DATA_SOURCE_PASS_FILE": str(secret)})
    assert w.load_config(None).target("postgres").connection_params().password == \
        "first-password"
    secret.write_text("rotated-password")
    assert w.load_config(None).target("postgres").connection_params().password == \
        "rotated-password"


@pytest.mark.parametrize(("env", "says"), [
    ({"DATA_SOURCE_NAME": "postgresql://u@h/db", "DATA_SOURCE_URI": "h/db"},
     "both DATA_SOURCE_NAME and DATA_SOURCE_URI are set"),
    ({"DATA_SOURCE_NAME": "postgresql://u@h/db", "DATA_SOURCE_PASS": SECRET},
     "DATA_SOURCE_PASS is set without DATA_SOURCE_URI"),
    ({"DATA_SOURCE_USER": "u"}, "DATA_SOURCE_USER is set without DATA_SOURCE_URI"),
    ({"DATA_SOURCE_NAME": "postgresql://u@h/a,,postgresql://u@h/b"},
     "DATA_SOURCE_NAME: DSN 2 of 3 is empty"),
    ({"DATA_SOURCE_NAME": "db1:5432/app"}, "DATA_SOURCE_NAME (DSN 1 of 1): DSN 'db1:5432/app' "
                                           "has no scheme"),
    ({"DATA_SOURCE_NAME": "mysql://u:pw@h/"}, "is not a PostgreSQL DSN"),
    ({"DATA_SOURCE_NAME": f"host=h password={SECRET} port=" + "9" * 5000},
     "is not a TCP port"),
    ({"DATA_SOURCE_NAME": f"postgresql://u:{quote(SECRET, safe='')}@h:" + "9" * 5000 + "/db"},
     "is not a TCP port"),
    ({"DATA_SOURCE_NAME": f"postgresql://u:{SECRET}@h:5432/db"},  # libpq: host 'ss:w/rd@h'
     "holds an unencoded @, /, ? or #: percent-encode them"),
    ({"DATA_SOURCE_URI": "h:" + "9" * 5000 + "/db", "DATA_SOURCE_PASS": SECRET},
     "DATA_SOURCE_URI: port '99999999999999999999' is not a TCP port"),
    ({"DATA_SOURCE_URI": "postgresql://h/db"}, "without a scheme"),
    ({"DATA_SOURCE_URI": "u@h/db"}, "names a user (user@host): set DATA_SOURCE_USER"),
    ({"DATA_SOURCE_URI": "/db"}, "DATA_SOURCE_URI names no host"),
    ({"DATA_SOURCE_URI": "h/db", "PG_EXPORTER_AUTO_DISCOVER_DATABASES": "maybe"},
     "PG_EXPORTER_AUTO_DISCOVER_DATABASES='maybe': true or false"),
])
def test_bad_postgres_exporter_settings_are_one_clear_line(env: dict[str, str],
                                                           says: str) -> None:
    assert says in refused(env=env)


@pytest.mark.parametrize(("content", "says"), [
    (None, "cannot read DATA_SOURCE_PASS_FILE: No such file or directory"),
    ("/dev/zero", "cannot read DATA_SOURCE_PASS_FILE: not a regular file (a device)"),
    (b"\xff\xfe" + SECRET.encode() + b"\x80", "not UTF-8 text (byte 0xff)"),
    (b"x" * (MAX_SECRET_BYTES + 1), "DATA_SOURCE_PASS_FILE is larger than 64 KiB"),
    ("dir", "not a regular file (a directory)"),
])
def test_a_hostile_password_file_is_refused_bounded(tmp_path: Path, content: str | bytes | None,
                                                    says: str) -> None:
    """The file is opened without blocking and read up to a cap (toolkit/files.py): a
    device or a huge file costs nothing, and no byte of it is shown."""
    path = tmp_path / "pass"
    if content == "/dev/zero":
        path = Path("/dev/zero")
    elif content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    message = refused(env={"DATA_SOURCE_URI": "h/db", "DATA_SOURCE_PASS_FILE": str(path)})
    assert says in message and str(path) in message


def test_extend_query_path_and_the_flag_variables(tmp_path: Path) -> None:
    queries = tmp_path / "queries.yaml"
    queries.write_text("pg_one:\n  query: SELECT 1 AS value\n  metrics:\n"
                       "    - value: {usage: GAUGE, description: one}\n")
    env = {"DATA_SOURCE_URI": "h/db", "PG_EXPORTER_EXTEND_QUERY_PATH": "/nonexistent.yaml",
           "PG_EXPORTER_WEB_TELEMETRY_PATH": "/pg"}
    startup = read_startup(PeerFlags(query_path=str(queries)), env)
    assert startup.telemetry_path == "/pg"  # the variable, as no flag says otherwise
    target = load(PeerFlags(query_path=str(queries)), env).target("postgres")
    assert target.collector_options["postgres_queries"] == {"file": str(queries)}
    assert read_startup(PeerFlags(telemetry_path="/x"), env).telemetry_path == "/x"
    assert "/nonexistent.yaml" in refused(env=env)  # the variable, checked at load


def test_flag_variables_need_a_postgres_exporter_spelling() -> None:
    """PG_EXPORTER_* left in an environment do nothing without DATA_SOURCE_*; the flags
    themselves say what they lack."""
    env = {"PG_EXPORTER_WEB_TELEMETRY_PATH": "/pg", "PG_EXPORTER_EXTEND_QUERY_PATH": "/q"}
    assert read_startup(PeerFlags(), env) == peer_env.PeerStartup()
    message = error(read_startup, PeerFlags(query_path="/q.yaml"), {})
    assert "--extend.query-path applies to the postgres targets DATA_SOURCE_NAME" in message


def test_auto_discover_databases_reads_every_database_per_table() -> None:
    """--auto-discover-databases (or its variable) makes the per-table collectors read every
    connectable database of the server, as postgres_exporter's discovery does."""
    flags = PeerFlags(auto_discover=True)
    env = {"DATA_SOURCE_NAME": "postgresql://u@h/db"}
    assert not any("--auto-discover-databases" in n for n in wiring(flags, env).notes)
    target = load(flags, env).target("postgres")
    assert target.collector_options["postgres_tables"] == {"databases": "all"}
    by_variable = load(env={**env, "PG_EXPORTER_AUTO_DISCOVER_DATABASES": "true"})
    assert by_variable.target("postgres").collector_options["postgres_tables"] == {
        "databases": "all"}
    assert "postgres_tables" not in load(env=env).target("postgres").collector_options


# ------------------------------------------------------------------ mysqld_exporter


def test_mysqld_flags_and_password_variable_make_the_mysql_target() -> None:
    config = load(PeerFlags(mysqld_address="db1:3307", mysqld_username="exporter"),
                  {"MYSQLD_EXPORTER_PASSWORD": SECRET})
    target = config.target("mysql")
    params = target.connection_params()
    assert (target.kind, params.user, params.password, params.host, params.port) == \
        ("mysql", "exporter", SECRET, "db1", 3307)
    assert target.compat == ("mysqld_exporter",)


@pytest.mark.parametrize(("address", "host", "port"), [
    ("unix:///run/mysqld/mysqld.sock", "/run/mysqld/mysqld.sock", 3306),
    ("[::1]:3310", "::1", 3310),
    (":3311", "127.0.0.1", 3311),
])
def test_mysqld_address_forms(address: str, host: str, port: int) -> None:
    params = load(PeerFlags(mysqld_address=address, mysqld_username="u"),
                  {"MYSQLD_EXPORTER_PASSWORD": SECRET}).target("mysql").connection_params()
    assert (params.host, params.port) == (host, port)


@pytest.mark.parametrize("address", ["db1", "db1:" + "9" * 5000, "db1:0", "::1:3306",
                                     "unix://relative.sock", "u@db1:3306"])
def test_a_bad_mysqld_address_is_one_clear_line(address: str) -> None:
    message = refused(PeerFlags(mysqld_address=address, mysqld_username="u"),
                      {"MYSQLD_EXPORTER_PASSWORD": SECRET})
    assert message.startswith("--mysqld.address ")
    assert "not host:port" in message or "absolute socket path" in message


def test_the_my_cnf_wins_over_the_flags_which_fill_what_it_leaves_out(tmp_path: Path) -> None:
    """As mysqld_exporter: the file's [client] keys stand; --mysqld.address gives the host
    and port it lacks, --mysqld.username the user, MYSQLD_EXPORTER_PASSWORD the password."""
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nhost = db-from-file\nuser = file-user\n")
    params = load(PeerFlags(my_cnf=str(cnf), mysqld_address="db-flag:3399",
                            mysqld_username="flag-user"),
                  {"MYSQLD_EXPORTER_PASSWORD": SECRET}).target("mysql").connection_params()
    assert (params.host, params.port, params.user, params.password) == \
        ("db-from-file", 3399, "file-user", SECRET)


def test_a_my_cnf_for_probe_only_makes_no_target_but_a_daemon(tmp_path: Path) -> None:
    """[client] without a user but [client.servers] with one: mysqld_exporter serves
    /probe?auth_module=client.servers only, and so does dbgauge (no `mysql` target)."""
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\npassword = shared-pw\n[client.servers]\nuser = bar\n")
    w = wiring(PeerFlags(my_cnf=str(cnf)))
    assert w.load_config(None).targets == []
    source = w.probe()
    assert source is not None and source.mysql is not None
    assert dict(source.mysql["client.servers"]) == {
        "user": "bar", "password": "shared-pw", "host": "localhost", "port": "3306"}


def test_my_cnf_without_any_user_is_refused(tmp_path: Path) -> None:
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[mysqld]\nuser = mysql\n[client]\npassword = x\n")
    assert "no user: set user= under [client] or --mysqld.username" in \
        refused(PeerFlags(my_cnf=str(cnf)))


@pytest.mark.parametrize(("dsn", "host", "port", "user", "password"), [
    (f"prometheus:{SECRET}@(db1:3307)/", "db1", 3307, "prometheus", SECRET),
    ("prometheus@unix(/run/mysqld/mysqld.sock)/", "/run/mysqld/mysqld.sock", 3306,
     "prometheus", None),
    ("u:p@tcp([::1]:3310)/dbname", "::1", 3310, "u", "p"),
    ("u:p@/", "127.0.0.1", 3306, "u", "p"),
])
def test_mysqld_exporter_014s_data_source_name(tmp_path: Path, dsn: str, host: str, port: int,
                                               user: str, password: str | None) -> None:
    """Up to 0.14 (Debian's), mysqld_exporter read one Go MySQL DSN from DATA_SOURCE_NAME,
    winning over the my.cnf; a libpq DSN never has that shape."""
    cnf = tmp_path / "my.cnf"
    cnf.write_text("[client]\nuser = from-cnf\nhost = cnf-host\n")
    config = load(PeerFlags(my_cnf=str(cnf)), {"DATA_SOURCE_NAME": dsn})
    assert [t.name for t in config.targets] == ["mysql"]
    params = config.target("mysql").connection_params()
    assert (params.host, params.port, params.user, params.password) == \
        (host, port, user, password)


@pytest.mark.parametrize(("dsn", "says"), [
    ("u:p@foo(db1:1)/", "not a MySQL DSN mysqld_exporter 0.14 reads"),
    ("u:p@(db1:" + "9" * 5000 + ")/", "DATA_SOURCE_NAME's address"),
    ("u:p@(db1:3306)/?tls=true", "does not read a Go MySQL DSN's parameters (?tls=...)"),
    (":p@(db1:3306)/", "DATA_SOURCE_NAME: no user: user:password@(host:port)/"),
])
def test_a_bad_go_mysql_dsn_is_one_clear_line(dsn: str, says: str) -> None:
    assert says in refused(env={"DATA_SOURCE_NAME": dsn.replace("p@", f"{SECRET}@", 1)})


def test_mysqld_exporter_password_alone_makes_nothing() -> None:
    assert read_startup(PeerFlags(), {"MYSQLD_EXPORTER_PASSWORD": SECRET}).mysql is None


# ------------------------------------------------------------------ collector switches


def defaults(kind: str) -> list[str]:
    return [c.name for c in app.registry().for_kind(kind) if c.default_enabled]


def test_every_mapped_collector_is_a_dbgauge_collector_of_the_peers_kind() -> None:
    registry = app.registry()
    for table in PEERS:
        for peer_name, ours in table.collectors.items():
            for name in ours:
                assert name in registry and registry[name].kind == table.kind, (peer_name, name)
        for flag, (collector, option) in table.mapped.items():  # a switch sets 1 (or 0)
            registry[collector].check_options({option: 1 if flag in table.switches else 10})


def test_the_documented_table_is_the_one_in_use() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "compat.md").read_text("utf-8")
    block = doc.split("<!-- peer-switches:", 1)[1].split("\n", 1)[1]
    assert block.split("\n<!-- /peer-switches -->", 1)[0] == switch_table()


def test_no_collect_drops_a_collector_only_when_all_its_sources_are_off() -> None:
    flags = PeerFlags(mysqld_address="db1:3306", mysqld_username="u",
                      switches=switched("--no-collect.global_status"))
    running = load(flags).target("mysql").collectors
    assert running is not None
    assert "mysql_global_status" not in running and "mysql_status" not in running
    assert "mysql_innodb" in running  # engine_innodb_status and innodb_metrics give it too
    flags = PeerFlags(mysqld_address="db1:3306", mysqld_username="u", switches=switched(
        "--no-collect.global_status", "--no-collect.info_schema.innodb_metrics",
        "--no-collect.engine_innodb_status"))
    assert "mysql_innodb" not in (load(flags).target("mysql").collectors or ())


def test_collector_switches_of_postgres_exporter() -> None:
    env = {"DATA_SOURCE_NAME": "postgresql://u@h/db"}
    target = load(PeerFlags(switches=switched("--no-collector.settings",
                                              "--collector.stat_statements",
                                              "--collector.stat_statements.limit=20")), env
                  ).target("postgres")
    assert target.collectors == tuple(n for n in defaults("postgres") if n != "postgres_settings")
    assert target.collector_options["postgres_statements"] == {"limit": 20}
    assert load(PeerFlags(switches=switched("--collector.database")), env
                ).target("postgres").collectors is None


def test_switch_forms_as_kingpin_reads_them() -> None:
    switches = parse_switches(["--collect.binlog_size", "--no-collect.binlog_size",
                               "--collect.heartbeat=true", "--collect.slave_hosts=false",
                               "--collect.heartbeat.table", "beats",
                               "--collect.heartbeat.database=percona"])["mysqld_exporter"]
    assert dict(switches.states) == {"binlog_size": False, "heartbeat": True,
                                     "slave_hosts": False}
    assert switches.heartbeat() == {"mode": "read", "table": "percona.beats"}


@pytest.mark.parametrize(("args", "says"), [
    (["--collect.binlog_siz"], "mysqld_exporter has no such collector or option (did you "
                               "mean --collect.binlog_size?)"),
    (["--collector.nope"], "postgres_exporter has no such collector"),
    (["--collect.binlog_size=maybe"], "a switch is true or false"),
    (["--no-collect.heartbeat.table=x"], "takes no --no- form"),
    (["--collect.heartbeat.table"], "needs a value"),
    ([f"--password={SECRET}"], "no such option: '--password=***'"),
    (["--lissten", ":9000"], "no such option: '--lissten'"),
])
def test_bad_switches_are_refused(args: list[str], says: str) -> None:
    message = error(parse_switches, args)
    assert says in message and SECRET not in message


def test_switches_without_an_equivalent_warn_and_keep_the_unit_file_working() -> None:
    w = wiring(PeerFlags(mysqld_address="db1:3306", mysqld_username="u", switches=switched(
        "--collect.engine_tokudb_status", "--no-collect.info_schema.rocksdb_perf_context",
        "--collect.info_schema.processlist.min_time=5", "--collect.heartbeat")))
    notes = "\n".join(w.notes)
    assert "--collect.engine_tokudb_status: dbgauge has no equivalent" in notes
    assert "rocksdb" not in notes  # switched off, and dbgauge does not collect it either
    assert "--collect.info_schema.processlist.min_time changes nothing" in notes
    assert "run pt-heartbeat with --utc" in notes
    target = w.load_config(None).target("mysql")
    assert target.heartbeat is not None and target.heartbeat.table == "heartbeat.heartbeat"
    assert target.collectors is None


def test_the_peers_opt_in_collectors_turn_on_dbgauges() -> None:
    """mysqld_exporter's --collect.perf_schema.* and --collect.auto_increment.columns are
    off by default there as their dbgauge collectors are here: switched on, they run."""
    flags = PeerFlags(mysqld_address="db1:3306", mysqld_username="u", switches=switched(
        "--collect.perf_schema.eventswaits", "--collect.auto_increment.columns",
        "--collect.engine_innodb_status", "--no-collect.perf_schema.tablelocks"))
    w = wiring(flags)
    running = w.load_config(None).target("mysql").collectors
    assert running is not None
    assert running[:len(defaults("mysql"))] == tuple(defaults("mysql"))
    assert running[len(defaults("mysql")):] == ("mysql_perf_schema_waits",
                                                "mysql_auto_increment",
                                                "mysql_engine_innodb_status")
    assert not w.notes
    on = load(PeerFlags(switches=switched("--collector.stat_progress_vacuum")),
              {"DATA_SOURCE_NAME": "postgresql://u@h/db"}).target("postgres").collectors
    assert on is None or "postgres_vacuum_progress" in on


def test_postgres_exporters_opt_in_collectors_turn_on_dbgauges() -> None:
    """Upstream's long_running_transactions, stat_activity_autovacuum, process_idle,
    buffercache_summary, stat_wal_receiver and statio_user_indexes are off by default
    there, as their dbgauge collectors are here: switched on, they run, without a
    warning that the data is not there."""
    flags = PeerFlags(switches=switched(
        "--collector.long_running_transactions", "--collector.process_idle",
        "--collector.buffercache_summary", "--collector.stat_wal_receiver",
        "--collector.statio_user_indexes"))
    w = wiring(flags, {"DATA_SOURCE_NAME": "postgresql://u@h/db"})
    running = w.load_config(None).target("postgres").collectors
    assert running is not None
    assert running[:len(defaults("postgres"))] == tuple(defaults("postgres"))
    assert running[len(defaults("postgres")):] == ("postgres_activity", "postgres_buffercache",
                                                   "postgres_wal_receiver", "postgres_indexes")
    assert not w.notes
    off = load(PeerFlags(switches=switched("--collector.stat_activity_autovacuum",
                                           "--no-collector.stat_activity_autovacuum")),
               {"DATA_SOURCE_NAME": "postgresql://u@h/db"}).target("postgres").collectors
    assert off is None or "postgres_activity" not in off

def test_the_user_statistics_switches_turn_on_one_collector() -> None:
    """MariaDB's four userstat scrapers are one dbgauge collector, turned on once."""
    w = wiring(PeerFlags(mysqld_address="db1:3306", mysqld_username="u", switches=switched(
        "--collect.info_schema.userstats", "--collect.info_schema.clientstats",
        "--collect.info_schema.tablestats", "--collect.info_schema.schemastats")))
    running = w.load_config(None).target("mysql").collectors
    assert running is not None
    assert running[len(defaults("mysql")):] == ("mysql_user_statistics",)
    assert not w.notes


def test_switches_need_their_peers_target() -> None:
    message = error(read_startup, PeerFlags(switches=switched("--collect.binlog_size")), {})
    assert "--collect.* applies to the mysql target --config.my-cnf or --mysqld.address" \
        in message


# ------------------------------------------------------------------ both, and the CLI


def test_serve_compat_replaces_the_peer_dialect() -> None:
    config = load(PeerFlags(mysqld_address="db1:3306", mysqld_username="u"), compat=False)
    assert config.target("mysql").compat == ()


def test_peer_targets_join_the_config_and_a_clash_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("targets:\n  - {name: db, kind: mysql, dsn: 'mysql://u:x@127.0.0.1:1/'}\n")
    env = {"DATA_SOURCE_NAME": "postgresql://u@h/db"}
    assert [t.name for t in load(env=env, config=str(path)).targets] == ["db", "postgres"]
    path.write_text("targets:\n  - {name: postgres, kind: postgres, dsn: 'postgresql://u@h/'}\n")
    assert "make a target named 'postgres'" in refused(env=env, config=str(path))


@pytest.mark.parametrize(("flags", "says"), [
    (PeerFlags(telemetry_path="/probe"), "dbgauge serves /probe, /healthz, /status.json"),
    (PeerFlags(telemetry_path="metrics"), "a URL path starting with /"),
    (PeerFlags(telemetry_path="/a b"), "without spaces"),
    (PeerFlags(log_level="verbose"), "--log.level 'verbose': one of debug, info, warn, error"),
    (PeerFlags(log_format="xml"), "--log.format 'xml': one of logfmt, json"),
])
def test_bad_general_flags(flags: PeerFlags, says: str) -> None:
    assert says in error(read_startup, flags, {})


def test_log_flags_override_the_daemon_section() -> None:
    config = load(PeerFlags(mysqld_address="db1:3306", mysqld_username="u", log_level="warn",
                            log_format="logfmt"))
    assert (config.daemon.log_level, config.daemon.log_format) == ("warning", "text")


@pytest.mark.parametrize(("env", "args", "says"), [
    ({"DATA_SOURCE_NAME": "a", "DATA_SOURCE_URI": "b"}, [], "both DATA_SOURCE_NAME"),
    ({"DATA_SOURCE_URI": "h/db", "DATA_SOURCE_PASS_FILE": "/nonexistent/pass"}, [],
     "/nonexistent/pass: cannot read DATA_SOURCE_PASS_FILE"),
    ({}, ["--mysqld.address", "db1:" + "9" * 5000, "--mysqld.username", "u"],
     "--mysqld.address"),
    ({"DATA_SOURCE_URI": "h/db"}, ["--extend.query-path", "/nonexistent/q.yaml"],
     "/nonexistent/q.yaml"),
])
def test_serve_refuses_bad_spellings_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                 env: dict[str, str], args: list[str],
                                                 says: str) -> None:
    for name in list(os.environ):
        if name.startswith(("DATA_SOURCE_", "PG_EXPORTER_", "MYSQLD_EXPORTER_")):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(cli, ["serve", "--listen", "127.0.0.1:1", *args])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("dbgauge: error: ") and says in result.output, result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output


@pytest.mark.parametrize(("args", "says"), [
    (["--collect.nope"], "--collect.nope: mysqld_exporter has no such collector"),
    (["--no-such-flag"], "no such option: '--no-such-flag'"),
])
def test_serve_refuses_unknown_flags_as_click_refuses_options(args: list[str],
                                                              says: str) -> None:
    """Parsed with the command line (before anything starts), so a usage error as for any
    unknown option: exit 2, click's usage hint, no traceback."""
    result = CliRunner().invoke(cli, ["serve", "--listen", "127.0.0.1:1", *args])
    assert result.exit_code == 2 and f"Error: {says}" in result.output, result.output
    assert "Traceback" not in result.output
