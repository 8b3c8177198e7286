-- The backlog Accounts counts every second (ConsentBacklog): the stream's rows, counted up to
-- `count_limit`, and when the first in stream order was written, both by the (xid, id) index like
-- the functions of 0200. `count(*)` over the table read the whole heap every second, and the heap
-- of a queue is mostly dead rows: about 2 µs an act under `compass load`, growing with every row
-- Audit had chained since the last vacuum. By the index a count reads the live entries (a read that
-- meets a dead one marks it, so the next count skips it) and stops at the limit, which is all the
-- backpressure needs to know.
CREATE FUNCTION consents_backlog(count_limit int)
RETURNS TABLE (entries bigint, oldest timestamptz)
LANGUAGE plpgsql STABLE
SET search_path FROM CURRENT SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    RETURN QUERY
    SELECT (SELECT count(*) FROM (SELECT 1 FROM consent_outbox o ORDER BY o.xid, o.id LIMIT count_limit) r),
        (SELECT o.created_at FROM consent_outbox o ORDER BY o.xid, o.id LIMIT 1);
END
$$;
