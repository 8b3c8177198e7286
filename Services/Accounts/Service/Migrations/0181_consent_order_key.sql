-- A stream row's `xid` (migration 0180) without reading the table: this transaction's id, or the
-- latest transaction id to have ended (a snapshot taken now: its xmax less one) when that is later.
-- Every transaction that committed before the call has an id at or below it, so a row written after
-- waiting for a user's lock still comes after the row of the transaction that held it (a tie is
-- broken by `id`, and this row's is the later); it is never below the writer's own id, so the row
-- is read only once its writer has ended; and it names a transaction that has ended or is this one,
-- so the row is readable as soon as this one ends, with no later transaction needed to move xmin
-- past it. consent_order_keys looked up each user's latest waiting row instead, 11 µs an
-- acceptance in the gateway benchmark, more than the numbering UPDATE it replaced.
--
-- VOLATILE, and a query of its own (a volatile function's queries each take a new snapshot): called
-- once the caller holds its users' locks, it sees every commit made while the caller waited, which
-- the calling statement's snapshot, taken before the wait, does not.
CREATE FUNCTION consent_order_key() RETURNS xid8
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    key xid8;
BEGIN
    SELECT greatest(pg_current_xact_id(), (pg_snapshot_xmax(pg_current_snapshot())::text::bigint - 1)::text::xid8) INTO key;
    RETURN key;
END
$$;
DROP FUNCTION consent_order_keys(uuid[]);
