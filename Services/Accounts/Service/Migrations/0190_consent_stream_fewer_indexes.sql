-- Two index entries fewer per act, on the two tables every act writes:
-- - `consent_outbox`'s primary key on `id`: no query finds a row by its id alone (the stream is read
--   and pruned by (`xid`, `id`), consent_outbox_order; a caller waiting for its record and a
--   deletion find a user's rows by consent_outbox_user). `id` still comes from its sequence, so it
--   stays unique.
-- - `consent_keys_age`: only the sweep that forgets keys older than a day used it, every second. The
--   sweep now runs hourly and reads the table through (`Consents/ConsentBacklog.swift`): one scan of
--   a day's keys an hour costs less than an index entry per act.
ALTER TABLE consent_outbox DROP CONSTRAINT consent_outbox_pkey;
DROP INDEX consent_keys_age;
