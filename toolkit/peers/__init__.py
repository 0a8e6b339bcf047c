"""The peer exporters' start-up spellings (mysqld_exporter, postgres_exporter): a unit file
or a Helm values file moves over to `dbgauge serve` by changing the binary's name.

`env` reads the command line's peer flags and the environment (no I/O); `collectors` maps
the peers' collector switches to dbgauge's collectors; `targets` reads the files they name
and makes the targets, on start and on every SIGHUP; `probe` makes a transient target for
the peers' `/probe?target=ADDRESS&auth_module=NAME`. docs/compat.md is the user's side.
"""
