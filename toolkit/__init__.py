"""dbgauge's core, the ground floor of the `dbgauge` package.

Configuration (`config`), servers and their connections (`targets`, `dsn`, `db/`: the only
driver importer), the collector protocol and metric specs (`metrics`), the one result
type (`result`) and exception tree (`errors`), SQL loading (`sql`), every output format
(`render/`), the exporter daemon (`exporter/`), the pgTAP runner (`pgtap/`) and the
real-server test sandbox (`sandbox/`). It imports nothing from the floors above it
(collectors/, checks/, and dbgauge/cli and dbgauge/app, which hold the CLI and the
composition root): what they provide is handed down to it.
"""

__version__ = "0.1.0"

# The env var naming the config file; here so the CLI can use it without importing the
# (pydantic-heavy) config module at start-up.
ENV_CONFIG = "DBGAUGE_CONFIG"
# The heartbeat table dbgauge writes and reads unless told otherwise (pt-heartbeat's
# layout); here, like ENV_CONFIG, so a command's --help can show it for free.
DEFAULT_HEARTBEAT_TABLE = "dbgauge.heartbeat"
