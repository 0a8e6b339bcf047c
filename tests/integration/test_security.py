"""Endpoint security: TLS, basic auth and mTLS from a web-config file, against the sandbox.

Certificates come from the `openssl` CLI (a CA, two server certificates for 127.0.0.1 and a
client certificate); hashes from bcrypt. Every test greps the daemon's log and the HTTP
answers for the secrets it handled.
"""

from __future__ import annotations

import base64
import http.client
import os
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import bcrypt
import pytest
import yaml

from tests.helpers import DBGAUGE, REPO, free_port, parse_metrics, value, wait_for
from tests.helpers.daemon import Daemon
from tests.helpers.servers import Sandbox

pytestmark = pytest.mark.integration

PASSWORD = "Sc4rpe-S3cret-pw!"  # the basic-auth password Prometheus would send
WRONG = "n0t-the-Pa55word"


@dataclass(frozen=True)
class Pki:
    directory: Path
    ca: Path
    server_cert: Path
    server_key: Path
    other_cert: Path  # a second server certificate, for rotation
    other_key: Path
    client_cert: Path
    client_key: Path
    stranger_cert: Path  # signed by a CA the daemon does not trust
    stranger_key: Path


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def _issue(directory: Path, name: str, ca: tuple[Path, Path], san: str) -> tuple[Path, Path]:
    key, csr, cert = (directory / f"{name}.{ext}" for ext in ("key", "csr", "crt"))
    ext = directory / f"{name}.ext"
    ext.write_text(f"subjectAltName={san}\n")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(csr),
             "-subj", f"/CN={name}")
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]),
             "-CAcreateserial", "-days", "2", "-out", str(cert), "-extfile", str(ext))
    return cert, key


def _ca(directory: Path, name: str) -> tuple[Path, Path]:
    cert, key = directory / f"{name}.crt", directory / f"{name}.key"
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
             str(cert), "-days", "2", "-subj", f"/CN={name}")
    return cert, key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    d = tmp_path_factory.mktemp("pki")
    ca = _ca(d, "test-ca")
    server = _issue(d, "server", ca, "IP:127.0.0.1")
    other = _issue(d, "server2", ca, "IP:127.0.0.1")
    client = _issue(d, "prometheus", ca, "DNS:prometheus.test")
    stranger = _issue(d, "stranger", _ca(d, "other-ca"), "DNS:prometheus.test")
    return Pki(d, ca[0], *server, *other, *client, *stranger)


class TLSDaemon(Daemon):
    """`dbgauge serve` with a web config; readiness is read from its log (TLS may need a
    client certificate this helper does not have)."""

    def __init__(self, config: Path, log: Path, web: Path | None = None) -> None:
        self.port = free_port()
        self.log = log
        self._log_file = log.open("wb")
        args = [*DBGAUGE, "serve", "--config", str(config), "--listen",
                f"127.0.0.1:{self.port}"]
        if web is not None:
            args += ["--web.config.file", str(web)]
        self.proc = subprocess.Popen(args, stdout=self._log_file, stderr=subprocess.STDOUT,
                                     cwd=REPO)

        def started() -> bool:
            assert self.proc.poll() is None, self.log_text()
            return "listening on" in self.log_text()

        wait_for(started, timeout=15, what="the daemon to start")


def _context(pki: Pki, client: tuple[Path, Path] | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki.ca))
    if client is not None:
        ctx.load_cert_chain(str(client[0]), str(client[1]))
    return ctx


def _get(port: int, path: str, ctx: ssl.SSLContext | None, auth: tuple[str, str] | None = None,
         ) -> tuple[int, dict[str, str], str]:
    conn: http.client.HTTPConnection
    if ctx is None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    else:
        conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=20, context=ctx)
    headers = {"X-Prometheus-Scrape-Timeout-Seconds": "8"}
    if auth is not None:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    try:
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode()
    finally:
        conn.close()


def _web_config(path: Path, pki: Pki, *, users: bool = True, mtls: bool = False,
                cert: tuple[Path, Path] | None = None) -> Path:
    cert_file, key_file = cert or (pki.server_cert, pki.server_key)
    tls: dict[str, object] = {"cert_file": str(cert_file), "key_file": str(key_file)}
    if mtls:
        tls |= {"client_auth_type": "RequireAndVerifyClientCert",
                "client_ca_file": str(pki.ca), "client_allowed_sans": ["prometheus.test"]}
    doc: dict[str, object] = {
        "tls_server_config": tls,
        "http_server_config": {"headers": {"X-Content-Type-Options": "nosniff"}},
    }
    if users:
        doc["basic_auth_users"] = {
            "prometheus": bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(10)).decode()}
    path.write_text(yaml.safe_dump(doc))
    return path


