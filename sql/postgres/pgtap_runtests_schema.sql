-- pgtap run --runtests --schema S: a psql script; psql quotes both variables. pgTAP 0.9+.
SELECT * FROM runtests(:'dbgauge_schema'::name, :'dbgauge_match'::text);
