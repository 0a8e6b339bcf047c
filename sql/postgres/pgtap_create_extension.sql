-- pgtap run --install-pgtap: create pgTAP for the run (dropped again afterwards).
CREATE EXTENSION IF NOT EXISTS pgtap;
