"""How mysqld_exporter reads a value and makes a name (its collector.go `parseStatus` and
global_variables.go `validPrometheusName`), for the mysqld_exporter dialect's modules.

`parse_status(text)` gives the number mysqld_exporter exports for a SHOW GLOBAL STATUS,
SHOW GLOBAL VARIABLES or SHOW SLAVE STATUS value, or None where it exports nothing:

- yes/on 1, no/off/disabled 0, connecting 0 (Slave_IO_Running), primary 1 and
  non-primary/disconnected 0 (wsrep_cluster_status), in any case;
- an OpenSSL date (`Jan  2 15:04:05 2030 GMT`, Ssl_server_not_after) or
  `2006-01-02 15:04:05` as Unix seconds (the zone abbreviation counts as UTC, as Go
  reads an abbreviation it does not know);
- a value ending in `.<digits>` (the log file regex) is read from where that match
  starts, which for a one-line value is the whole value: `mysql-bin.000003` gives
  nothing, `10.000000` gives 10;
- else Go's strconv.ParseFloat: a decimal or `0x...p..` number with no blanks, `inf`,
  `infinity`, `nan`; out of range gives nothing.
"""

from __future__ import annotations

import calendar
import math
import re
from datetime import UTC, datetime

_WORDS = {"yes": 1.0, "on": 1.0, "no": 0.0, "off": 0.0, "disabled": 0.0,
          "connecting": 0.0, "primary": 1.0, "non-primary": 0.0, "disconnected": 0.0}
_MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
# Go layouts "Jan _2 15:04:05 2006 MST" and time.DateTime ("2006-01-02 15:04:05")
_OPENSSL_TIME = re.compile(r"([A-Z][a-z]{2})  ?(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4}) "
                           r"[A-Z]{3,5}")
_DATETIME = re.compile(r"(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)")
_LOG = re.compile(r"[^\n]+\.\d+\Z")  # mysqld_exporter's logRE `.+\.(\d+)$`
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+")
_SPECIAL = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)
_NOT_NAME = re.compile(r"[^a-zA-Z0-9_]")


def parse_float(text: str) -> float | None:
    """Go's strconv.ParseFloat(text, 64) when it succeeds, else None."""
    if _DECIMAL.fullmatch(text):
        value = float(text)
        return None if math.isinf(value) else value  # Go: ErrRange
    if _SPECIAL.fullmatch(text):
        return float(text)
    if _HEX.fullmatch(text):
        value = float.fromhex(text)
        return None if math.isinf(value) else value
    return None


def _timestamp(text: str) -> float | None:
    """An OpenSSL date or a DATETIME as Unix seconds (the zone as UTC); None otherwise,
    or for a date that does not exist (Go's time.Parse refuses Feb 30)."""
    m = _OPENSSL_TIME.fullmatch(text)
    if m is not None:
        month = _MONTHS.get(m.group(1))
        if month is None:
            return None
        day, hour, minute, second, year = map(int, m.group(2, 3, 4, 5, 6))
    else:
        m = _DATETIME.fullmatch(text)
        if m is None:
            return None
        year, month, day, hour, minute, second = map(int, m.groups())
    try:
        when = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        return None
    return float(calendar.timegm(when.timetuple()))


def parse_status(text: str) -> float | None:
    """What mysqld_exporter's parseStatus makes of a value: a number, or None when it
    skips the value (see the module's docstring)."""
    word = _WORDS.get(text.lower())
    if word is not None:
        return word
    if text[:1].isalpha() or text[4:5] == "-":
        stamp = _timestamp(text)
        if stamp is not None:
            return stamp
    m = _LOG.search(text)
    if m is not None:
        return parse_float(m.group())
    return parse_float(text)


def valid_name(name: str) -> str:
    """mysqld_exporter's validPrometheusName: every character outside [a-zA-Z0-9_] becomes
    `_`, then lower case."""
    return _NOT_NAME.sub("_", name).lower()
