-- pgtap run --runtests (no --schema): a psql script; :'dbgauge_match' is psql-quoted. pgTAP 0.9+.
SELECT * FROM runtests(:'dbgauge_match'::text);
