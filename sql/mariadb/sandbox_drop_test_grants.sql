-- Sandbox setup: the install's grants on test and test_% for everyone. Run without
-- parameters, so the % is SQL's own.
DELETE FROM mysql.db WHERE Db IN ('test', 'test\\_%');
