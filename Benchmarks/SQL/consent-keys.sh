#!/usr/bin/env bash
# What keeping an act's idempotency key costs Accounts' batch statement: the statement as it is
# (a row per key in `consent_keys`, two indexes) against the same statement keeping the keys on
# the user's row (`users.consent_keys` jsonb, tried in 3c3efc4 and dropped), each on Accounts' own
# migrations in a scratch schema (`kba`, `kbb`; dropped afterwards) with 20,000 users, batches of
# 30 users (the gateway benchmark's) with new keys, pgbench -M prepared, one client, the two
# alternating in rounds. The batch's users come from a range of ids, in both.
#   DATABASE_URL=… Benchmarks/SQL/consent-keys.sh [rounds] [seconds]
# Prints each round's latency per batch and the medians.
set -euo pipefail
rounds=${1:-3}; seconds=${2:-10}
: "${DATABASE_URL:?set DATABASE_URL (deploy/pg start prints it)}"
root=$(cd "$(dirname "$0")/../.." && pwd)
export PGOPTIONS="-c client_min_messages=warning"
dir=$(mktemp -d)
trap 'rm -rf "$dir"; psql "$DATABASE_URL" -qX -c "DROP SCHEMA IF EXISTS kba, kbb CASCADE" >/dev/null 2>&1 || true' EXIT
migrations=$root/Services/Accounts/Service/Migrations
git -C "$root" show 3c3efc4:Services/Accounts/Service/Migrations/0190_consent_keys_on_users.sql >"$dir/0190.sql"
id() { echo "('00000000-0000-4000-8000-' || lpad(to_hex($1), 12, '0'))::uuid"; }
for schema in kba kbb; do
  psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >/dev/null
  files=$(ls "$migrations"/01*.sql)
  [ "$schema" = kbb ] && files="$files $dir/0190.sql"
  for file in $files; do
    PGOPTIONS="$PGOPTIONS -c search_path=$schema,public" psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 -f "$file" >/dev/null
  done
  psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
INSERT INTO $schema.users (id, apple_id, state, eligibility_confirmed_at, eligibility_rules_version, tos_version, tos_accepted_at)
SELECT $(id n), 'apple-' || n, 'CA', now(), 'rules-1', 'v0', now() FROM generate_series(1, 20000) AS n;
VACUUM ANALYZE $schema.users;
SQL
done
# The statement of each side, with its input drawn from 30 consecutive users.
cat >"$dir/statement.py" <<'PY'
import sys
schema, s = sys.argv[1], sys.stdin.read()
sql = s[s.index("sql: \"\"\"") + 8:s.index("                \"\"\")")]
sql = sql.replace("\\(users)", schema + ".users").replace("\\(schema)", schema)
sql = sql.replace("\\(StoredUser.columns(of: \"u\"))", "u.id, u.tos_version, u.tos_accepted_at, u.signup_receipt_id")
start, end = sql.index("WITH a AS ("), sql.index("), t AS (")
sql = sql[:start] + """WITH a AS (
    SELECT id AS user_id, 'v' || :v AS version, 'accounts.accept:' || gen_random_uuid() AS key, '203.0.113.9'::text AS client_ip,
        'PlayoffChallenge/1.0'::text AS user_agent, gen_random_uuid() AS record_id, row_number() OVER () AS n
    FROM """ + schema + """.users
    WHERE id BETWEEN ('00000000-0000-4000-8000-' || lpad(to_hex(:n::int), 12, '0'))::uuid
        AND ('00000000-0000-4000-8000-' || lpad(to_hex((:n + 29)::int), 12, '0'))::uuid
""" + sql[end:]
print("\\set n random(1, 19971)\n\\set v random(1, 1000000)\n" + " ".join(line.strip() for line in sql.splitlines()) + ";")
PY
for pair in "kba 191852a" "kbb 3c3efc4"; do
  set -- $pair
  git -C "$root" show "$2:Services/Accounts/Service/Store/AccountsStore+TermsBatch.swift" | python3 "$dir/statement.py" "$1" >"$dir/$1.sql"
done
declare -A latencies
for round in $(seq 1 "$rounds"); do
  line="round $round:"
  for side in kba kbb; do
    ms=$(pgbench -n -M prepared -f "$dir/$side.sql" -c 1 -T "$seconds" "$DATABASE_URL" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
    latencies[$side]="${latencies[$side]:-} $ms"
    line="$line $side $ms ms"
  done
  echo "$line"
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
a=$(echo "${latencies[kba]}" | median); b=$(echo "${latencies[kbb]}" | median)
for side in kba kbb; do
  psql "$DATABASE_URL" -qAtX -c "SELECT '$side users: ' || n_tup_upd || ' updated, ' || n_tup_hot_upd || ' HOT' FROM pg_stat_user_tables WHERE schemaname = '$side' AND relname = 'users'"
done
echo "median per batch of 30: keys in consent_keys $a ms, keys on the user's row $b ms ($(python3 -c "print(f'{$b / $a:.2f}')")x)"
