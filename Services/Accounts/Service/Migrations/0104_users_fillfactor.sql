-- Accepting the terms rewrites a user's row (tos_version, tos_accepted_at), columns no index
-- covers: with room left on each page PostgreSQL updates the row in place (a HOT update) instead of
-- adding an entry to each of the table's three indexes. Applies to pages written from now on.
ALTER TABLE users SET (fillfactor = 80);
