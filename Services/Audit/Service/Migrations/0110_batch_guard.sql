-- The guard of a batch appended in one statement (BatchAppend.swift): the writer of a chain keeps
-- the chain's head and its subjects' pseudonyms and secrets from its last batch, and appends the
-- next batch with one INSERT that moves the head only from the head it knows. When that head has
-- moved or a subject has been erased since, this raises SQLSTATE CA001 and the statement, rolled
-- back whole, writes nothing; the writer then reads the head and subjects again and writes the
-- batch the two-round-trip way.
CREATE FUNCTION require_batch_state(ok boolean) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF ok IS NOT TRUE THEN
        RAISE EXCEPTION 'the chain head or a subject this batch was built on has changed'
            USING ERRCODE = 'CA001';
    END IF;
    RETURN true;
END
$$;
