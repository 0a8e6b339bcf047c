"""Renderings: what users and machines read, made from results and never the reverse.

One module per audience: `plugin` (the monitoring-plugin line and its JSON), `findings`
(validators' text, JSON and SARIF), `checksum` (the drift table), `pgtap` and `junit`
(the runner's lines, summary and JUnit XML), `progress` (a progress bar on a terminal),
`status` (`dbgauge status`'s trees as text), `page` (the daemon's HTML page) and
`prometheus` (a scrape in the exposition formats: text and OpenMetrics). None of them runs
a query or decides a status.
"""
