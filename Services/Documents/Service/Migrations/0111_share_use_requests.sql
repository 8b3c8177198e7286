-- A share link's use is one download or one playback: the first request counts, and the same
-- client's byte-range requests while the use is active (each within the grant lifetime of the
-- one before) add to it for free. The log keeps how many requests each use served and when the
-- last one came; the grant lives until last_request_at plus the grant lifetime.
ALTER TABLE share_link_uses
    ADD COLUMN requests integer NOT NULL DEFAULT 1 CHECK (requests >= 1),
    ADD COLUMN last_request_at timestamptz;
UPDATE share_link_uses SET last_request_at = used_at;
ALTER TABLE share_link_uses ALTER COLUMN last_request_at SET NOT NULL;
CREATE INDEX share_link_uses_client ON share_link_uses (link_id, client_ip, last_request_at DESC);
