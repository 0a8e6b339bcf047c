"""TLS and basic auth for the daemon, configured like every Prometheus exporter.

The file format is the Prometheus exporter-toolkit web-config (`--web.config.file`), so an
operator reuses the file, certificates and bcrypt hashes already deployed for
node_exporter or mysqld_exporter:

    tls_server_config:
      cert_file: server.crt          # relative paths are relative to this file
      key_file: server.key
      client_auth_type: RequireAndVerifyClientCert   # optional mTLS
      client_ca_file: clients-ca.crt
      min_version: TLS12
    http_server_config:
      headers: {Strict-Transport-Security: max-age=31536000}
    basic_auth_users:
      prometheus: $2b$12$...         # bcrypt only: `htpasswd -nBC 12 prometheus`

What Python's ssl module cannot express is refused with a clear error rather than
silently ignored (a security setting that does nothing is worse than none):
`RequestClientCert`/`RequireAnyClientCert` (Python verifies every client certificate it
asks for), `cipher_suites`, `curve_preferences`, `rate_limit` and inline `cert`/`key`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import re
import ssl
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from dbgauge.toolkit.config import parse_yaml_model, read_config_file
from dbgauge.toolkit.errors import ConfigError

log = logging.getLogger("dbgauge.web")

ClientAuth = Literal["NoClientCert", "RequestClientCert", "RequireAnyClientCert",
                     "VerifyClientCertIfGiven", "RequireAndVerifyClientCert"]
TLSVersionName = Literal["TLS10", "TLS11", "TLS12", "TLS13"]
_TLS_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1,
                 "TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
# The exporter-toolkit's list: only these headers, some only with these values.
_HEADERS: dict[str, tuple[str, ...]] = {
    "Strict-Transport-Security": (),
    "X-Content-Type-Options": ("nosniff",),
    "X-Frame-Options": ("deny", "sameorigin"),
    "X-XSS-Protection": (),
    "Content-Security-Policy": (),
}
_BCRYPT = re.compile(r"^\$2[aby]?\$\d\d\$[./A-Za-z0-9]{53}$")
_CACHE_SIZE = 256
BCRYPT_RUNNING = 1  # uncached credential checks at once
BCRYPT_WAITING = 3  # more waiting for their turn; beyond, 429 at once
_UNSUPPORTED = "is not supported by dbgauge"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _refuse(name: str, why: str) -> Any:
    def check(value: Any) -> Any:
        if value not in (None, [], ""):
            raise ValueError(f"{name} {_UNSUPPORTED}: {why}")
        return value
    return check


class TLSServerConfig(_Model):
    cert_file: Path
    key_file: Path
    client_auth_type: ClientAuth = "NoClientCert"
    client_ca_file: Path | None = None
    client_allowed_sans: list[str] | None = None
    min_version: TLSVersionName = "TLS12"
    max_version: TLSVersionName = "TLS13"
    prefer_server_cipher_suites: bool = True
    cipher_suites: list[str] | None = None
    curve_preferences: list[str] | None = None
    cert: str | None = None
    key: str | None = None
    client_ca: str | None = None

    check_ciphers = field_validator("cipher_suites")(_refuse(
        "cipher_suites", "OpenSSL's defaults apply; raise min_version to TLS13 to narrow them"))
    check_curves = field_validator("curve_preferences")(_refuse(
        "curve_preferences", "OpenSSL's defaults apply"))
    check_inline = field_validator("cert", "key", "client_ca")(_refuse(
        "inline certificates/keys", "use cert_file, key_file and client_ca_file"))

    @field_validator("client_auth_type")
    @classmethod
    def _auth_type(cls, value: str) -> str:
        if value in ("RequestClientCert", "RequireAnyClientCert"):
            raise ValueError(
                f"{value} {_UNSUPPORTED}: Python verifies every client certificate it asks "
                "for; use VerifyClientCertIfGiven or RequireAndVerifyClientCert with "
                "client_ca_file")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> TLSServerConfig:
        verifying = self.client_auth_type != "NoClientCert"
        if self.client_ca_file is not None and not verifying:
            raise ValueError("client_ca_file is set but client_auth_type is NoClientCert: "
                             "set client_auth_type: RequireAndVerifyClientCert")
        if verifying and self.client_ca_file is None:
            raise ValueError(f"client_auth_type {self.client_auth_type} needs client_ca_file")
        if self.client_allowed_sans is not None \
                and self.client_auth_type != "RequireAndVerifyClientCert":
            raise ValueError("client_allowed_sans needs client_auth_type: "
                             "RequireAndVerifyClientCert")
        if _TLS_VERSIONS[self.min_version] > _TLS_VERSIONS[self.max_version]:
            raise ValueError("min_version is above max_version")
        return self


class HTTPServerConfig(_Model):
    http2: bool = True  # accepted for compatibility; dbgauge serves HTTP/1.1
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, content in value.items():
            if name not in _HEADERS:
                raise ValueError(f"HTTP header {name!r} can not be configured; allowed: "
                                 f"{', '.join(_HEADERS)}")
            allowed = _HEADERS[name]
            if allowed and content not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}")
        return value


def _bcrypt_hash(value: str) -> str:
    if not _BCRYPT.match(value):
        # Never echo the value: it may be a password pasted by mistake.
        raise ValueError("must be a bcrypt hash ($2y$/$2b$...), e.g. from "
                         "`htpasswd -nBC 12 USER`, not a password")
    return value


BcryptHash = Annotated[str, AfterValidator(_bcrypt_hash)]


class WebConfigModel(_Model):
    tls_server_config: TLSServerConfig | None = None
    http_server_config: HTTPServerConfig = Field(default_factory=HTTPServerConfig)
    basic_auth_users: dict[str, BcryptHash] = Field(default_factory=dict)
    rate_limit: dict[str, Any] | None = None

    check_rate_limit = field_validator("rate_limit")(_refuse(
        "rate_limit", "bound scrape load in Prometheus (scrape_interval, sample_limit)"))


@dataclass(frozen=True)
class _FileStamp:
    """Which files the TLS context was built from, and when they last changed."""

    paths: tuple[Path, ...]
    mtimes: tuple[float, ...]

    @staticmethod
    def of(paths: tuple[Path, ...]) -> _FileStamp:
        mtimes = []
        for path in paths:
            try:
                mtimes.append(path.stat().st_mtime)
            except OSError:
                mtimes.append(-1.0)
        return _FileStamp(paths, tuple(mtimes))


class _AuthCache:
    """Remembers recent (user, password) checks: bcrypt is slow on purpose, scrapes are
    frequent. Keys are salted digests, so the cache holds no password. Valid credentials
    are kept apart from failures, so a flood of wrong passwords cannot push them out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._salt = os.urandom(16)
        self._entries: OrderedDict[bytes, bool] = OrderedDict()
        self._valid: OrderedDict[bytes, bool] = OrderedDict()

    def key(self, user: str, password: bytes, hashed: bytes) -> bytes:
        return hashlib.sha256(self._salt + user.encode() + b"\0" + hashed + b"\0"
                              + password).digest()

    def get(self, key: bytes) -> bool | None:
        with self._lock:
            for entries in (self._valid, self._entries):
                found = entries.get(key)
                if found is not None:
                    entries.move_to_end(key)
                    return found
            return None

    def put(self, key: bytes, ok: bool) -> None:
        with self._lock:
            entries = self._valid if ok else self._entries
            entries[key] = ok
            while len(entries) > _CACHE_SIZE:
                entries.popitem(last=False)


