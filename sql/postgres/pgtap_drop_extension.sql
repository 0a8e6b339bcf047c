-- pgtap run --install-pgtap: drop the pgTAP extension this run created.
DROP EXTENSION IF EXISTS pgtap;
