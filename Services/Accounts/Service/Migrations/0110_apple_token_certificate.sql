-- The deletion certificate a queued Apple token revocation belongs to: re-signed with the outcome
-- (revoked, or given up) when the revocation settles. NULL for tokens not queued by a deletion.
ALTER TABLE apple_tokens ADD COLUMN certificate_id uuid;
