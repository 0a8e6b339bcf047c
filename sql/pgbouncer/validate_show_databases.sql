-- validate pgbouncer --live (issue 8): databases the running pooler serves.
SHOW DATABASES
