-- Sessions (Sign in with Apple). A session belongs to an Apple id, and to its user once one
-- exists (get_or_create binds the Apple id's open sessions when it creates the user). Deleting
-- the user deletes its sessions. Only the SHA-256 of the refresh token is kept; refreshing
-- replaces it (rotation).
CREATE TABLE sessions (
    id uuid PRIMARY KEY,
    user_id uuid REFERENCES users (id) ON DELETE CASCADE,
    apple_id text NOT NULL,
    refresh_token_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
);

CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_apple_id ON sessions (apple_id) WHERE user_id IS NULL;
