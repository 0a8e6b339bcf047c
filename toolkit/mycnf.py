"""mysqld_exporter's `--config.my-cnf`: the [client] section of a MySQL option file as one
dbgauge target, so an operator switching exporters keeps the file already deployed.

Read: user, password, host, port, socket (dashes or underscores, values optionally
quoted). The password stays in memory only; it is registered for redaction like any
other. Pure: text in, a config entry out.
"""

from __future__ import annotations

import configparser
from urllib.parse import quote

from toolkit.errors import ConfigError
from toolkit.redact import register_secret

MY_CNF_TARGET = "mysql"  # the target's name: mysqld_exporter has one target per my.cnf


def my_cnf_target(text: str, source: str) -> dict[str, object]:
    """The [client] section of `text` as a `targets:` entry (kind mysql)."""
    parser = configparser.ConfigParser(allow_no_value=True, strict=False, interpolation=None,
                                       comment_prefixes=("#", ";"),
                                       inline_comment_prefixes=("#",))
    parser.optionxform = lambda key: key.strip().lower().replace("-", "_")  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text, source)
    except configparser.Error as exc:
        raise ConfigError(f"not a MySQL option file: {exc.message}", source=source) from None
    if not parser.has_section("client"):
        raise ConfigError("no [client] section (user, password, host, port or socket)",
                          source=source)
    client = {k: _unquote(v or "") for k, v in parser.items("client")}
    user = client.get("user", "")
    if not user:
        raise ConfigError("[client] names no user", source=source, path="client.user")
    password = client.get("password", "")
    register_secret(password or None)
    host = client.get("host", "") or "localhost"
    port = client.get("port", "") or "3306"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"port {port!r} is not a TCP port", source=source,
                          path="client.port")
    auth = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
    dsn = f"mysql://{auth}@{_host(host)}:{port}/"
    if client.get("socket"):
        dsn += "?unix_socket=" + quote(client["socket"], safe="/")
    return {"name": MY_CNF_TARGET, "kind": "mysql", "dsn": dsn}


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
