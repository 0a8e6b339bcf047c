"""dbgauge core: configuration, connections, exporter daemon, sandbox and CLI."""

__version__ = "0.1.0"

# The env var naming the config file; here so the CLI can use it without importing the
# (pydantic-heavy) config module at start-up.
ENV_CONFIG = "DBGAUGE_CONFIG"
