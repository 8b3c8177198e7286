#!/usr/bin/env bash
# What the erasure lock costs Audit's one-statement batch (Writer/BatchAppend.swift): the append
# alone in one pipeline, as it was, against the pipeline it is now (the chain's head locked, then
# the batch's users, `pg_advisory_xact_lock_shared` each, then the same append), on 20,000
# subjects and a records table with audit.records' columns and indexes. Batches of 17 users (the
# gateway benchmark's) and 1,000 (AUDIT_MAX_BATCH, compass load's record_batch), each client on a
# chain of its own (Audit's writers), prepared statements. `base` only draws the batch's users:
# subtract it from the other two.
#   DATABASE_URL=… Benchmarks/SQL/subject-lock.sh [rounds] [seconds] [clients]
# Prints each round's latency and the medians. Makes and drops the schema `lockbench`.
set -euo pipefail
rounds=${1:-3}; seconds=${2:-5}; clients=${3:-1}
: "${DATABASE_URL:?set DATABASE_URL (deploy/pg start prints it)}"
export PGOPTIONS="-c client_min_messages=warning"
dir=$(mktemp -d); trap 'rm -rf "$dir"; psql "$DATABASE_URL" -qX -c "DROP SCHEMA IF EXISTS lockbench CASCADE" >/dev/null 2>&1' EXIT
psql "$DATABASE_URL" -qX -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
DROP SCHEMA IF EXISTS lockbench CASCADE;
CREATE SCHEMA lockbench;
-- As in Services/Audit/Service/Migrations/0100_audit.sql.
CREATE TABLE lockbench.subjects (
    user_id uuid PRIMARY KEY,
    pseudonym uuid NOT NULL UNIQUE,
    secret bytea NOT NULL CHECK (length(secret) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE lockbench.chains (chain integer PRIMARY KEY, head_position bigint NOT NULL DEFAULT 0);
INSERT INTO lockbench.chains (chain) SELECT generate_series(1, 64);
CREATE TABLE lockbench.records (
    chain integer NOT NULL, position bigint NOT NULL, record_id uuid NOT NULL, subject uuid NOT NULL,
    document_type text NOT NULL, version text NOT NULL, digest text NOT NULL, action text NOT NULL,
    recorded_ms bigint NOT NULL, client_ip text, user_agent text, ip_hmac bytea, ua_hmac bytea,
    idempotency_hash text, prev_hash bytea NOT NULL, hash bytea NOT NULL, PRIMARY KEY (chain, position)
);
CREATE UNIQUE INDEX ON lockbench.records (record_id);
CREATE UNIQUE INDEX ON lockbench.records (idempotency_hash) WHERE idempotency_hash IS NOT NULL;
CREATE INDEX ON lockbench.records (subject, recorded_ms DESC);
CREATE SEQUENCE lockbench.positions;
INSERT INTO lockbench.subjects (user_id, pseudonym, secret)
SELECT gen_random_uuid(), gen_random_uuid(), uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) FROM generate_series(1, 20000);
CREATE TABLE lockbench.ids AS SELECT row_number() OVER () AS n, user_id, pseudonym FROM lockbench.subjects;
CREATE INDEX ON lockbench.ids (n);
ANALYZE lockbench.subjects; ANALYZE lockbench.ids;
SQL
cat > "$dir/append.sql" <<'SQL'
WITH moved AS (
  UPDATE lockbench.chains SET head_position = head_position + :size::bigint WHERE chain = :chain::int RETURNING chain
), checked AS (
  SELECT (SELECT count(*) FROM moved) = 1
    AND (SELECT count(*) FROM lockbench.subjects WHERE pseudonym = ANY(:pseudonyms::uuid[])) = :size::bigint AS ok
)
INSERT INTO lockbench.records (chain, position, record_id, subject, document_type, version, digest, action, recorded_ms,
  client_ip, user_agent, idempotency_hash, ip_hmac, ua_hmac, prev_hash, hash)
SELECT :chain::int, nextval('lockbench.positions'), gen_random_uuid(), p, 'terms_of_service', '1.0', 'd', 'accept', 0,
  '203.0.113.7', 'agent', gen_random_uuid()::text, '\x00', '\x00', '\x00', '\x00'
FROM unnest(:pseudonyms::uuid[]) p, checked WHERE checked.ok;
SQL
# BatchWriter.lockHead and BatchWriter.lockSubjects.
cat > "$dir/locks.sql" <<'SQL'
SELECT head_position FROM lockbench.chains WHERE chain = :chain::int FOR UPDATE;
SELECT count(pg_advisory_xact_lock_shared(hashtextextended('audit.subject:' || user_id::text, 0)))
FROM (SELECT DISTINCT unnest(:users::uuid[]) AS user_id ORDER BY 1) users;
SQL
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for size in 17 1000; do
  draw="\\set size $size
\\set a random(1, $((20000 - size)))
\\set b :a + :size - 1
\\set chain :client_id + 1
SELECT array_agg(user_id)::text AS users, array_agg(pseudonym)::text AS pseudonyms FROM lockbench.ids WHERE n BETWEEN :a::bigint AND :b::bigint \\gset"
  printf '%s\n' "$draw" > "$dir/base.pgb"
  { printf '%s\n\\startpipeline\n' "$draw"; cat "$dir/append.sql"; echo '\endpipeline'; } > "$dir/before.pgb"
  { printf '%s\n\\startpipeline\n' "$draw"; cat "$dir/locks.sql" "$dir/append.sql"; echo '\endpipeline'; } > "$dir/after.pgb"
  declare -A all=()
  for r in $(seq 1 "$rounds"); do
    for v in base before after; do
      out=$(pgbench -n -M prepared -c "$clients" -j "$clients" -T "$seconds" -f "$dir/$v.pgb" "$DATABASE_URL" 2>&1) ||
        { echo "$out" >&2; exit 1; }
      ms=$(echo "$out" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')
      echo "batch of $size, $clients client(s), round $r: $v ${ms} ms"
      all[$v]+="$ms "
    done
  done
  b=$(echo "${all[base]}" | median); x=$(echo "${all[before]}" | median); y=$(echo "${all[after]}" | median)
  awk -v n="$size" -v c="$clients" -v b="$b" -v x="$x" -v y="$y" 'BEGIN {
    printf "median per batch of %d, %d client(s), draw subtracted: append alone %.3f ms, with the locks %.3f ms (%.2fx, +%.1f us a record)\n",
      n, c, x-b, y-b, (y-b)/(x-b), (y-x)*1000/n }'
done
