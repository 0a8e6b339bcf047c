-- Sandbox setup, in `drift` on pg-subscriber: the conninfo (it holds a password) is
-- bound on the client: utility statements take no server-side parameters.
CREATE SUBSCRIPTION {subscription} CONNECTION %s PUBLICATION {publication};
