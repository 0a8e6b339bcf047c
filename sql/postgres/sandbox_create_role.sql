-- Sandbox setup: a missing role, created bare; sandbox_role_* then give it its
-- attributes and password (the same as CREATE ROLE ... WITH them).
CREATE ROLE {role};
