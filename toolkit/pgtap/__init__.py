"""pgTAP in CI: a pg_prove-class runner, a pure TAP parser, JUnit output and schema tests.

`tap` parses TAP (pure), `runner` drives `psql` per test file as pg_prove does, `junit`
renders results as JUnit XML, `generate` snapshots a live schema into a pgTAP file.
"""
