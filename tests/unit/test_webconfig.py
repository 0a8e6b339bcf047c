"""The exporter-toolkit web-config: parsing, error locations and basic-auth checks."""

from __future__ import annotations

import base64
from pathlib import Path

import bcrypt
import pytest

from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.exporter import webconfig
from dbgauge.toolkit.exporter.webconfig import WebConfig, load_web_config, parse_basic

# Cost 4 keeps the tests fast; the format is the same as operators' cost-10/12 hashes.
HASH = bcrypt.hashpw(b"s3cret-pass", bcrypt.gensalt(4)).decode()


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "web.yml"
    path.write_text(text)
    return path


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_no_file_and_empty_file_mean_plain_http_without_auth(tmp_path: Path) -> None:
    for cfg in (load_web_config(None), load_web_config(_write(tmp_path, "# nothing\n"))):
        assert cfg.tls is None and cfg.users == {} and cfg.scheme == "http"
        assert cfg.ssl_context() is None
        assert cfg.check(None)


def test_basic_auth_users_accept_the_right_password_only(tmp_path: Path) -> None:
    cfg = load_web_config(_write(tmp_path, f"basic_auth_users:\n  prometheus: '{HASH}'\n"))
    assert cfg.check(_basic("prometheus", "s3cret-pass"))
    assert cfg.check(_basic("prometheus", "s3cret-pass"))  # served from the cache
    assert not cfg.check(_basic("prometheus", "wrong"))
    assert not cfg.check(_basic("nobody", "s3cret-pass"))
    assert not cfg.check(None)
    assert not cfg.check("Bearer abc")
    assert not cfg.check("Basic !!!notbase64")
    assert not cfg.check("Basic " + base64.b64encode(b"no-colon").decode())
    assert not cfg.check(_basic("prometheus", "x" * 100))  # over bcrypt's 72 bytes


def test_htpasswd_2y_hashes_are_accepted(tmp_path: Path) -> None:
    """`htpasswd -nB` writes $2y$; exporter-toolkit accepts it, so must dbgauge."""
    hashed = "$2y$" + HASH[4:]
    cfg = load_web_config(_write(tmp_path, f"basic_auth_users:\n  p: '{hashed}'\n"))
    assert cfg.check(_basic("p", "s3cret-pass"))
    assert not cfg.check(_basic("p", "s3cret-pasS"))


def test_unknown_users_cost_as_much_bcrypt_as_the_configured_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown user's password is checked against a real bcrypt hash of the highest
    cost among the configured users' (a cheaper one told user names apart by timing)."""
    cheap = bcrypt.hashpw(b"other", bcrypt.gensalt(4)).decode()
    costly = bcrypt.hashpw(b"s3cret-pass", bcrypt.gensalt(6)).decode()
    cfg = load_web_config(_write(tmp_path, f"basic_auth_users:\n  a: '{cheap}'\n"
                                           f"  prometheus: '{costly}'\n"))
    checked: list[bytes] = []
    real = bcrypt.checkpw

    def spy(password: bytes, hashed: bytes) -> bool:
        checked.append(hashed)
        return real(password, hashed)

    monkeypatch.setattr(bcrypt, "checkpw", spy)
    assert not cfg.check(_basic("nobody", "s3cret-pass"))
    assert not cfg.check(_basic("prometheus", "wrong"))
    assert [webconfig.bcrypt_cost(h) for h in checked] == [6, 6]
    assert checked[0] not in (cheap.encode(), costly.encode())
    assert real(b"s3cret-pass", checked[0]) is False  # a real hash of something unknown


def test_cache_holds_no_password() -> None:
    cfg = WebConfig(users={"u": HASH.encode()})
    assert cfg.check(_basic("u", "s3cret-pass"))
    assert all(b"s3cret-pass" not in key for key in cfg._cache._entries)


@pytest.mark.parametrize(("text", "where"), [
    ("basic_auth_users:\n  alice: hunter2\n", "web.yml:2: basic_auth_users.alice"),
    ("tls_server_config:\n  cert_file: a.crt\n", "web.yml:1: tls_server_config.key_file"),
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n",
     "web.yml:4: tls_server_config.min_version"),
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: "
     "RequireAnyClientCert\n", "web.yml:4: tls_server_config.client_auth_type"),
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [X]\n",
     "web.yml:4: tls_server_config.cipher_suites"),
    ("http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
     "web.yml:2: http_server_config.headers"),
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: ca\n",
     "web.yml:1: tls_server_config"),
    ("basic_auth_user:\n  a: b\n", "web.yml:1: basic_auth_user"),
    ("rate_limit: {burst: 5}\n", "web.yml:1: rate_limit"),
    ("- a\n", "web.yml: a web config must be a mapping"),
    ("tls_server_config: [\n", "web.yml:2: invalid YAML"),
])
def test_errors_name_file_line_and_yaml_path(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_web_config(_write(tmp_path, text))
    assert str(err.value).startswith(str(tmp_path / where)), str(err.value)
    from dbgauge.cli.base import error_exit

    assert error_exit(err.value) == 2


def test_a_pasted_password_is_never_echoed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_web_config(_write(tmp_path, "basic_auth_users:\n  alice: Pl41nT3xt-pw\n"))
    assert "Pl41nT3xt-pw" not in str(err.value)
    assert "bcrypt" in str(err.value)


def test_missing_certificate_names_the_key_and_relative_paths_follow_the_file(
        tmp_path: Path) -> None:
    sub = tmp_path / "conf"
    sub.mkdir()
    path = sub / "web.yml"
    path.write_text("tls_server_config:\n  cert_file: tls/server.crt\n  key_file: server.key\n")
    with pytest.raises(ConfigError) as err:
        load_web_config(path)
    message = str(err.value)
    assert "tls_server_config.cert_file" in message
    assert str(sub / "tls" / "server.crt") in message  # resolved next to web.yml


def test_unreadable_web_config_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read web config"):
        load_web_config(tmp_path / "missing.yml")


@pytest.mark.parametrize(("header", "expected"), [
    (_basic("u", "p:with:colons"), ("u", b"p:with:colons")),
    ("basic " + base64.b64encode(b"u:").decode(), ("u", b"")),
    ("Digest abc", None),
    ("", None),
])
def test_parse_basic(header: str, expected: tuple[str, bytes] | None) -> None:
    assert parse_basic(header) == expected


def test_allowed_sans_match_any_subject_alt_name() -> None:
    tls = webconfig.TLSServerConfig(cert_file=Path("c"), key_file=Path("k"),
                                    client_auth_type="RequireAndVerifyClientCert",
                                    client_ca_file=Path("ca"),
                                    client_allowed_sans=["prometheus.example"])
    cfg = WebConfig(tls=tls)
    assert cfg.allowed_peer({"subjectAltName": (("DNS", "prometheus.example"),)})
    assert not cfg.allowed_peer({"subjectAltName": (("DNS", "other.example"),)})
    assert not cfg.allowed_peer(None)
    assert WebConfig().allowed_peer(None)
