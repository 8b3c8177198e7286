-- Refresh tokens a session rotated away from, so that one presented again is recognised as a
-- reuse (a stolen copy, or the owner's after a thief refreshed first) rather than an unknown
-- token: the whole session, every token descended from that sign-in, is then revoked. Only the
-- SHA-256 is kept, like the live token's. A session's rows go with it, and rows older than a
-- session's life are pruned on its next rotation (the session itself has expired by then).
CREATE TABLE retired_refresh_tokens (
    refresh_token_hash text PRIMARY KEY,
    session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    rotated_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX retired_refresh_tokens_session ON retired_refresh_tokens (session_id, rotated_at);
