#!/usr/bin/env bash
# What the idempotency key's unique index costs Audit's record insert on a big table: rows shaped
# as audit.records (its columns and indexes: the primary key, record_id, (subject, recorded_ms),
# and the key's hash), inserted 1,000 a statement, one client, on a table preloaded with ROWS rows
# (subjects drawn from 900,000) in three variants: the hash as text (64 hex characters, as it is),
# as a uuid (its first 16 bytes), and no index on it. A checkpoint before each run, variants
# alternating by round.
#   DATABASE_URL=… Benchmarks/SQL/record-indexes.sh [rows] [rounds] [seconds]
# Prints the index sizes and each round's wall time per row. Makes and drops the schema `rix`.
set -euo pipefail
rows=${1:-2000000}; rounds=${2:-3}; seconds=${3:-15}
: "${DATABASE_URL:?set DATABASE_URL}"
record_id="(lpad(to_hex(p), 12, '0') || '7000800000000000' || lpad(to_hex(p % 65536), 4, '0'))::uuid"
rest="'terms_of_service', 'v1', repeat('d', 64), 'accept', p, '198.51.100.7', 'PlayoffChallenge/1.0', sha256(p::text::bytea), sha256(('u' || p)::bytea)"
hashes="sha256(('p' || p)::bytea), sha256(('h' || p)::bytea)"
psql -qX "$DATABASE_URL" -v ON_ERROR_STOP=1 <<SQL
DROP SCHEMA IF EXISTS rix CASCADE;
CREATE SCHEMA rix;
CREATE TABLE rix.a (chain int NOT NULL, position bigint NOT NULL, record_id uuid NOT NULL, subject uuid NOT NULL,
  document_type text NOT NULL, version text NOT NULL, digest text NOT NULL, action text NOT NULL, recorded_ms bigint NOT NULL,
  client_ip text, user_agent text, ip_hmac bytea, ua_hmac bytea, idem text, prev_hash bytea NOT NULL, hash bytea NOT NULL);
CREATE TABLE rix.b (LIKE rix.a);
ALTER TABLE rix.b ALTER COLUMN idem TYPE uuid USING NULL;
CREATE TABLE rix.c (LIKE rix.a);
CREATE SEQUENCE rix.pos;
INSERT INTO rix.a SELECT 1, p, $record_id, md5((1 + (hashint8(p) & 2147483647) % 900000)::text)::uuid, $rest,
  encode(sha256(('i' || p)::bytea), 'hex'), $hashes
FROM generate_series(1, $rows) p;
INSERT INTO rix.b SELECT chain, position, record_id, subject, document_type, version, digest, action, recorded_ms, client_ip,
  user_agent, ip_hmac, ua_hmac, substr(idem, 1, 32)::uuid, prev_hash, hash FROM rix.a;
INSERT INTO rix.c SELECT * FROM rix.a;
SELECT setval('rix.pos', $rows + 1);
SQL
for t in a b c; do
  psql -qX "$DATABASE_URL" -v ON_ERROR_STOP=1 -c "ALTER TABLE rix.$t ADD PRIMARY KEY (chain, position)" \
    -c "CREATE UNIQUE INDEX ON rix.$t (record_id)" -c "CREATE INDEX ON rix.$t (subject, recorded_ms DESC)"
  if [ $t != c ]; then psql -qX "$DATABASE_URL" -c "CREATE UNIQUE INDEX ON rix.$t (idem) WHERE idem IS NOT NULL"; fi
  psql -qX "$DATABASE_URL" -c "VACUUM ANALYZE rix.$t"
done
psql -qAtX "$DATABASE_URL" -c "SELECT relname, pg_size_pretty(pg_relation_size(oid)) FROM pg_class
  WHERE relnamespace = 'rix'::regnamespace AND relkind = 'i' ORDER BY 1"
scripts=$(mktemp -d)
trap 'rm -rf "$scripts"; psql -qX "$DATABASE_URL" -c "DROP SCHEMA IF EXISTS rix CASCADE" >/dev/null 2>&1 || true' EXIT
for t in a b c; do
  idem="encode(sha256(random()::text::bytea), 'hex')"
  [ $t = b ] && idem="substr(encode(sha256(random()::text::bytea), 'hex'), 1, 32)::uuid"
  cat >"$scripts/$t.sql" <<SQL
INSERT INTO rix.$t SELECT 1, p, $record_id, md5((1 + (random() * 899999)::int)::text)::uuid, $rest, $idem, $hashes
FROM (SELECT nextval('rix.pos') AS p FROM generate_series(1, 1000)) n;
SQL
done
declare -A names=([a]="hash as text" [b]="hash as uuid" [c]="no index on it")
for round in $(seq 1 "$rounds"); do
  for t in a b c; do
    psql -qX "$DATABASE_URL" -c "CHECKPOINT" >/dev/null
    tps=$(pgbench -n -f "$scripts/$t.sql" -T "$seconds" -c 1 "$DATABASE_URL" 2>&1 | grep -oP 'tps = \K[0-9.]+' | head -1)
    echo "round $round, ${names[$t]}: $(python3 -c "print(f'{1e3 / $tps:.1f}')") µs wall a row"
  done
done
