"""dbgauge core: configuration, connections, exporter daemon, sandbox and CLI."""

__version__ = "0.1.0"
