-- The consent stream is ordered by transaction instead of numbered when read: the reader's
-- numbering UPDATE (under an advisory lock, and a new entry in every index of the row since
-- `sequence` was indexed) made PostgreSQL's work per acceptance four times what it was. Each row
-- now costs one INSERT and one DELETE.
--
-- A row's place is (`xid`, `id`). `xid` is at least the writing transaction's id (xid8, which
-- never wraps): a reader returns only rows with `xid` below its snapshot's xmin, the oldest
-- transaction still running, so every transaction that could write a row before them has ended
-- and no row can later appear before one already read. Rows of transactions still open, or newer,
-- wait for a later read. Within a transaction, `id` order.
--
-- `xid` is raised to the user's latest row still waiting when that is later (consent_order_keys):
-- a writer that got its transaction id early (a deletion, which first locks its request; a batch,
-- which first locks the users before this one) and then waited for the user's lock would otherwise
-- put its row before the act that held the lock and committed first, and Audit would erase a
-- deleted user before chaining the user's last act. A later key only delays the row's reading
-- until that transaction has ended too.
ALTER TABLE consent_outbox ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX consent_outbox_order ON consent_outbox (xid, id);

-- `sequence` stays only on rows numbered before this migration: the first read of an Audit whose
-- position is such a number deletes the rows numbered up to it (it chained them) and reads the
-- rest from the start. New rows leave it NULL, in no index.
ALTER TABLE consent_outbox DROP CONSTRAINT consent_outbox_sequence_key;
DROP INDEX consent_outbox_unsequenced;
DROP TABLE consent_stream_position;

-- The `xid` each of `users` gets for a row written now: this transaction's id, or the user's
-- latest row's when that is later. VOLATILE, so it reads with a snapshot of its own, taken after
-- the caller holds the users' locks: a row committed while the caller waited for a lock is seen
-- (the calling statement's snapshot, taken before the wait, would not see it).
CREATE FUNCTION consent_order_keys(users uuid[]) RETURNS TABLE (for_user uuid, order_xid xid8)
LANGUAGE plpgsql VOLATILE SET search_path FROM CURRENT AS $$
BEGIN
    RETURN QUERY
    SELECT u.id, greatest(pg_current_xact_id(), (SELECT max(o.xid) FROM consent_outbox o WHERE o.user_id = u.id))
    FROM unnest(users) AS u(id);
END
$$;
