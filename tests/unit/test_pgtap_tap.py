"""The TAP parser: golden files captured from the sandbox, and the TAP::Parser rules that
decide pg_prove's verdicts (plan position, sequence, directives, bail-out, subtests)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from dbgauge.toolkit.pgtap.tap import parse_tap

TAP = Path(__file__).resolve().parents[1] / "fixtures" / "pgtap" / "tap"


def golden(name: str) -> list[str]:
    return (TAP / f"{name}.tap").read_text().splitlines()


def test_failing_file_keeps_its_diagnostics() -> None:
    result = parse_tap(golden("fail"))
    assert not result.passed
    assert result.plan is not None and result.plan.count == 3 and not result.errors
    assert [t.number for t in result.failed] == [2]
    failed = result.failed[0]
    assert failed.description == "one is two"
    assert failed.diagnostics == ('Failed test 2: "one is two"', "        have: 1",
                                  "        want: 2")
    assert result.summary_comments == ("Looks like you failed 1 test of 3",)
    assert result.comments[0].startswith("captured: PostgreSQL 15")


def test_plan_at_the_end_is_accepted() -> None:
    result = parse_tap(golden("plan_at_end"))
    assert result.passed
    assert result.plan is not None and result.plan.line > result.tests[-1].line


def test_todo_and_skip() -> None:
    result = parse_tap(golden("todo_skip"))
    assert result.passed, result.errors
    todo_fail, skipped = result.tests[1], result.tests[2:4]
    assert not todo_fail.ok and todo_fail.todo and todo_fail.passed
    assert todo_fail.reason == "not implemented yet"
    assert all(t.skipped and t.reason == "needs a replica" for t in skipped)
    assert result.tests[4].ok and result.tests[4].todo
    assert len(result.todo) == 2 and len(result.skipped) == 2


def test_plan_mismatch_fails_even_when_every_test_passed() -> None:
    result = parse_tap(golden("plan_mismatch"))
    assert not result.failed and not result.passed
    assert result.errors == ("bad plan: planned 5 test(s) but ran 3",)


def test_truncated_by_an_sql_error_is_a_plan_mismatch() -> None:
    result = parse_tap(golden("sql_error"))
    assert not result.passed and len(result.tests) == 2
    assert "planned 4 test(s) but ran 2" in result.errors[0]


def test_bail_out() -> None:
    result = parse_tap(golden("bailout"))
    assert result.bailout == "fixture database is not prepared"
    assert not result.passed and not result.failed
    # as for TAP::Parser, no plan complaint on top of the bail-out
    assert result.errors == ()


def test_skip_all() -> None:
    result = parse_tap(golden("skip_all"))
    assert result.passed and result.skip_all == "no replica in this environment"
    assert result.tests == ()


def test_runtests_subtests_are_parsed_and_the_parent_decides() -> None:
    result = parse_tap(golden("runtests"))
    assert not result.passed and not result.errors
    assert [t.description for t in result.failed] == ["dbgauge_xunit.test_c_fails",
                                                      "dbgauge_xunit.test_d_dies"]
    fails, dies = result.failed
    assert fails.subtest is not None and dies.subtest is not None
    assert fails.subtest.name == "dbgauge_xunit.test_c_fails()"
    assert [t.number for t in fails.subtest.failed] == [2]
    assert fails.subtest.failed[0].diagnostics[1:] == ("        have: have",
                                                       "        want: want")
    # the dying test has no plan of its own; its parent's "not ok" is what counts
    assert dies.subtest.plan is None
    assert any("Test died: P0001: boom" in d for d in dies.subtest.tests[0].diagnostics)
    skips = result.tests[5].subtest
    assert skips is not None and len(skips.skipped) == 2 and skips.passed
    assert result.tests[0].subtest is None  # startup's test sits at the top level


def test_numbers_are_optional_but_must_be_in_sequence() -> None:
    assert parse_tap(["1..2", "ok", "ok - second"]).passed
    result = parse_tap(["1..3", "ok 1", "ok 3", "ok 2"])
    assert not result.passed
    assert "tests out of sequence: found (3) but expected (2)" in result.errors[0]


def test_plan_in_the_middle_or_twice_or_missing() -> None:
    middle = parse_tap(["ok 1", "1..2", "ok 2"])
    assert any("must be at the beginning or end" in e for e in middle.errors)
    twice = parse_tap(["1..1", "ok 1", "1..1"])
    assert any("more than one plan" in e for e in twice.errors)
    none = parse_tap(["ok 1", "ok 2"])
    assert none.errors == ("no plan found in TAP output",) and not none.passed
    assert not parse_tap([]).passed


def test_directives_follow_tap_parser() -> None:
    result = parse_tap(["1..4", "not ok 1 - x # todo later", "ok 2 # skip why",
                        r"ok 3 - has \# no directive # SKIPPED", "not ok 4 - plain # TODOS"])
    one, two, three, four = result.tests
    assert one.todo and one.reason == "later" and one.passed
    assert two.skipped and two.reason == "why"
    assert three.description == "has # no directive # SKIPPED" and not three.directive
    assert four.directive == "" and not four.passed


def test_yaml_block_and_version_line() -> None:
    result = parse_tap(["TAP version 13", "1..1", "not ok 1 - x", "  ---",
                        "  message: boom", "  ...", ])
    assert result.version == 13 and not result.errors
    assert "message: boom" in result.tests[0].yaml
    assert parse_tap(["TAP version 12", "1..0"]).errors


def test_unknown_lines_do_not_fail_a_file() -> None:
    result = parse_tap(["1..1", "some stray SELECT output", "ok 1", ""])
    assert result.passed and result.unknown == ("some stray SELECT output",)


def test_orphan_subtest_and_indented_bailout() -> None:
    orphan = parse_tap(["1..1", "ok 1", "    ok 1 - inner", "    1..1"])
    assert any("not followed by its parent" in e for e in orphan.errors)
    bail = parse_tap(["1..1", "    Bail out! inner trouble", "ok 1"])
    assert bail.bailout == "inner trouble" and not bail.passed


def test_skip_all_plan_with_tests_is_an_error() -> None:
    result = parse_tap(["1..0 # SKIP nothing", "ok 1"])
    assert not result.passed


def test_elapsed_times_come_from_line_arrival() -> None:
    lines = ["1..2", "ok 1", "    # Subtest: s", "    ok 1", "    1..1", "ok 2 - parent"]
    result = parse_tap(lines, [0.5, 0.75, 1.0, 2.0, 2.0, 3.0])
    assert result.tests[0].elapsed == 0.25  # since the plan line
    assert result.tests[1].elapsed == 2.25  # covers its subtest
    sub = result.tests[1].subtest
    assert sub is not None and sub.name == "s" and sub.tests[0].elapsed is not None


@given(st.lists(st.text(max_size=40), max_size=30))
def test_never_raises(lines: list[str]) -> None:
    result = parse_tap(lines)
    assert result.passed in (True, False)


@given(st.lists(st.booleans(), max_size=30), st.booleans())
def test_verdict_is_all_ok_with_a_matching_plan(oks: list[bool], plan_first: bool) -> None:
    body = [f"{'ok' if ok else 'not ok'} {i} - t{i}" for i, ok in enumerate(oks, 1)]
    plan = [f"1..{len(oks)}"]
    result = parse_tap(plan + body if plan_first else body + plan)
    assert result.passed == all(oks)
    assert len(result.tests) == len(oks) and not result.errors
