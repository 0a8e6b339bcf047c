"""Checks: health, split-brain, drift (checksums) and configuration validators.

Each is a package split by responsibility (model, pure parsing, rules, live reads, the
run itself). Checks return data (`toolkit.result.CheckResult`); the CLI renders it
(`toolkit.render`) and maps it to an exit code. Checks read servers through the
collectors' facts, never through metric names.
"""