@dataclass
class WebConfig:
    """A loaded web config: the TLS context (rebuilt when its files change) and users."""

    source: str | None = None
    tls: TLSServerConfig | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    headers: tuple[tuple[str, str], ...] = ()
    # Checked for unknown users: same cost as the configured hashes (see dummy_hash).
    dummy: bytes = field(default=b"", repr=False)
    _context: ssl.SSLContext | None = field(default=None, repr=False)
    _stamp: _FileStamp | None = field(default=None, repr=False)
    _cache: _AuthCache = field(default_factory=_AuthCache, repr=False)
    _bcrypt: _BcryptGate = field(default_factory=lambda: _BcryptGate(), repr=False)
    _reload_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.users and not self.dummy:
            self.dummy = dummy_hash(list(self.users.values()))

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    def keep_checks(self, previous: WebConfig) -> None:
        """Carry the checked credentials and the bcrypt gate over a reload: the first
        scrape after a SIGHUP under a flood of wrong passwords otherwise queued behind the
        flood for a bcrypt slot (seconds late, or a 429). Safe when the hashes changed:
        a cache key includes the hash it was checked against."""
        self._cache = previous._cache
        self._bcrypt = previous._bcrypt

    def ssl_context(self) -> ssl.SSLContext | None:
        """The current context; rebuilt when the certificate, key or CA file changed, so
        a rotated certificate (cert-manager, certbot) is served without a restart."""
        if self.tls is None:
            return None
        paths = tuple(p for p in (self.tls.cert_file, self.tls.key_file,
                                  self.tls.client_ca_file) if p is not None)
        stamp = _FileStamp.of(paths)
        if stamp == self._stamp and self._context is not None:
            return self._context
        with self._reload_lock:
            if stamp != self._stamp or self._context is None:
                try:
                    self._context = build_ssl_context(self.tls, self.source)
                    if self._stamp is not None:
                        log.info("TLS certificate files changed: reloaded")
                except ConfigError as exc:
                    if self._context is None:
                        raise
                    log.error("TLS files changed but cannot be loaded, keeping the "
                              "previous certificate: %s", exc)
                self._stamp = stamp
        return self._context

    def check(self, authorization: str | None) -> bool | None:
        """True if no users are configured or the Basic credentials match one; None when
        they are not in the cache and too many other checks are running or waiting
        (the caller answers 429: a flood of wrong passwords holds at most a few workers,
        and a cached valid credential never waits for them)."""
        if not self.users:
            return True
        credentials = parse_basic(authorization)
        if credentials is None:
            return False
        user, password = credentials
        hashed = self.users.get(user)
        known = hashed is not None
        hashed = hashed if hashed is not None else self.dummy
        key = self._cache.key(user, password, hashed)
        ok = self._cache.get(key)
        if ok is None:
            ok = self._bcrypt.checkpw(password, hashed)
            if ok is None:
                return None
            self._cache.put(key, ok)
        return ok and known

    def allowed_peer(self, cert: dict[str, Any] | None) -> bool:
        """client_allowed_sans: the verified client certificate names an allowed SAN."""
        if self.tls is None or self.tls.client_allowed_sans is None:
            return True
        if not cert:
            return False
        sans = {value for _kind, value in cert.get("subjectAltName", ())}
        return bool(sans & set(self.tls.client_allowed_sans))


