-- Sandbox setup: a superuser that logs in (postgres, sandbox_admin). The password is
-- bound on the client: utility statements take no server-side parameters.
ALTER ROLE {role} WITH SUPERUSER LOGIN PASSWORD %s;
