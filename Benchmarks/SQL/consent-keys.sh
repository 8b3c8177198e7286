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
git -C "$root" show 3c3efc4:Services/Accounts/Service/Migrations/0190_consent_keys_on_users.sql >"$dir/0190.sql"
. "$root/Benchmarks/SQL/scratch-accounts.sh"
scratch_accounts kba 20000
scratch_accounts kbb 20000 "$dir/0190.sql"
# The statement of each side, with its input drawn from 30 consecutive users.
for pair in "kba 191852a" "kbb 3c3efc4"; do
  set -- $pair
  git -C "$root" show "$2:Services/Accounts/Service/Store/AccountsStore+TermsBatch.swift" \
    | USERS=20000 python3 "$root/Benchmarks/SQL/batch-parts.py" "$1" full >"$dir/$1.sql"
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
