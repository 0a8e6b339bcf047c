-- Sandbox setup: anonymous accounts, which shadow user@% logins from 127.0.0.1.
SELECT User AS user, Host AS host FROM mysql.user WHERE User = '';
