-- The id an account will have, given at sign-in before the account exists: Supabase Auth clients
-- need a user id from the first sign-in, and it must stay the user's id once eligibility is
-- confirmed. The first open session of an Apple id without an account holds it; later sessions
-- of that Apple id copy it, and creating the account uses it.
ALTER TABLE sessions ADD COLUMN account_id uuid;

-- An operator's read-only view of the users on the default search_path (`public.users`), so a
-- plain `psql "$DATABASE_URL" -c "SELECT … FROM users …"` (seed 004's check) resolves without
-- setting search_path. No service reads it: each still reads only its own schema. Writes are
-- refused with a clear error instead of reaching accounts.users behind Accounts' back.
-- Made only for the service's own schema (`accounts`), not for the throwaway schemas tests run
-- the migrations in side by side.
DO $do$
BEGIN
    IF current_schema() = 'accounts' THEN
        CREATE VIEW public.users AS
            SELECT id, email, name, username, state, eligibility_confirmed_at, eligibility_rules_version,
                   tos_version, tos_accepted_at, created_at
            FROM accounts.users;
        COMMENT ON VIEW public.users IS 'Read-only operator view of accounts.users (owned by the Accounts service).';
        CREATE FUNCTION accounts.users_view_is_read_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            RAISE EXCEPTION 'public.users is a read-only view of accounts.users: change users through the Accounts service'
                USING ERRCODE = 'read_only_sql_transaction';
        END
        $fn$;
        CREATE TRIGGER users_read_only INSTEAD OF INSERT OR UPDATE OR DELETE ON public.users
            FOR EACH ROW EXECUTE FUNCTION accounts.users_view_is_read_only();
    END IF;
END
$do$;
