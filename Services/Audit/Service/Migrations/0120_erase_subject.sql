-- Erasure as the one change the runtime role may make to the evidence. The runtime role may only
-- INSERT and SELECT subjects, records, erasures, checkpoints and legal_versions (ServiceKit's
-- ServiceName.appendOnlyTables); this function, owned by the schema's owner and run with its
-- rights, does what an erasure must and nothing more: the subject row (the user id and the HMAC
-- secret) goes, the raw IP, user agent and idempotency hash of its records are cleared, and the
-- erasure is logged. The records' hashed columns are left as they were, so every chain still
-- verifies. Returns how many records lost their personal data; 0 for an unknown or already
-- erased user (no row is touched then).
--
-- search_path is pinned (names below are qualified anyway): a caller cannot put a table or
-- operator of its own in front of the owner's.
CREATE FUNCTION erase_subject(target uuid) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    erased_pseudonym uuid;
    erased integer;
BEGIN
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
-- Functions are executable by PUBLIC unless revoked; this one only by whom the owner grants it
-- (the runtime role, ServiceRoles.runtimeGrants).
REVOKE EXECUTE ON FUNCTION erase_subject(uuid) FROM PUBLIC;
