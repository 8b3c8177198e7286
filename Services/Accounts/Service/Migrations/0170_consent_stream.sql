-- The consent stream (accounts.consents_since): every accept and decline of the terms, written
-- in the transaction that changes the user's standing, and every account deletion, written in
-- the transaction that deletes it. Audit chains the entries in `sequence` order and, by asking
-- for the entries after the last one it chained, lets Accounts delete those: a row lives only
-- until Audit holds it, so its IP address and user agent do too (a deletion clears them at once).
--
-- `sequence` stays NULL until the entries are read, when the reader numbers the committed rows
-- under an advisory lock in `id` order (as ServiceKit's outbox relay does): gap-free, so Audit
-- never moves past an entry that committed late.
CREATE TABLE consent_outbox (
    id bigserial PRIMARY KEY,
    sequence bigint UNIQUE,
    kind text NOT NULL CHECK (kind IN ('consent', 'deleted')),
    user_id uuid NOT NULL,
    record_id uuid,
    document_type text,
    version text,
    action text CHECK (action IN ('accept', 'decline')),
    idempotency_key text,
    recorded_ms bigint NOT NULL,
    client_ip text,
    user_agent text,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (kind = 'deleted' OR (record_id IS NOT NULL AND document_type IS NOT NULL AND version IS NOT NULL
        AND action IS NOT NULL AND idempotency_key IS NOT NULL))
);
CREATE INDEX consent_outbox_unsequenced ON consent_outbox (id) WHERE sequence IS NULL;
-- A deletion clears its user's IP addresses and agents still waiting here; a caller waiting for its
-- record to be chained looks for its row.
CREATE INDEX consent_outbox_user ON consent_outbox (user_id);

-- The idempotency keys of the acts written to the stream, per user, for a day (the sweep deletes
-- older ones): a retry of an act within it is answered from the first and writes nothing. A later
-- repeat is still recorded once: Audit keeps every record's key hashed in a unique index.
CREATE TABLE consent_keys (
    user_id uuid NOT NULL,
    key text NOT NULL,
    version text NOT NULL,
    recorded_ms bigint NOT NULL,
    PRIMARY KEY (user_id, key)
);
CREATE INDEX consent_keys_age ON consent_keys (recorded_ms);

-- The last sequence number given out, kept when every numbered row has been deleted, so the
-- numbering goes on from it (one row).
CREATE TABLE consent_stream_position (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    last bigint NOT NULL DEFAULT 0 CHECK (last >= 0)
);
INSERT INTO consent_stream_position DEFAULT VALUES;