class _BcryptGate:
    """bcrypt checks of uncached credentials: BCRYPT_RUNNING at once (CPU-bound by
    design, they must not take every core), BCRYPT_WAITING more may wait for a turn, and
    any beyond are refused at once instead of holding a worker."""

    def __init__(self) -> None:
        self._admitted = threading.BoundedSemaphore(BCRYPT_RUNNING + BCRYPT_WAITING)
        self._running = threading.BoundedSemaphore(BCRYPT_RUNNING)

    def checkpw(self, password: bytes, hashed: bytes) -> bool | None:
        """bcrypt.checkpw, or None when the gate is full."""
        import bcrypt

        if not self._admitted.acquire(blocking=False):
            return None
        try:
            with self._running:
                try:
                    return bool(bcrypt.checkpw(password, hashed))
                except ValueError:  # e.g. a password over bcrypt's 72 bytes
                    return False
        finally:
            self._admitted.release()


def bcrypt_cost(hashed: bytes) -> int:
    """The cost (log2 rounds) of a `$2b$12$...` hash."""
    return int(hashed.split(b"$")[2])


def dummy_hash(hashes: list[bytes]) -> bytes:
    """A bcrypt hash of a random secret nobody knows, at the highest cost among `hashes`:
    checking an unknown user's password against it takes as long as checking a known
    user's, so response times do not reveal which user names exist."""
    import bcrypt

    cost = max((bcrypt_cost(h) for h in hashes), default=4)
    return bcrypt.hashpw(os.urandom(16).hex().encode(), bcrypt.gensalt(rounds=cost))


