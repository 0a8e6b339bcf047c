"""The peers' `/probe?target=ADDRESS&auth_module=NAME` without servers: which credentials
a probe of an address gets (toolkit/peers/probe.py), what the peers answer 400 to, and the
bounded set of transient targets (toolkit/exporter/transient.py; never scraped here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbgauge import app
from dbgauge.toolkit.config import TargetConfig
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.exporter import transient
from dbgauge.toolkit.exporter.transient import TransientTargets
from dbgauge.toolkit.exporter.wiring import with_peers
from dbgauge.toolkit.peers.env import PeerFlags, read_startup
from dbgauge.toolkit.peers.probe import ProbeRefused, ProbeSource

SECRET = "pr0be-s3cret"
MY_CNF = f"""\
[client]
user = exporter
password = {SECRET}
[client.servers]
user = bar
ssl-ca = /etc/ssl/ca.pem
[client.nouser]
host = ignored
"""
AUTH = f"""\
auth_modules:
  first:
    type: userpass
    userpass: {{username: first, password: {SECRET}}}
    options: {{sslmode: disable, connect_timeout: 7}}
  nopass:
    type: userpass
    userpass: {{username: only}}
"""


def source(tmp_path: Path, my_cnf: str | None = MY_CNF, auth: str | None = None,
           env: dict[str, str] | None = None) -> ProbeSource:
    flags = PeerFlags()
    if my_cnf is not None:
        (tmp_path / "my.cnf").write_text(my_cnf)
        flags = PeerFlags(my_cnf=str(tmp_path / "my.cnf"))
    if auth is not None:
        (tmp_path / "pe.yml").write_text(auth)
        flags = PeerFlags(my_cnf=flags.my_cnf, auth_file=str(tmp_path / "pe.yml"))
    wiring = with_peers(app.wiring(), app.parse_config, read_startup(flags, env or {}))
    found = wiring.probe()
    assert found is not None
    return found


def made(src: ProbeSource, target: str, auth_module: str | None) -> TargetConfig:
    return src.target_config("t", src.entry(target, auth_module))


def params(src: ProbeSource, target: str, auth_module: str | None) -> tuple[object, ...]:
    got = made(src, target, auth_module)
    p = got.target().connection_params()
    return got.kind, p.host, p.port, p.user, p.password


def test_mysql_probe_takes_the_auth_modules_section(tmp_path: Path) -> None:
    src = source(tmp_path)
    assert params(src, "127.0.0.1:3307", None) == ("mysql", "127.0.0.1", 3307, "exporter",
                                                    SECRET)
    # [client.servers] by its name, or by what follows client.; it inherits the password
    for module in ("client.servers", "servers", "Client.Servers"):
        assert params(src, "db2:3306", module) == ("mysql", "db2", 3306, "bar", SECRET)
    got = made(src, "unix:///run/mysqld/mysqld.sock", "servers")
    assert got.target().connection_params().host == "/run/mysqld/mysqld.sock"
    assert got.target().connection_params().option("ssl_ca") == "/etc/ssl/ca.pem"
    assert got.compat == ["mysqld_exporter"]
    # a section that names no user takes [client]'s (and the target's address, not its host)
    assert params(src, "db3:3306", "nouser") == ("mysql", "db3", 3306, "exporter", SECRET)


@pytest.mark.parametrize(("target", "module", "says"), [
    ("db:3306", "nosuch", "Could not find config section [nosuch]"),
    ("db:3306", "mysqld", "Could not find config section [mysqld]"),
    ("db", None, "target 'db': not host:port"),
    ("db:" + "9" * 5000, None, "not host:port"),
    ("unix://x.sock", None, "absolute socket path"),
])
def test_mysql_probes_the_peer_answers_400_to(tmp_path: Path, target: str, module: str | None,
                                              says: str) -> None:
    with pytest.raises(ProbeRefused) as caught:
        made(source(tmp_path), target, module)
    assert says in str(caught.value) and SECRET not in str(caught.value)
    assert len(str(caught.value)) < 300


def test_postgres_probe_takes_the_auth_module(tmp_path: Path) -> None:
    src = source(tmp_path, None, AUTH)
    got = made(src, "db1:5433/app", "first")
    p = got.target().connection_params()
    assert (got.kind, p.host, p.port, p.user, p.password, p.dbname, p.option("sslmode"),
            p.option("connect_timeout")) == \
        ("postgres", "db1", 5433, "first", SECRET, "app", "disable", "7")
    # without auth_module: the target as given (a URI or key=value carries its own)
    for target in ("postgresql://u@db2/app", "host=db2 user=u dbname=app"):
        p = made(src, target, None).target().connection_params()
        assert (p.host, p.user, p.dbname) == ("db2", "u", "app")
    assert got.compat == ["postgres_exporter"]


@pytest.mark.parametrize(("target", "module", "says"), [
    ("db1:5432/app", "nosuch", "auth_module nosuch not found"),
    ("db1:5432/app", "nopass", "auth_module nopass has no username or password"),
    ("db1:" + "9" * 5000 + "/app", "first", "could not configure dsn for target"),
    ("host=db1 bogus=1", None, "could not configure dsn for target"),
])
def test_postgres_probes_the_peer_answers_400_to(tmp_path: Path, target: str, module: str,
                                                 says: str) -> None:
    with pytest.raises(ProbeRefused) as caught:
        made(source(tmp_path, None, AUTH), target, module)
    assert says in str(caught.value) and SECRET not in str(caught.value)
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize(("text", "says"), [
    ("auth_modules:\n  foo:\n    pretendauth: {username: test}\n", "foo.pretendauth: unknown key"),
    ("auth_modules:\n  foo:\n    type: cert\n", "foo.type"),
    ("auth_modules:\n  foo:\n    type: userpass\n    options: {nonsense: '1'}\n",
     "nonsense: not a libpq connection keyword"),
    ("- a\n", "the top level must be a mapping"),
])
def test_a_bad_postgres_exporter_config_is_refused_at_start(tmp_path: Path, text: str,
                                                            says: str) -> None:
    """postgres_exporter decodes it with known fields only; dbgauge refuses it at start
    (and keeps the previous one on SIGHUP), naming the file and line."""
    with pytest.raises(ConfigError) as caught:
        source(tmp_path, None, text)
    assert says in str(caught.value) and str(tmp_path / "pe.yml") in str(caught.value)


def test_both_peers_probe_by_the_address_form_or_the_module(tmp_path: Path) -> None:
    src = source(tmp_path, MY_CNF, AUTH)
    assert made(src, "db:5432/app", None).kind == "postgres"
    assert made(src, "unix:///tmp/m.sock", None).kind == "mysql"
    assert made(src, "db:3306", "servers").kind == "mysql"
    assert made(src, "db:5432", "first").kind == "postgres"
    with pytest.raises(ProbeRefused, match="may be MySQL or PostgreSQL"):
        made(src, "db:3306", None)


def test_transient_targets_are_kept_bounded_and_reused(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe of the same address and module reuses its target (and connection); past
    the cap the least recently probed is dropped (its connection closed when its Scraper's
    last scrape ends)."""
    monkeypatch.setattr(transient, "MAX_TRANSIENT", 2)
    src = source(tmp_path)
    config = app.parse_config("targets: [{name: x, kind: mysql, dsn: 'mysql://u:p@h:1/'}]")
    targets = TransientTargets(src, config, app.registry())
    first, a = targets.checkout("10.0.0.1:3306", None)
    first.release()
    again, a2 = targets.checkout("10.0.0.1:3306", None)
    again.release()
    assert a == a2 == "10.0.0.1:3306" and again is first  # nothing new: same Scraper
    _, b = targets.checkout("10.0.0.1:3306", "servers")  # another module: another target
    _.release()
    assert b == "10.0.0.1:3306-2"
    third, c = targets.checkout("10.0.0.2:3306", None)
    assert len(targets) == 2 and set(third.runners) == {b, c}  # a, the oldest, dropped
    assert third.runners[b] is not None
    third.release()
    with pytest.raises(ProbeRefused):
        targets.checkout("10.0.0.3:3306", "nosuch")
    assert len(targets) == 2
    targets.close()


def test_a_transient_target_is_named_by_its_address_never_its_credentials(
        tmp_path: Path) -> None:
    """The name is the `target` label of the probe's series: the server's address, not
    the DSN a probe may carry with a password in it."""
    src = source(tmp_path, MY_CNF, AUTH)
    config = app.parse_config("targets: [{name: x, kind: mysql, dsn: 'mysql://u:p@h:1/'}]")
    targets = TransientTargets(src, config, app.registry())
    scraper, name = targets.checkout(f"postgresql://u:{SECRET}@10.0.0.9:5432/app", None)
    scraper.release()
    assert name == "10.0.0.9:5432"
    assert SECRET not in repr(scraper.runners[name].cfg.labels)
    targets.close()
