-- Sandbox setup: the account's password as kept in DIR/secrets (a rerun resets it).
ALTER USER %s@'%%' IDENTIFIED BY %s;