def parse_basic(authorization: str | None) -> tuple[str, bytes] | None:
    """`Basic base64(user:password)` -> (user, password bytes); None if malformed."""
    if not authorization:
        return None
    scheme, _, encoded = authorization.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    user, sep, password = decoded.partition(b":")
    if not sep:
        return None
    return user.decode("utf-8", "replace"), password


def build_ssl_context(tls: TLSServerConfig, source: str | None) -> ssl.SSLContext:
    """An SSLContext from the config; errors name the web-config key at fault."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.minimum_version = _TLS_VERSIONS[tls.min_version]
        ctx.maximum_version = _TLS_VERSIONS[tls.max_version]
    except ValueError as exc:  # the local OpenSSL refuses e.g. TLS 1.0
        raise ConfigError(f"TLS version not available here: {exc}", source=source,
                          path="tls_server_config.min_version") from None
    if tls.prefer_server_cipher_suites:
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    for key, path in (("cert_file", tls.cert_file), ("key_file", tls.key_file)):
        if not path.is_file():
            raise ConfigError(f"cannot read {path}: no such file", source=source,
                              path=f"tls_server_config.{key}")
    try:
        ctx.load_cert_chain(str(tls.cert_file), str(tls.key_file))
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(f"cannot load the certificate and key ({tls.cert_file}, "
                          f"{tls.key_file}): {getattr(exc, 'reason', None) or exc}",
                          source=source, path="tls_server_config.cert_file") from None
    if tls.client_ca_file is not None:
        try:
            ctx.load_verify_locations(cafile=str(tls.client_ca_file))
        except (ssl.SSLError, OSError) as exc:
            raise ConfigError(f"cannot load client CAs from {tls.client_ca_file}: "
                              f"{getattr(exc, 'reason', None) or exc}", source=source,
                              path="tls_server_config.client_ca_file") from None
        ctx.verify_mode = ssl.CERT_REQUIRED \
            if tls.client_auth_type == "RequireAndVerifyClientCert" else ssl.CERT_OPTIONAL
    return ctx


def load_web_config(path: str | os.PathLike[str] | None) -> WebConfig:
    """Read and check a web-config file (certificates loaded now, so errors show at start).

    No path: plain HTTP, no auth. Raises ConfigError naming file:line and the YAML path.
    """
    if path is None:
        return WebConfig()
    file = Path(path)
    source = str(file)
    text = read_config_file(file, "web config")
    model = parse_yaml_model(WebConfigModel, text, source,
                             "a web config must be a mapping (tls_server_config, "
                             "basic_auth_users, http_server_config)", empty={})
    tls = model.tls_server_config
    if tls is not None:
        base = file.parent
        tls = tls.model_copy(update={
            "cert_file": base / tls.cert_file,
            "key_file": base / tls.key_file,
            "client_ca_file": None if tls.client_ca_file is None else base / tls.client_ca_file,
        })
    users = {u: h.encode() for u, h in model.basic_auth_users.items()}
    config = WebConfig(source, tls, users, tuple(model.http_server_config.headers.items()))
    config.ssl_context()  # fail now, not on the first connection
    if config.users and tls is None:
        log.warning("%s: basic auth without TLS sends passwords in clear text; add "
                    "tls_server_config", source)
    return config