def _sandbox_config(sandbox: Sandbox, path: Path, **daemon: object) -> Path:
    data = yaml.safe_load(sandbox.config.read_text())
    data["daemon"] = {**data.get("daemon", {}), "log_format": "json", "log_level": "debug",
                      **daemon}
    path.write_text(yaml.safe_dump(data))
    return path


def _secrets(sandbox: Sandbox, web: Path, pki: Pki) -> list[str]:
    hashes = list(yaml.safe_load(web.read_text()).get("basic_auth_users", {}).values())
    key_body = "".join(pki.server_key.read_text().splitlines()[1:3])
    return [PASSWORD, sandbox.state.dbgauge_password, *hashes, key_body,
            base64.b64encode(f"prometheus:{PASSWORD}".encode()).decode()]


@pytest.fixture()
def tls_daemon(sandbox: Sandbox, pki: Pki, tmp_path: Path) -> Iterator[tuple[TLSDaemon, Path]]:
    web = _web_config(tmp_path / "web.yml", pki)
    d = TLSDaemon(_sandbox_config(sandbox, tmp_path / "c.yaml"), tmp_path / "log", web)
    yield d, web
    d.stop()


def test_tls_and_basic_auth_401_then_200_and_no_secret_leaks(
        sandbox: Sandbox, pki: Pki, tls_daemon: tuple[TLSDaemon, Path]) -> None:
    d, web = tls_daemon
    ctx = _context(pki)
    bodies: list[str] = []
    for auth in (None, ("prometheus", WRONG), ("nobody", PASSWORD), ("prometheus", "")):
        for path in ("/metrics", "/probe?target=pg-primary", "/", "/status.json"):
            status, headers, body = _get(d.port, path, ctx, auth)
            assert status == 401, (auth, path, status)
            assert headers["www-authenticate"].startswith("Basic"), headers
            assert "dbgauge_up" not in body and "pg-primary" not in body
            bodies.append(body)
    status, headers, body = _get(d.port, "/metrics", ctx, ("prometheus", PASSWORD))
    assert status == 200, body
    assert headers["x-content-type-options"] == "nosniff"  # http_server_config.headers
    m = parse_metrics(body)
    for target in ("mariadb-primary", "mariadb-replica", "pg-primary", "pg-standby", "pgbouncer"):
        assert value(m, "dbgauge_up", target=target) == 1.0, d.log_text()
    bodies.append(body)
    # the status page and its JSON are behind the same TLS and basic auth
    for path in ("/", "/status.json"):
        status, _headers, body = _get(d.port, path, ctx, ("prometheus", PASSWORD))
        assert status == 200, body
        assert 'data-node="pg-primary"' in body or '"name": "pg-primary"' in body, body
        bodies.append(body)
    # /healthz needs no credentials (liveness probes), and says nothing else
    assert _get(d.port, "/healthz", ctx)[::2] == (200, "ok\n")
    # plain HTTP on the TLS port gets no metrics
    with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
        _get(d.port, "/metrics", None, ("prometheus", PASSWORD))
    # the daemon keeps serving after all of that
    assert _get(d.port, "/metrics", ctx, ("prometheus", PASSWORD))[0] == 200
    assert d.stop() == 0
    log = d.log_text()
    assert "listening on https://" in log and "basic auth on" in log
    assert "refused: missing or wrong basic-auth credentials" in log
    for secret in _secrets(sandbox, web, pki):
        assert secret not in log
        assert all(secret not in b for b in bodies)


def test_untrusted_client_cannot_even_handshake_with_mtls(
        sandbox: Sandbox, pki: Pki, tmp_path: Path) -> None:
    web = _web_config(tmp_path / "web.yml", pki, users=False, mtls=True)
    d = TLSDaemon(_sandbox_config(sandbox, tmp_path / "c.yaml"), tmp_path / "log", web)
    try:
        ok = _context(pki, (pki.client_cert, pki.client_key))
        assert _get(d.port, "/probe?target=pgbouncer", ok)[0] == 200
        for ctx in (_context(pki), _context(pki, (pki.stranger_cert, pki.stranger_key))):
            with pytest.raises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
                _get(d.port, "/metrics", ctx)
        assert _get(d.port, "/healthz", ok)[0] == 200
    finally:
        assert d.stop() == 0


