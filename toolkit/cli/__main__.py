"""`python -m toolkit.cli` runs the dbgauge command line."""

from toolkit.cli import main

main()
