"""Keep secrets out of logs, errors and HTTP responses.

Two layers: DSN userinfo is masked by pattern, and every password dbgauge has read is
registered here so that any text shown to a user can be scrubbed of it verbatim (a
driver may echo a DSN or a password in an exception message).
"""

from __future__ import annotations

import re
import threading

MASK = "***"
_DSN_PASSWORD = re.compile(r"(?P<prefix>[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)(?P<pw>[^@\s]*)@")
_KV_PASSWORD = re.compile(r"(?P<prefix>\bpassword\s*=\s*)(?P<pw>'[^']*'|\S+)", re.IGNORECASE)

_lock = threading.Lock()
_secrets: set[str] = set()


def register_secret(secret: str | None) -> None:
    """Remember a secret so `redact` removes it wherever it appears."""
    if secret and len(secret) >= 3:
        with _lock:
            _secrets.add(secret)


def redact(text: str) -> str:
    """Return `text` with DSN passwords, password=... pairs and known secrets masked."""
    text = _DSN_PASSWORD.sub(lambda m: f"{m.group('prefix')}{MASK}@", text)
    text = _KV_PASSWORD.sub(lambda m: f"{m.group('prefix')}{MASK}", text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text