def _server_cert_der(port: int, pki: Pki) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            _context(pki).wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


def test_rotated_certificate_is_served_without_restart(
        sandbox: Sandbox, pki: Pki, tmp_path: Path) -> None:
    live_cert, live_key = tmp_path / "live.crt", tmp_path / "live.key"
    live_cert.write_bytes(pki.server_cert.read_bytes())
    live_key.write_bytes(pki.server_key.read_bytes())
    web = _web_config(tmp_path / "web.yml", pki, users=False, cert=(live_cert, live_key))
    d = TLSDaemon(_sandbox_config(sandbox, tmp_path / "c.yaml"), tmp_path / "log", web)
    try:
        first = _server_cert_der(d.port, pki)
        assert first == ssl.PEM_cert_to_DER_cert(pki.server_cert.read_text())
        # cert-manager style: new files moved into place
        for src, dst in ((pki.other_key, live_key), (pki.other_cert, live_cert)):
            tmp = dst.with_suffix(".new")
            tmp.write_bytes(src.read_bytes())
            os.utime(tmp, (time.time() + 5, time.time() + 5))
            tmp.replace(dst)
        second = _server_cert_der(d.port, pki)
        assert second == ssl.PEM_cert_to_DER_cert(pki.other_cert.read_text())
        assert "TLS certificate files changed: reloaded" in d.log_text()
    finally:
        assert d.stop() == 0


def test_sighup_with_a_broken_web_config_keeps_the_old_one(
        sandbox: Sandbox, pki: Pki, tls_daemon: tuple[TLSDaemon, Path]) -> None:
    d, web = tls_daemon
    ctx = _context(pki)
    good = web.read_text()
    web.write_text(good + "basic_auth_users:\n  prometheus: hunter2\n")  # duplicate + plain
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while "reload failed" not in d.log_text():
        assert time.monotonic() < deadline, d.log_text()
        time.sleep(0.1)
    assert "web.yml" in d.log_text()
    assert _get(d.port, "/metrics", ctx, ("prometheus", "hunter2"))[0] == 401
    assert _get(d.port, "/probe?target=pg-primary", ctx, ("prometheus", PASSWORD))[0] == 200
    assert "hunter2" not in d.log_text()


def test_web_config_from_the_config_key(sandbox: Sandbox, pki: Pki, tmp_path: Path) -> None:
    web = _web_config(tmp_path / "web.yml", pki)
    d = TLSDaemon(_sandbox_config(sandbox, tmp_path / "c.yaml", web_config_file=str(web)),
                  tmp_path / "log")
    try:
        assert _get(d.port, "/metrics", _context(pki))[0] == 401
        status, _, body = _get(d.port, "/probe?target=pg-primary", _context(pki),
                               ("prometheus", PASSWORD))
        assert status == 200 and 'dbgauge_up{' in body
    finally:
        assert d.stop() == 0


@pytest.mark.parametrize(("text", "where"), [
    ("basic_auth_users:\n  prometheus: hunter2\n", "web.yml:2: basic_auth_users.prometheus"),
    ("tls_server_config:\n  cert_file: nope.crt\n  key_file: nope.key\n",
     "web.yml: tls_server_config.cert_file: cannot read"),
    ("tls_server_config:\n  cert_file: {crt}\n  key_file: {crt}\n",
     "web.yml: tls_server_config.cert_file: cannot load the certificate and key"),
])
def test_bad_web_config_exits_2_naming_file_line_and_path(
        sandbox: Sandbox, pki: Pki, tmp_path: Path, text: str, where: str) -> None:
    web = tmp_path / "web.yml"
    web.write_text(text.format(crt=pki.server_cert))  # cert as key: unloadable
    proc = subprocess.run([*DBGAUGE, "serve", "--config", str(sandbox.config), "--listen",
                           f"127.0.0.1:{free_port()}", "--web.config.file", str(web)],
                          capture_output=True, text=True, timeout=30, cwd=REPO, check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"dbgauge: error: {tmp_path / where}" in proc.stderr
    assert "Traceback" not in proc.stderr and "hunter2" not in proc.stderr
