"""Redaction over every DSN form dbgauge accepts or is likely to be handed, and their
malformed variants: a marked password never shows, whatever it holds (tests/helpers/dsns.py).

The registry of known secrets is emptied for each example, so what is masked here is
masked by `redact_dsn`, the patterns, or what dbgauge registers on its own while parsing.
"""

from __future__ import annotations

import json
import re
import time
from urllib.parse import quote

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dbgauge.toolkit.dsn import parse_dsn
from dbgauge.toolkit.errors import ConfigError
from dbgauge.toolkit.redact import (
    MASK,
    redact,
    redact_data,
    redact_dsn,
    redact_fragments,
    register_secret,
)
from dbgauge.toolkit.render.plugin import render_plugin, render_plugin_json
from dbgauge.toolkit.result import Finding, Status, plugin_result
from dbgauge.toolkit.targets import dsn_name, target_from_dsn
from tests.helpers.dsns import (
    FORMS,
    HANDED,
    SEPARATORS,
    WELL_FORMED,
    leaked,
    marked,
    no_known_secrets,
)

SEP = st.text(alphabet=SEPARATORS, max_size=3)
PASSWORD = st.builds(marked, SEP, SEP, SEP)




def dsn_of(form: str, password: str, host: str = "127.0.0.1", port: int = 1) -> str:
    return FORMS[form]("dbgauge", password, host, port)


@given(form=st.sampled_from(sorted(FORMS)), password=PASSWORD)
@settings(max_examples=600, deadline=None)
def test_a_whole_dsn_is_shown_without_its_password(form: str, password: str) -> None:
    dsn = dsn_of(form, password)
    with no_known_secrets():
        shown = redact_dsn(dsn)
    assert not leaked(shown), (dsn, shown)
    assert MASK in shown


@given(form=st.sampled_from(sorted(FORMS)), password=PASSWORD)
@example(form="pt-password-first", password=marked("", "", "://"))  # found: read as a URI
@settings(max_examples=600, deadline=None)
def test_parsing_any_dsn_shows_no_password(form: str, password: str) -> None:
    """parse_dsn and target_from_dsn either work, naming the node by its address, or
    refuse with a message that holds no piece of the password."""
    dsn = dsn_of(form, password)
    with no_known_secrets():
        for parse in (parse_dsn, target_from_dsn):
            try:
                got = parse(dsn)
            except ConfigError as exc:
                assert not leaked(str(exc)), (dsn, str(exc))
                continue
            text = repr(got) if parse is parse_dsn else got.name
            if parse is parse_dsn:
                text += " " + got.address + " " + dsn_name(got)  # type: ignore[union-attr]
            assert not leaked(text.replace(dsn, "")), (dsn, text)


@given(form=st.sampled_from(sorted(WELL_FORMED)), password=PASSWORD)
@settings(max_examples=300, deadline=None)
def test_a_well_formed_dsn_gives_its_password_to_the_driver(form: str,
                                                            password: str) -> None:
    dsn = dsn_of(form, password)
    with no_known_secrets():
        assert target_from_dsn(dsn).connection_params().password == password


@given(form=st.sampled_from(sorted(WELL_FORMED)), password=PASSWORD)
@settings(max_examples=600, deadline=None)
def test_a_well_formed_dsn_in_any_text_is_masked_by_pattern(form: str, password: str) -> None:
    """A driver's or a peer's message quoting a DSN dbgauge never parsed."""
    dsn = dsn_of(form, password)
    with no_known_secrets():
        for text in (f"cannot use {dsn}: refused", f"DSN '{dsn}' failed", f"({dsn})",
                     f"GET /probe?target={dsn} HTTP/1.1"):
            assert not leaked(redact(text)), (text, redact(text))


