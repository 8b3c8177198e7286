-- Users per seed 004. A row exists only once eligibility is confirmed (see the service README):
-- a sign-in without a state is answered without storing anything.
-- Runs with search_path set to the service's schema (accounts).
CREATE TABLE users (
    id uuid PRIMARY KEY,
    apple_id text NOT NULL CHECK (apple_id <> '' AND octet_length(apple_id) <= 255),
    email text,
    name text,
    username text,
    -- Two-letter code of a US state or DC, as the rules in force at sign-up allowed.
    state text NOT NULL CHECK (state ~ '^[A-Z]{2}$'),
    eligibility_confirmed_at timestamptz NOT NULL,
    -- The version of the eligibility rules (restricted states, minimum age) the user was admitted under.
    eligibility_rules_version text NOT NULL,
    -- The terms version last accepted, and when (the Audit receipt's time).
    tos_version text,
    tos_accepted_at timestamptz,
    -- The Audit record of the sign-up acceptance; NULL while it is not yet recorded (a later
    -- get_or_create of the same Apple id finishes it).
    signup_receipt_id uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT users_apple_id_key UNIQUE (apple_id)
);

-- accounts.restricted_users: users of a state, in id order.
CREATE INDEX users_by_state ON users (state, id);

-- Each eligibility confirmation as the user gave it: Audit records consent to legal documents
-- only, so the proof of the state, the rules version and the certification is kept here.
-- Rows are only inserted.
CREATE TABLE eligibility_confirmations (
    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    state text NOT NULL,
    rules_version text NOT NULL,
    minimum_age integer NOT NULL,
    confirmed_at timestamptz NOT NULL,
    client_ip text,
    user_agent text,
    PRIMARY KEY (user_id, confirmed_at)
);
