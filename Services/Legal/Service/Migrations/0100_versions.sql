-- Every published version of every legal document. Rows are only ever inserted: a published
-- text is what users accepted, so it is never edited or deleted (a fix is a new version).
-- Runs with search_path set to the service's schema (legal).
CREATE TABLE versions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    type text NOT NULL CHECK (type IN ('privacy_policy', 'terms_of_service')),
    version text NOT NULL CHECK (version ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$'),
    content text NOT NULL CHECK (content <> '' AND octet_length(content) <= 1048576),
    -- Lower-case hex SHA-256 of the UTF-8 content; the check proves the service computed it right.
    digest text NOT NULL CHECK (digest = encode(sha256(convert_to(content, 'UTF8')), 'hex')),
    -- True when users must accept again; false for an editorial fix.
    material boolean NOT NULL,
    -- The "Last Updated" date the document shows.
    last_updated timestamptz NOT NULL,
    published_at timestamptz NOT NULL,
    -- The current version of a type is the one with the latest effective_at not after now.
    effective_at timestamptz NOT NULL,
    -- Who published it (the operator principal, or the service itself for its default texts).
    published_by text NOT NULL,
    -- A version string is never reused for a type.
    CONSTRAINT versions_type_version_key UNIQUE (type, version)
);

-- legal.current: newest in effect per type; legal.history: by effective_at.
CREATE INDEX versions_by_effective_at ON versions (type, effective_at DESC, id DESC);