@pytest.mark.parametrize("form", sorted(HANDED))
def test_a_handed_dsn_with_a_plain_password_in_any_text_is_masked(form: str) -> None:
    """Peers' spellings and typos, with a password that needs no quoting, in free text."""
    dsn = dsn_of(form, marked("", "-", ""))
    with no_known_secrets():
        for text in (f"cannot use {dsn}: refused", f"DSN {dsn!r} failed"):
            assert not leaked(redact(text)), (text, redact(text))


@given(password=PASSWORD)
@settings(max_examples=300, deadline=None)
def test_a_registered_password_is_removed_in_every_spelling(password: str) -> None:
    with no_known_secrets():
        register_secret(password)
        for spelling in (password, quote(password, safe=""), json.dumps(password),
                         repr(password), password.replace("\\", "\\\\").replace("'", "\\'")):
            text = f"error: {spelling} was refused"
            assert not leaked(redact(text)), (text, redact(text))


@given(form=st.sampled_from(sorted(FORMS)), password=PASSWORD)
@settings(max_examples=200, deadline=None)
def test_redacted_json_stays_json(form: str, password: str) -> None:
    doc = {"detail": f"cannot use {dsn_of(form, password)}", "n": [1, {"dsn": "x"}]}
    with no_known_secrets():
        register_secret(password)
        out = json.loads(json.dumps(redact_data(doc)))
    assert not leaked(json.dumps(out))
    assert out["n"] == [1, {"dsn": "x"}]


@pytest.mark.parametrize("dsn", [
    "mysql:/dbgauge:Qzq7kMark@host/",
    "dbgauge:Qzq7kMark@tcp(127.0.0.1:3306)/",
])
def test_the_issues_cases_are_refused_with_a_hint_and_no_password(dsn: str) -> None:
    with no_known_secrets(), pytest.raises(ConfigError) as caught:
        target_from_dsn(dsn)
    message = str(caught.value)
    assert not leaked(message) and MASK in message
    assert any(hint in message for hint in ("pt DSN", "Go MySQL DSN", "two slashes"))


@pytest.mark.parametrize(("dsn", "says"), [
    ("postgresql://u:Qzq7kMark@Wxw9kMark@127.0.0.1:5432/app", "unencoded @, /, ? or #"),
    ("postgresql://u:12/Wxw9kMark@127.0.0.1:5432/app", "unencoded @, /, ? or #"),
    ("mysql://u:12/Wxw9kMark@127.0.0.1:3306/", "unencoded @, /, ? or #"),
    ("mysql://u:12#Wxw9kMark@127.0.0.1:3306/", "unencoded @, /, ? or #"),
    ("mysql://u:Qzq7kMark/Wxw9kMark@127.0.0.1:3306/", "unencoded @, /, ? or #"),
    ("host=h password=Qzq7kMark Wxw9kMark", 'missing "=" after "***"'),
    ("postgresql://u:Qzq7kMark Wxw9kMark@h/", 'unexpected spaces found in "***"'),
])
def test_a_password_a_parser_would_cut_in_two_is_refused(dsn: str, says: str) -> None:
    """libpq reads a URI's userinfo up to the first '@' and both parsers end it at a '/':
    the rest of the password would become the host, shown in every message."""
    with no_known_secrets(), pytest.raises(ConfigError, match=re.escape(says)) as caught:
        parse_dsn(dsn)
    assert not leaked(str(caught.value)), str(caught.value)


@pytest.mark.parametrize("text", [
    "cannot use mysql://dbgauge@db:3306/ now",
    "see postgresql://u@h/db?sslmode=require",
    "Access denied for user 'dbgauge'@'127.0.0.1' (using password: YES)",
    '{"a":"x@y","b":"host=db1 user=mon"}',
    "mail me at ops@example.com",
    "see https://example.org/@me",
    "P=3306,h=db1,u=mon",
])
def test_text_without_a_password_is_left_alone(text: str) -> None:
    with no_known_secrets():
        assert redact(text) == text


