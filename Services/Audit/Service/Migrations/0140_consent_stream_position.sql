-- Audit's position in Accounts' consent stream (publisher `accounts.consents`) is a pair since the
-- stream is ordered by transaction (Accounts migration 0180): the transaction order key and the
-- entry id of the last entry chained. NULL for every other publisher, and for a position still a
-- sequence number of the numbered stream (`last_sequence`), which the follower's first read
-- after the upgrade sends as `afterSequence` and then replaces.
ALTER TABLE event_cursors
    ADD COLUMN last_transaction bigint,
    ADD COLUMN last_entry bigint,
    ADD CONSTRAINT event_cursors_position_pair CHECK ((last_transaction IS NULL) = (last_entry IS NULL));
