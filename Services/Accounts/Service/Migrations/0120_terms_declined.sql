-- When the user's last word on the terms was a decline (NULL once they accept again): the
-- gateway refuses the routes that need accepted terms until then (accounts.terms_standing).
-- Audit keeps the record of each decline; this is the user's standing only.
ALTER TABLE users ADD COLUMN tos_declined_at timestamptz;
