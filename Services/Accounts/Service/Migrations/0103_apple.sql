-- Sign in with Apple beyond the identity token: Apple's refresh tokens (sealed), Apple's
-- server-to-server notifications, and deletion certificates.

-- Apple's "email-disabled" / "email-enabled": whether mail to the user's relay address bounces.
ALTER TABLE users ADD COLUMN apple_email_disabled boolean NOT NULL DEFAULT false;

-- Apple refresh tokens from the authorization-code exchange, sealed with AES-256-GCM
-- (SecretBox; authenticated context: the row id). One per Apple id. When the account is deleted
-- the row loses its Apple id and waits for revocation (revoke_due_at set); it is deleted once
-- Apple has revoked the token or the retries are given up.
CREATE TABLE apple_tokens (
    id uuid PRIMARY KEY,
    apple_id text UNIQUE,
    sealed_refresh_token text NOT NULL,
    stored_at timestamptz NOT NULL DEFAULT now(),
    revoke_due_at timestamptz,
    revoke_attempts integer NOT NULL DEFAULT 0,
    CHECK (apple_id IS NOT NULL OR revoke_due_at IS NOT NULL)
);

CREATE INDEX apple_tokens_revocation_due ON apple_tokens (revoke_due_at) WHERE revoke_due_at IS NOT NULL;

-- Every Apple notification applied, by a digest of (type, Apple id, event time): a repeat is
-- recognised and changes nothing. Holds no Apple id.
CREATE TABLE apple_notifications (
    key text PRIMARY KEY,
    event_type text NOT NULL,
    outcome text NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now()
);

-- The signed certificate of each deletion (a compact JWS; its claims hold no personal data).
CREATE TABLE deletion_certificates (
    id uuid PRIMARY KEY,
    user_id uuid NOT NULL UNIQUE REFERENCES deleted_accounts (user_id),
    token text NOT NULL
);
