-- Run by `deploy/compose restore` after pg_restore, as the superuser, in one transaction.
--
-- Accounts' consent stream is ordered by transaction id (xid8) and read only below the reader's
-- snapshot xmin, so that no writer still running can put an entry before one already read. A
-- logical restore keeps the rows' xids from the old cluster, far ahead of the new cluster's: those
-- entries would never be read and Audit would never chain them. Here the entries Audit had already
-- chained (at or before its position) are dropped, as Accounts would have pruned them; the rest are
-- given this transaction's id and new entry ids in their old order; and Audit's position goes back
-- to the start of the stream, which now begins with them. (A physical restore, such as
-- CloudNativePG's, keeps the cluster's xids and needs none of this.)
\set ON_ERROR_STOP on
BEGIN;
DELETE FROM accounts.consent_outbox o
USING audit.event_cursors c
WHERE c.publisher = 'accounts.consents' AND c.last_transaction IS NOT NULL
    AND (o.xid::text::bigint, o.id) <= (c.last_transaction, c.last_entry);
WITH ordered AS (
    SELECT id, row_number() OVER (ORDER BY xid, id) AS n FROM accounts.consent_outbox
), top AS (
    SELECT coalesce(max(id), 0) AS m FROM accounts.consent_outbox
)
UPDATE accounts.consent_outbox o SET xid = pg_current_xact_id(), id = top.m + ordered.n
FROM ordered, top WHERE o.id = ordered.id;
SELECT setval(pg_get_serial_sequence('accounts.consent_outbox', 'id'),
    greatest((SELECT max(id) FROM accounts.consent_outbox), 1));
UPDATE audit.event_cursors SET last_transaction = 0, last_entry = 0
WHERE publisher = 'accounts.consents' AND last_transaction IS NOT NULL;
SELECT count(*) AS entries_to_chain FROM accounts.consent_outbox;
COMMIT;
