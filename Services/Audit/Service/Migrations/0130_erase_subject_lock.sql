-- Erasure and the chaining of a user's records exclude each other. An erasure that ran while the
-- consent follower was chaining a page for the same user (Accounts' own erase_subject call after
-- a deletion, or the account.deleted consumer) could delete the subject after the page had read it
-- and before the page committed: the page's record then kept its IP address and user agent under a
-- subject that no longer existed, and the stream's later erasure found no subject to clear
-- (DeletionTests, the decline racing a deletion). The page now takes a shared transaction lock per
-- user before it reads the subjects (ConsentPage.lockSubjects) and the erasure takes it
-- exclusively first: whichever commits second sees the other's rows.
CREATE OR REPLACE FUNCTION erase_subject(target uuid) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    erased_pseudonym uuid;
    erased integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('audit.subject:' || target::text, 0));
    DELETE FROM audit.subjects WHERE user_id = target RETURNING pseudonym INTO erased_pseudonym;
    IF erased_pseudonym IS NULL THEN
        RETURN 0;
    END IF;
    UPDATE audit.records SET client_ip = NULL, user_agent = NULL, idempotency_hash = NULL WHERE subject = erased_pseudonym;
    GET DIAGNOSTICS erased = ROW_COUNT;
    INSERT INTO audit.erasures (pseudonym, records) VALUES (erased_pseudonym, erased);
    RETURN erased;
END
$$;
REVOKE EXECUTE ON FUNCTION erase_subject(uuid) FROM PUBLIC;
