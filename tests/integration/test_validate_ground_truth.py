"""Ground truth for validate pgbouncer: the real PgBouncer 1.18 started on each public
file of the corpus (and on the bad fixtures) refuses to start exactly when dbgauge says it
will, and the behaviours findings describe are observed (an empty host= read as the next
word, a missing server CA file that does not stop it).

dbgauge validates these runs for PgBouncer 1.18, the installed binary's version.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest

from dbgauge.checks.pgbouncer import PgbouncerOptions, validate_pgbouncer
from dbgauge.toolkit.result import Finding, Severity, severity_of
from tests.helpers.pooler import pgbouncer_on
from tests.helpers.validate import FIXTURES

pytestmark = pytest.mark.integration

REAL = FIXTURES / "realworld" / "pgbouncer"
BAD = FIXTURES / "pgbouncer" / "bad"
CASES = [REAL / c for c in sorted(p.name for p in REAL.iterdir())] + \
    [BAD / c for c in sorted(p.name for p in BAD.iterdir())]
REFUSAL = re.compile(r"(PgBouncer|\d\.\d+) (refuses to (start|load)|does not start)")


def _findings(ini: Path) -> list[Finding]:
    opts = PgbouncerOptions(version=(1, 18), fd_limit=1_000_000,
                            root=str(ini.parent / "host"))
    return list(validate_pgbouncer(str(ini), opts).findings)


def _claims_refusal(f: Finding) -> bool:
    text = f"{f.detail} {f.fix or ''}"
    return severity_of(f) == Severity.ERROR and REFUSAL.search(text) is not None


def _beside(ini: Path) -> tuple[Path, ...]:
    return tuple(p for p in ini.parent.iterdir()
                 if p.is_file() and p.name not in ("pgbouncer.ini", "expected.txt", "SOURCE"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pgbouncer_refuses_exactly_when_dbgauge_says_so(case: Path) -> None:
    ini = case / "pgbouncer.ini"
    claims = [f for f in _findings(ini) if _claims_refusal(f)]
    with pgbouncer_on(ini, files=_beside(ini)) as run:
        assert run.started == (not claims), (
            f"dbgauge claims: {[f.detail for f in claims]}\nPgBouncer said:\n{run.log}")
        if claims:
            assert "FATAL" in run.log


@pytest.mark.parametrize("case", ["tim-archive", "abohrandy-coolify", "oguzkaan-ha",
                                  "akatruk-amma"])
def test_refusals_name_the_same_line(case: str) -> None:
    ini = REAL / case / "pgbouncer.ini"
    (first,) = [f for f in _findings(ini) if _claims_refusal(f)][:1]
    with pgbouncer_on(ini) as run:
        assert not run.started, run.log
        lines = [run.original_line(int(n)) for n in re.findall(r"pgbouncer\.ini:(\d+)", run.log)]
        # libusual names the line after a [databases] entry (it has read the newline)
        assert first.line in lines or (first.line or 0) + 1 in lines, (first, run.log)


def test_a_second_pgbouncer_header_resets_the_first(tmp_path: Path) -> None:
    """TLS required with no certificate stops PgBouncer; behind a second [pgbouncer]
    header that requirement is gone, and so is the finding about it."""
    ini = tmp_path / "pgbouncer.ini"
    body = "[pgbouncer]\nclient_tls_sslmode = require\n[databases]\napp = host=h\n"
    ini.write_text(body)
    with pgbouncer_on(ini) as run:
        assert not run.started and "TLS setup failed" in run.log
    ini.write_text(body + "[pgbouncer]\nadmin_users = ops\n")
    assert "pgbouncer/duplicate" in {f.kind for f in _findings(ini)}
    assert not [f for f in _findings(ini) if f.kind == "pgbouncer/tls"]
    with pgbouncer_on(ini) as run:
        assert run.started, run.log


def test_empty_host_takes_the_next_word(tmp_path: Path) -> None:
    ini = REAL / "guilhermeferreir-k8s" / "pgbouncer.ini"
    (finding,) = [f for f in _findings(ini) if f.kind == "pgbouncer/database"]
    assert "'port=5432' as the host" in finding.detail
    users = tmp_path / "users.txt"
    users.write_text('"dbgauge" ""\n')
    extra = {"auth_type": "trust", "auth_file": "users.txt", "admin_users": "dbgauge"}
    with pgbouncer_on(ini, extra, files=(users,)) as run:
        assert run.started, run.log
        with psycopg.connect(host="127.0.0.1", port=run.port, dbname="pgbouncer",
                             user="dbgauge", autocommit=True,
                             connect_timeout=5) as conn:
            rows = conn.execute("SHOW DATABASES").fetchall()
        hosts = {r[0]: r[1] for r in rows}
        assert hosts["db-develop"] == "port=5432"


def test_missing_server_tls_ca_file_does_not_stop_pgbouncer() -> None:
    ini = REAL / "akatruk-azure" / "pgbouncer.ini"
    (tls,) = [f for f in _findings(ini) if f.kind == "pgbouncer/tls"]
    assert "PgBouncer starts" in tls.detail and tls.key == "server_tls_ca_file"
    with pgbouncer_on(ini) as run:
        assert run.started, run.log
        assert "could not open auth_file" in run.log  # the other missing file: logged only
