# Sourced by the Accounts statement benchmarks (consent-keys.sh, batch-parts.sh):
#   scratch_accounts SCHEMA USERS [EXTRA_MIGRATION…]
# makes SCHEMA anew from Accounts' own 01xx migrations (and the extra files, in order) on
# $DATABASE_URL, with USERS users whose ids are 00000000-0000-4000-8000-<n in hex>, n = 1…USERS.
scratch_accounts() {
  local schema=$1 users=$2; shift 2
  local migrations root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  migrations=$root/Services/Accounts/Service/Migrations
  psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >/dev/null
  for file in $(ls "$migrations"/01*.sql) "$@"; do
    PGOPTIONS="${PGOPTIONS:-} -c search_path=$schema,public" psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 -f "$file" >/dev/null
  done
  psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
INSERT INTO $schema.users (id, apple_id, state, eligibility_confirmed_at, eligibility_rules_version, tos_version, tos_accepted_at)
SELECT ('00000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, 'apple-' || n, 'CA', now(), 'rules-1', 'v0', now()
FROM generate_series(1, $users) AS n;
VACUUM ANALYZE $schema.users;
SQL
}
