-- Documents per seed 002, plus owner, declared length, committed bytes, SHA-256 and the state of
-- the bytes. The bytes are one PostgreSQL large object per document (lo_oid), created with the
-- row and unlinked in the same transaction that deletes it.
-- Runs with search_path set to the service's schema (documents).
CREATE TABLE documents (
    id uuid PRIMARY KEY,
    owner_id uuid NOT NULL,
    type text NOT NULL CHECK (type IN ('highlight_video', 'transcript', 'resume', 'rec_letter', 'questionnaire', 'stats_sheet')),
    title text NOT NULL CHECK (title <> '' AND char_length(title) <= 500),
    description text CHECK (char_length(description) <= 10000),
    -- Assigned by the service: documents/<id>/<file name>; always contains '/'.
    file_url text NOT NULL UNIQUE,
    file_type text,
    version integer NOT NULL CHECK (version >= 1),
    school_id text,
    created_at timestamptz NOT NULL,
    length bigint NOT NULL CHECK (length >= 0),
    committed bigint NOT NULL DEFAULT 0 CHECK (committed >= 0 AND committed <= length),
    lo_oid bigint NOT NULL,
    sha256 text,
    state text NOT NULL CHECK (state IN ('uploading', 'available', 'missing')),
    possibly_corrupt boolean NOT NULL DEFAULT false,
    -- When the last chunk was committed (or the document created): unfinished uploads idle for
    -- longer than DOCUMENTS_UPLOAD_EXPIRY are swept away.
    updated_at timestamptz NOT NULL
);

-- Collections: one owner's documents newest first (created_at DESC, id DESC), keyset paginated.
CREATE INDEX documents_collection ON documents (owner_id, created_at DESC, id DESC);
CREATE INDEX documents_unfinished ON documents (updated_at) WHERE state = 'uploading';

-- Share links: only the SHA-256 (hex) of the token is stored. They die with their document.
CREATE TABLE share_links (
    id uuid PRIMARY KEY,
    document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    token_sha256 text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    max_uses integer CHECK (max_uses >= 1),
    uses integer NOT NULL DEFAULT 0,
    revoked_at timestamptz
);
CREATE INDEX share_links_document ON share_links (document_id, created_at);

-- Each use of a link (its id is the read grant it gave), visible to the owner.
CREATE TABLE share_link_uses (
    id uuid PRIMARY KEY,
    link_id uuid NOT NULL REFERENCES share_links (id) ON DELETE CASCADE,
    used_at timestamptz NOT NULL,
    client_ip text
);
CREATE INDEX share_link_uses_link ON share_link_uses (link_id, used_at);

-- What each account.deleted removed (applied exactly once with the event consumer's cursor).
CREATE TABLE account_cleanups (
    user_id uuid PRIMARY KEY,
    deleted_at timestamptz NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    documents integer NOT NULL,
    bytes bigint NOT NULL,
    share_links integer NOT NULL
);
