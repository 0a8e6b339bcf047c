"""pgTAP in CI: a pg_prove-class runner, a pure TAP parser, and schema-snapshot tests.

`files` checks a run's command line (test files, psql, variables) before anything runs,
`psql` finds psql and how it connects, `runner` drives one psql session per test file as
pg_prove does, `tap` parses TAP (pure), `generate` snapshots a live schema into a pgTAP
file. A run's text and JUnit XML are rendered in toolkit/render (`pgtap`, `junit`).
"""
