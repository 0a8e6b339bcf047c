-- dbgauge checksum (checks/drift/run.py), PostgreSQL 13+: the database this side is
-- connected to. PostgreSQL sides compare the tables of one database each: sides connected
-- to databases of different names are refused unless the user says they differ on purpose.
SELECT current_database() AS datname
