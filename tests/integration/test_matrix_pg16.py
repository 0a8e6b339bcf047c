"""The PostgreSQL matrix battery on PostgreSQL 16, on a sandbox of its own
(tests/helpers/matrix_battery.py), with issue 29's findings as regression cases."""

from __future__ import annotations

import pytest

from tests.helpers.matrix_battery import Battery
from tests.helpers.matrix_findings import Findings

pytestmark = pytest.mark.integration


class TestPostgres16(Findings, Battery):
    major = 16
