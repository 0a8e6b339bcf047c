"""`python -m dbgauge` runs the dbgauge command line."""

from dbgauge.cli import main

main()
