-- Sandbox setup: the grant tables were edited directly (sandbox_drop_test_grants).
FLUSH PRIVILEGES;
