-- Large objects whose documents are gone, waiting to be unlinked. Deleting an account's
-- documents queues their large objects here in the event's transaction (row deletions take no
-- lock-table slots; each lo_unlink takes one, so unlinking thousands at once exceeds
-- max_locks_per_transaction); the sweeper then unlinks a bounded batch per transaction until the
-- queue is empty, and picks up where it stopped after a restart.
CREATE TABLE large_object_removals (
    lo_oid bigint PRIMARY KEY,
    queued_at timestamptz NOT NULL DEFAULT now()
);
