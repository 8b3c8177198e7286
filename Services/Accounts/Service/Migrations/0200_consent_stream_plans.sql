-- The consent stream's page, its summary and its pruning run by the (xid, id) index whatever the
-- table's statistics say. The stream is a queue: Audit usually keeps up, so when autovacuum last
-- looked the table was nearly empty, and the planner then found a sequential scan and a sort
-- cheapest. A plan made from those statistics was kept while a backlog grew (an Audit outage, a
-- burst), and every page read and prune then scanned the whole table, dead rows included: a
-- catch-up slowed as the square of its backlog. Inside these functions the planner may not choose
-- a sequential scan, a bitmap scan or a sort, so only the index's range scan remains. PL/pgSQL,
-- not SQL: a SQL function with settings is not inlined and plans its query at every call (about a
-- third of a millisecond, at every page of a few acts when Audit keeps up), while PL/pgSQL keeps
-- each query's plan for the session, planned under these settings.

-- Up to `page_size` entries after (after_xid, after_id) that every reader may take now (`xid`
-- below the snapshot's xmin: see 0180), in (xid, id) order.
CREATE FUNCTION consents_page(after_xid xid8, after_id bigint, page_size int)
RETURNS TABLE (entry_xid bigint, entry_id bigint, entry_kind text, entry_user uuid, entry_record uuid, entry_document text,
    entry_version text, entry_action text, entry_key text, entry_ms bigint, entry_ip text, entry_agent text)
LANGUAGE plpgsql STABLE
SET search_path FROM CURRENT SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    RETURN QUERY
    SELECT o.xid::text::bigint, o.id, o.kind, o.user_id, o.record_id, o.document_type, o.version, o.action, o.idempotency_key,
        o.recorded_ms, o.client_ip, o.user_agent
    FROM consent_outbox o
    WHERE (o.xid, o.id) > (after_xid, after_id) AND o.xid < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY o.xid, o.id LIMIT page_size;
END
$$;

-- The last entry readable now, and how many readable entries follow (after_xid, after_id), counted
-- up to `count_limit`.
CREATE FUNCTION consents_summary(after_xid xid8, after_id bigint, count_limit int)
RETURNS TABLE (last_xid bigint, last_id bigint, readable bigint)
LANGUAGE plpgsql STABLE
SET search_path FROM CURRENT SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    RETURN QUERY
    SELECT l.xid::text::bigint, l.id,
        (SELECT count(*) FROM (SELECT 1 FROM consent_outbox o
            WHERE (o.xid, o.id) > (after_xid, after_id) AND o.xid < pg_snapshot_xmin(pg_current_snapshot())
            LIMIT count_limit) r)
    FROM (SELECT 1) one
    LEFT JOIN LATERAL (SELECT o.xid, o.id FROM consent_outbox o WHERE o.xid < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY o.xid DESC, o.id DESC LIMIT 1) l ON true;
END
$$;

-- Deletes the entries after (from_xid, from_id) up to and including (to_xid, to_id): Audit has
-- chained them. Returns how many.
CREATE FUNCTION consents_prune(from_xid xid8, from_id bigint, to_xid xid8, to_id bigint) RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
DECLARE
    deleted bigint;
BEGIN
    DELETE FROM consent_outbox o WHERE (o.xid, o.id) > (from_xid, from_id) AND (o.xid, o.id) <= (to_xid, to_id);
    GET DIAGNOSTICS deleted = ROW_COUNT;
    RETURN deleted;
END
$$;
