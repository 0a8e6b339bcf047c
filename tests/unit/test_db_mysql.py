"""MySQL connection set-up that needs no server."""

from __future__ import annotations

import ssl

from dbgauge.toolkit.db.mysql import _opportunistic_tls, _PyMySQLConnection, server_info


def test_opportunistic_tls_reuses_one_unverified_context() -> None:
    """Without TLS settings PyMySQL still offers TLS (unverified) and used to build a context
    per connection, loading the system CA store (~20 ms each); the shared one verifies
    nothing, exactly like PyMySQL's, but costs nothing after the first connection."""
    first = _PyMySQLConnection(host="127.0.0.1", defer_connect=True)
    second = _PyMySQLConnection(host="127.0.0.1", defer_connect=True)
    assert first.ctx is second.ctx is _opportunistic_tls()
    assert first.ctx.verify_mode == ssl.CERT_NONE and not first.ctx.check_hostname
    assert first.ssl and not first._ssl_required  # offered, not required
    # Settings of the operator's own still go through PyMySQL and verify as asked.
    required = _PyMySQLConnection(host="127.0.0.1", defer_connect=True,
                                  ssl={"verify_mode": "required"})
    assert required.ctx is not _opportunistic_tls()
    assert required.ctx.verify_mode == ssl.CERT_REQUIRED and required._ssl_required


def test_flavor_and_version_from_the_version_string() -> None:
    maria = server_info("5.5.5-10.11.19-MariaDB-0+deb12u1-log")
    assert (maria.flavor, maria.version) == ("mariadb", (10, 11, 19))
    assert server_info("8.4.3").flavor == "mysql"