def test_a_parsers_message_loses_the_pieces_of_the_password_it_quotes() -> None:
    assert redact_fragments('missing "=" after "word" in connection info string',
                            "host=h password=pass word") == \
        'missing "=" after "***" in connection info string'
    assert redact_fragments("Port could not be cast to integer value as 'Qzq7'",
                            "mysql://u:Qzq7/x@h/") == \
        "Port could not be cast to integer value as '***'"
    assert redact_fragments('invalid connection option "h"', "h=db1,P=1,p=secret") == \
        'invalid connection option "h"'


@pytest.mark.parametrize("text", ["p=a:" * 50000, "a://b:" * 35000, "x:" + "y" * 200000,
                                  "password=" + "'" * 200000, "p=," * 70000])
def test_a_long_hostile_text_costs_linear_time(text: str) -> None:
    """A /probe?target= of 64 KiB is logged redacted: a pattern that backtracks from every
    ':' to find an '@' took minutes on these (the bound is a hundred times the real cost)."""
    started = time.perf_counter()
    redact(text)
    redact_dsn(text)
    redact_fragments(text[:400], text)
    assert time.perf_counter() - started < 10


def test_a_plugin_line_masks_a_password_and_keeps_its_perfdata_ranges() -> None:
    """Perfdata (`'node:metric'=1;@0:10`) holds a ':' then an '@' but never a secret: it
    is not redacted; the summary and the findings are."""
    dsn = "dbgauge:Qzq7kMark@tcp(db1:3306)/"
    result = plugin_result("lag", [Finding(Status.UNKNOWN, "n1", "error", f"bad {dsn}")],
                           f"n1: bad {dsn}", [("n1:lag_seconds", 1.0)])
    text = render_plugin(result, {"lag_seconds": ("@0:10", "~:20")})
    assert not leaked(text) and text.count("dbgauge:***@tcp(db1:3306)/") == 2, text
    assert "'n1:lag_seconds'=1s;@0:10;~:20" in text
    assert not leaked(render_plugin_json(result))


def test_a_bugs_traceback_is_shown_without_the_password(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import dbgauge.cli as cli_module

    def bug(**_kwargs: object) -> None:
        raise RuntimeError("cannot use dbgauge:Qzq7kMark@tcp(db1:3306)/")

    monkeypatch.setattr(cli_module, "cli", bug)
    with pytest.raises(SystemExit) as caught:
        cli_module.main()
    err = capsys.readouterr().err
    assert caught.value.code == 1 and "RuntimeError" in err and "dbgauge:***@tcp" in err
    assert not leaked(err)


def test_the_registry_of_secrets_is_bounded() -> None:
    """A flood of distinct passwords (DSNs handed to /probe) stops being remembered past
    MAX_SPELLINGS: memory and every later redaction stay bounded; the first ones stay."""
    from dbgauge.toolkit import redact as r

    saved = (set(r._secrets), list(r._ordered))
    try:
        r._secrets.clear()
        r._ordered = []
        r.register_secret("first-registered-secret")
        for i in range(r.MAX_SPELLINGS):
            r.register_secret(f"flood-{i:06d}-password")
        assert len(r._secrets) <= r.MAX_SPELLINGS
        assert r.redact("x first-registered-secret y") == "x *** y"
    finally:
        r._secrets.clear()
        r._secrets.update(saved[0])
        r._ordered = saved[1]


def test_a_pt_dsn_whose_password_holds_a_scheme_separator_is_still_pt() -> None:
    """`p=` first with `://` inside the password was read as a URI with an unknown scheme
    (the password as the scheme); a one-letter key makes it pt's form, whatever follows."""
    for dsn in ("p=se://cret,h=127.0.0.1,P=1,u=dbgauge", "h=127.0.0.1,p=se://cret,P=1,u=dbgauge"):
        got = parse_dsn(dsn)
        assert (got.family, got.host, got.port, got.user) == ("mysql", "127.0.0.1", 1, "dbgauge")
