"""`dbgauge status`: the fleet's topology at a glance.

Discovers, from the configured targets, who replicates from whom (MySQL-family source ->
replica, PostgreSQL primary -> standby and -> logical subscriber, PgBouncer -> the servers
its databases point at) and what each node is doing (role, up, read_only, lag, threads or
WAL receiver, errant transactions, oldest lock wait and transaction, waiting clients).
`model` holds the frozen topology and its documented JSON document (docs/status.md),
`topology` the pure linking of nodes into trees, `reads` one node's reads (through the
collectors' facts and the health checks' judgement) and `run` the whole discovery; the
renderings (text, HTML) are in `toolkit.render.status`, over the JSON document.
"""
