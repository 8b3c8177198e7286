-- Each correction a user made to their profile (name, email, state): which fields, when and from
-- where, as the record of the correction. The old values are not kept (the user said they were
-- wrong); a corrected state also gets a new row in eligibility_confirmations. Rows are only
-- inserted, and go with the user.
CREATE TABLE profile_corrections (
    id uuid PRIMARY KEY,
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    corrected_at timestamptz NOT NULL,
    fields text[] NOT NULL CHECK (cardinality(fields) > 0),
    client_ip text,
    user_agent text
);

CREATE INDEX profile_corrections_user ON profile_corrections (user_id, corrected_at);
