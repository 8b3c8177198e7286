#!/usr/bin/env bash
# What each part of Accounts' batch statement (AccountsStore+TermsBatch.swift) costs PostgreSQL:
# the statement as it is and variants with parts taken out, each on Accounts' own migrations in a
# scratch schema (abl0, abl1, …) with 100,000 users, batches of BATCH (default 30) consecutive users
# with new keys, pgbench -M prepared, one client, alternating by round. Prints the cluster's CPU per
# act (postmaster, backends and the ones gone) and pgbench's latency per batch.
#   DATABASE_URL=… COMPASS_PG_DIR=… [BATCH=30] Benchmarks/SQL/batch-parts.sh ROUNDS SECONDS VARIANT…
# A variant is `full` or parts joined by `+`: nokeys (no consent_keys row), nostream (no
# consent_outbox row), nolock (no FOR UPDATE), noorder (pg_current_xact_id() for the order key),
# nounion (no second SELECT of users not written), bare (a plain UPDATE of the batch's users),
# barea[+ret] (the UPDATE joined to the batch's input, with RETURNING). VARIANT@REV takes the
# statement as git revision REV has it (`full@HEAD full`: before and after a change of it). Run
# under the bench lock.
set -euo pipefail
rounds=$1; seconds=$2; shift 2; variants=("$@")
root=$(cd "$(dirname "$0")/../.." && pwd)
export PGOPTIONS="-c client_min_messages=warning"
dir=$(mktemp -d)
. "$root/Benchmarks/SQL/scratch-accounts.sh"
i=0; declare -A schema_of
for v in "${variants[@]}"; do
  s=abl$i; i=$((i+1)); schema_of[$v]=$s
  scratch_accounts "$s" 100000
  source=Services/Accounts/Service/Store/AccountsStore+TermsBatch.swift
  if [[ $v == *@* ]]; then git -C "$root" show "${v#*@}:$source"; else cat "$root/$source"; fi |
    python3 "$root/Benchmarks/SQL/batch-parts.py" "$s" "${v%@*}" > "$dir/$s.sql"
done
pm=$(head -1 "$COMPASS_PG_DIR"/data/postmaster.pid 2>/dev/null || head -1 "$COMPASS_PG_DIR"/postmaster.pid)
cpu() { # ticks of the postmaster and its children
  local t=0; for p in $pm $(ps -o pid= --ppid "$pm"); do
    [ -r /proc/$p/stat ] && t=$((t + $(awk '{print $14+$15+$16+$17}' /proc/$p/stat 2>/dev/null || echo 0))); done; echo $t; }
hz=$(getconf CLK_TCK)
for round in $(seq 1 "$rounds"); do
  line="round $round:"
  for v in "${variants[@]}"; do
    s=${schema_of[$v]}
    psql "$DATABASE_URL" -qX -c "CHECKPOINT" >/dev/null; sleep 0.5
    c0=$(cpu)
    out=$(pgbench -n -M prepared -f "$dir/$s.sql" -c 1 -T "$seconds" "$DATABASE_URL")
    sleep 0.5; c1=$(cpu)
    tx=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
    lat=$(echo "$out" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
    us=$(python3 -c "print(f'{($c1-$c0)/$hz*1e6/($tx*${BATCH:-30}):.1f}')")
    line="$line | $v ${us}us/act ${lat}ms"
  done
  echo "$line"
done
rm -rf "$dir"
for s in "${schema_of[@]}"; do psql "$DATABASE_URL" -qX -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null; done
