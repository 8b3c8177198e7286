#!/usr/bin/env bash
# Audit's subject look-up per batch, alone: the statement as it was (every user offered to the
# INSERT … ON CONFLICT DO NOTHING) against the one in BatchWriter.swift now (the known users found
# first, only the others offered), on 20,000 existing subjects, 17 users per batch (what the
# gateway benchmark's batches carry), one pgbench client, prepared statements, autocommit.
# `base` only draws the batch's users: subtract it from the other two.
#   DATABASE_URL=… Benchmarks/SQL/subject-upsert.sh [rounds] [seconds]
# Prints each round's latency and the medians. Makes and drops the schema `subjbench`.
set -euo pipefail
rounds=${1:-3}; seconds=${2:-5}
: "${DATABASE_URL:?set DATABASE_URL (deploy/pg start prints it)}"
export PGOPTIONS="-c client_min_messages=warning"
dir=$(mktemp -d); trap 'rm -rf "$dir"; psql "$DATABASE_URL" -qX -c "DROP SCHEMA IF EXISTS subjbench CASCADE" >/dev/null 2>&1' EXIT
psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
DROP SCHEMA IF EXISTS subjbench CASCADE;
CREATE SCHEMA subjbench;
-- As in Services/Audit/Service/Migrations/0100_audit.sql.
CREATE TABLE subjbench.subjects (
    user_id uuid PRIMARY KEY,
    pseudonym uuid NOT NULL UNIQUE,
    secret bytea NOT NULL CHECK (length(secret) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO subjbench.subjects (user_id, pseudonym, secret)
SELECT gen_random_uuid(), gen_random_uuid(), uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) FROM generate_series(1, 20000);
CREATE TABLE subjbench.ids AS SELECT row_number() OVER () AS n, user_id FROM subjbench.subjects;
CREATE INDEX ON subjbench.ids (n);
ANALYZE subjbench.subjects; ANALYZE subjbench.ids;
SQL
draw='\set a random(1, 19980)
SELECT array_agg(user_id)::text AS arr FROM subjbench.ids WHERE n BETWEEN :a AND :a + 16 \gset'
printf '%s\n' "$draw" > "$dir/base.pgb"
printf '%s\n%s\n' "$draw" "WITH input AS (SELECT unnest(:arr::uuid[]) AS user_id), inserted AS (
  INSERT INTO subjbench.subjects (user_id, pseudonym, secret)
  SELECT user_id, gen_random_uuid(), uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) FROM input
  ORDER BY user_id ON CONFLICT (user_id) DO NOTHING RETURNING user_id, pseudonym, secret)
SELECT user_id, pseudonym, secret FROM inserted UNION ALL
SELECT s.user_id, s.pseudonym, s.secret FROM subjbench.subjects s JOIN input i USING (user_id);" > "$dir/before.pgb"
printf '%s\n%s\n' "$draw" "WITH input AS (SELECT unnest(:arr::uuid[]) AS user_id),
known AS (SELECT s.user_id, s.pseudonym, s.secret FROM subjbench.subjects s JOIN input i USING (user_id)),
inserted AS (
  INSERT INTO subjbench.subjects (user_id, pseudonym, secret)
  SELECT user_id, gen_random_uuid(), uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) FROM input
  WHERE user_id NOT IN (SELECT user_id FROM known)
  ORDER BY user_id ON CONFLICT (user_id) DO NOTHING RETURNING user_id, pseudonym, secret)
SELECT user_id, pseudonym, secret FROM inserted UNION ALL SELECT user_id, pseudonym, secret FROM known;" > "$dir/after.pgb"
declare -A all
for r in $(seq 1 "$rounds"); do
  for v in base before after; do
    ms=$(pgbench -n -M prepared -c 1 -T "$seconds" -f "$dir/$v.pgb" "$DATABASE_URL" 2>&1 | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
    echo "round $r: $v ${ms} ms"
    all[$v]+="$ms "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
b=$(echo "${all[base]}" | median); x=$(echo "${all[before]}" | median); y=$(echo "${all[after]}" | median)
awk -v b="$b" -v x="$x" -v y="$y" 'BEGIN { printf "median per batch of 17, draw subtracted: before %.3f ms, after %.3f ms (%.2fx)\n", x-b, y-b, (x-b)/(y-b) }'
