-- A user's idempotency keys of the last day move from their own table (a row, a primary-key entry
-- and an age-index entry per act, then a DELETE a day later) onto the user's row, which every act
-- updates anyway: `consent_keys` maps each key to the millisecond it was recorded at. Each act's
-- update drops the user's keys older than a day (consent_keys_with), so a retry within the day is
-- answered from the first call and writes nothing, as before; a key older than that may linger
-- until the user's next act, where it still answers its retry. The row's lock, taken before the
-- keys are read, orders two calls with the same key. No index covers the column, so the update
-- stays a HOT update. A deletion removes the row, and its keys with it.
ALTER TABLE users ADD COLUMN consent_keys jsonb NOT NULL DEFAULT '{}';

UPDATE users u SET consent_keys = k.keys
FROM (SELECT user_id, jsonb_object_agg(key, recorded_ms) AS keys FROM consent_keys GROUP BY user_id) k
WHERE u.id = k.user_id;

DROP TABLE consent_keys;

-- `kept` without its keys recorded more than a day before `now_ms`, with `added` (key → the
-- millisecond it is recorded at).
CREATE FUNCTION consent_keys_with(kept jsonb, added jsonb, now_ms bigint) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(
        (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(kept) e WHERE e.value::bigint >= now_ms - 86400000), '{}'::jsonb
    ) || added
$$;
