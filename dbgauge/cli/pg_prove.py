"""pg_prove's options for `dbgauge pgtap run`: the ones that make sense without Perl's
TAP::Harness are `pgtap run`'s own options (see there); the others are taken here only
to be refused, each with one line saying what to use instead, rather than click's "no
such option" -- a pg_prove command line pasted into CI learns what to change."""

from __future__ import annotations

import click

# option spellings -> (takes a value, what to use instead)
REFUSED: dict[tuple[str, ...], tuple[bool, str]] = {
    ("--harness",): (True, "dbgauge runs the files itself, without TAP::Harness: drop it"),
    ("--formatter",): (True, "use --junit FILE for JUnit XML, --tap for raw TAP"),
    ("-a", "--archive"): (True, "use --tap > FILE (raw TAP in file order) or --junit FILE"),
    ("--rc",): (True, "dbgauge reads no .proverc: give the options on the command line"),
    ("--norc",): (False, "dbgauge reads no .proverc: drop it"),
    ("--state",): (True, "dbgauge keeps no state between runs: name the files to run "
                         "(--shuffle and --reverse set the order)"),
    ("--parse",): (False, "TAP parse errors are always shown under their file"),
    ("--normalize",): (False, "use -v (each file's TAP lines) or --tap"),
    ("--directives",): (False, "use -v and look for TODO/SKIP, or --junit (skips marked)"),
    ("--merge",): (False, "psql's stderr is shown under a failing file, and with --tap on "
                          "stderr in file order"),
    ("--ignore-exit",): (False, "a psql error fails its file, as pg_prove does without it"),
    ("--color", "-c"): (False, "dbgauge prints no colour: drop it (--nocolor is accepted)"),
    ("--nocount",): (False, "dbgauge always prints each file's counts: drop it"),
    ("-m", "--man"): (False, "read docs/pgtap.md, or -H/--help"),
    ("-V", "--version"): (False, "use dbgauge --version"),
}
PG_PROVE_EPILOG = (
    "pg_prove's options with pg_prove's meaning: -d -U -h -p, -S/--set, -P/--pset, "
    "-b/--psql-bin, -r, --ext, -j, -R -s -x, -v, -o, -f, -q, -Q, -t/--timer, --shuffle, "
    "--reverse, --trap, -D/--dry, --nocolor and --count; the others (--state, --harness, "
    "--archive, --rc...) are refused with a line saying what to use.")
# accepted without effect: they ask for what dbgauge does anyway
ACCEPTED = ("--nocolor", "--count")


def _refuse(advice: str) -> click.decorators.FC:  # type: ignore[type-var]
    def callback(ctx: click.Context, param: click.Parameter, value: object) -> None:
        if value:
            name = max(param.opts, key=len)
            raise click.UsageError(f"pg_prove's {name} is not taken: {advice}", ctx)
    return callback  # type: ignore[return-value]


def pg_prove_options(f: click.decorators.FC) -> click.decorators.FC:
    """The refused options (hidden: each says what to use) and the accepted no-ops."""
    for names, (takes_value, advice) in REFUSED.items():
        f = click.option(*names, f"refused{names[-1].replace('-', '_')}", hidden=True,
                         is_flag=not takes_value, expose_value=False,
                         callback=_refuse(advice))(f)
    for name in ACCEPTED:
        f = click.option(name, is_flag=True, hidden=True, expose_value=False)(f)
    return f
