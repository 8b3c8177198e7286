-- Account deletion (seed 003): a pending request the user confirms or cancels, and a tombstone
-- per deleted account that holds no personal data: it answers a repeated confirmation and
-- tracks the Audit erasure still to do (audit_erased_at NULL).
CREATE TABLE deletion_requests (
    id uuid PRIMARY KEY,
    user_id uuid NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
    requested_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
);

CREATE TABLE deleted_accounts (
    user_id uuid PRIMARY KEY,
    request_id uuid NOT NULL UNIQUE,
    deleted_at timestamptz NOT NULL,
    audit_erased_at timestamptz
);

CREATE INDEX deleted_accounts_erasure_due ON deleted_accounts (deleted_at) WHERE audit_erased_at IS NULL;
