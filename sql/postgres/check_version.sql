-- dbgauge check version (checks/health/version.py): the server's version as it says it.
SHOW server_version
