-- Where each document's bytes are: `postgres` (the large object lo_oid) or `s3` (the
-- object object_key in the deployment's bucket). DOCUMENTS_STORAGE picks where new uploads go;
-- reads and deletions follow the row, so both kinds live side by side and a row can be moved
-- from one to the other while serving (copy the bytes, then switch storage and the location in
-- one UPDATE, queueing the old bytes for removal: an in-flight read of the old copy still finds it).
-- Idempotent: safe to run again by hand.
ALTER TABLE documents ADD COLUMN IF NOT EXISTS storage text NOT NULL DEFAULT 'postgres';
ALTER TABLE documents ADD COLUMN IF NOT EXISTS object_key text;
-- The S3 multipart upload of an unfinished s3 upload (null until its first part is sent).
ALTER TABLE documents ADD COLUMN IF NOT EXISTS multipart_upload_id text;
ALTER TABLE documents ALTER COLUMN lo_oid DROP NOT NULL;
ALTER TABLE documents DROP CONSTRAINT IF EXISTS documents_bytes_location;
ALTER TABLE documents ADD CONSTRAINT documents_bytes_location CHECK (
    (storage = 'postgres' AND lo_oid IS NOT NULL) OR (storage = 's3' AND object_key IS NOT NULL));
CREATE UNIQUE INDEX IF NOT EXISTS documents_object_key ON documents (object_key);

-- Chunks of an s3 upload acknowledged but not yet in an uploaded part: each append inserts its
-- chunk here in the transaction that advances `committed`; when they reach the part size they
-- are sent as one part and deleted in the transaction that records the part.
CREATE TABLE IF NOT EXISTS upload_staged_chunks (
    document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    start_offset bigint NOT NULL,
    bytes bytea NOT NULL,
    PRIMARY KEY (document_id, start_offset)
);

-- The parts of an s3 upload already in its multipart upload (CompleteMultipartUpload lists them).
CREATE TABLE IF NOT EXISTS upload_parts (
    document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    part_number integer NOT NULL CHECK (part_number BETWEEN 1 AND 10000),
    start_offset bigint NOT NULL,
    size bigint NOT NULL,
    etag text NOT NULL,
    PRIMARY KEY (document_id, part_number)
);

-- Objects (and unfinished multipart uploads) whose rows are gone, waiting to be deleted
-- (aborted) in the store: queued in the transaction that deletes the row, removed by a sweeper
-- that retries until the store answers. Never dropped.
CREATE TABLE IF NOT EXISTS object_removals (
    id bigserial PRIMARY KEY,
    object_key text NOT NULL,
    multipart_upload_id text,
    queued_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    last_error text
);
