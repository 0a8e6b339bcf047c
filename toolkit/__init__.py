"""dbgauge core: configuration, connections, exporter daemon, sandbox and CLI."""

__version__ = "0.1.0"

# The env var naming the config file; here so the CLI can use it without importing the
# (pydantic-heavy) config module at start-up.
ENV_CONFIG = "DBGAUGE_CONFIG"
# The heartbeat table dbgauge writes and reads unless told otherwise (pt-heartbeat's
# layout); here, like ENV_CONFIG, so a command's --help can show it for free.
DEFAULT_HEARTBEAT_TABLE = "dbgauge.heartbeat"
