-- The Audit service's schema: an append-only, hash-chained record of consent.
-- Search path is this schema while migrations run; the service's queries use qualified names.

-- What the Legal service published, as learned from `legal.published` (and the catch-up):
-- a record's version must be one of these, and its digest is copied from here.
CREATE TABLE legal_versions (
    document_type text NOT NULL,
    version text NOT NULL,
    digest text NOT NULL,
    material boolean NOT NULL,
    effective_at timestamptz NOT NULL,
    published_at timestamptz NOT NULL,
    PRIMARY KEY (document_type, version)
);

-- The link between a user and their records. `pseudonym` is what records carry; `secret` keys
-- the HMACs of the user's IP and user agent inside records. Erasure deletes the row: records,
-- digests and chains stay, and nothing links them to the person any more.
CREATE TABLE subjects (
    user_id uuid PRIMARY KEY,
    pseudonym uuid NOT NULL UNIQUE,
    secret bytea NOT NULL CHECK (length(secret) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Pseudonyms whose subject was erased (kept so an operator can prove an erasure happened and
-- an erasure is idempotent), without the user id.
CREATE TABLE erasures (
    pseudonym uuid PRIMARY KEY,
    erased_at timestamptz NOT NULL DEFAULT now(),
    records integer NOT NULL
);

-- Each chain is written by one batch at a time (its row is locked for the batch's transaction),
-- so positions are gap-free and every record links to the one before it.
CREATE TABLE chains (
    chain integer PRIMARY KEY CHECK (chain >= 0),
    head_position bigint NOT NULL DEFAULT 0,
    head_hash bytea NOT NULL DEFAULT '\x0000000000000000000000000000000000000000000000000000000000000000'
);

-- One row per accept / acknowledge / decline. `hash` = SHA-256 over the canonical encoding of
-- (chain, position, record_id, subject, document_type, version, digest, action, recorded_ms,
-- ip_hmac, ua_hmac, prev_hash): see RecordHash.swift. The personal columns (client_ip,
-- user_agent, idempotency_hash) are outside the hash, so erasure can clear them.
--
-- Growth: the primary key (chain, position) and record_id (time-ordered UUIDs) are appended at
-- the right edge of their B-trees; the subject index is the only randomly-placed one.
CREATE TABLE records (
    chain integer NOT NULL,
    position bigint NOT NULL,
    record_id uuid NOT NULL,
    subject uuid NOT NULL,
    document_type text NOT NULL,
    version text NOT NULL,
    digest text NOT NULL,
    action text NOT NULL CHECK (action IN ('accept', 'acknowledge', 'decline')),
    recorded_ms bigint NOT NULL,
    -- For people and SQL: derived from recorded_ms, the value the hash covers.
    recorded_at timestamptz GENERATED ALWAYS AS (to_timestamp(recorded_ms / 1000.0)) STORED,
    client_ip text,
    user_agent text,
    ip_hmac bytea,
    ua_hmac bytea,
    idempotency_hash text,
    prev_hash bytea NOT NULL,
    hash bytea NOT NULL,
    PRIMARY KEY (chain, position)
);
CREATE UNIQUE INDEX records_record_id ON records (record_id);
CREATE UNIQUE INDEX records_idempotency ON records (idempotency_hash) WHERE idempotency_hash IS NOT NULL;
CREATE INDEX records_subject ON records (subject, recorded_ms DESC);

-- Signed statements of each chain's head: an edit before a checkpoint changes a hash the
-- signature covers.
CREATE TABLE checkpoints (
    id bigserial PRIMARY KEY,
    chain integer NOT NULL,
    position bigint NOT NULL,
    head_hash bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_ms bigint NOT NULL,
    public_key text NOT NULL,
    signature text NOT NULL
);
CREATE INDEX checkpoints_chain ON checkpoints (chain, position DESC);
