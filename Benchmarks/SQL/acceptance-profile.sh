#!/usr/bin/env bash
# Where PostgreSQL's work per acceptance goes in the gateway benchmark: runs
# Benchmarks/GatewayBench/bench.py (its arguments follow) on a cluster of its own with
# pg_stat_statements loaded, resets the statistics once the users are made (when bench.py creates
# `bench_acceptances`), and prints, per acceptance (an act in accounts.consent_outbox), each
# statement's execution time, calls and WAL bytes; rows inserted, updated (HOT or not) and deleted
# per table; index entries written (a row inserted, or updated other than HOT, is an entry in each
# of its table's indexes); WAL bytes and commits in all, and those of pgbench's own statements,
# which run on the same cluster in the same run. Needs the release binaries:
#   GATEWAY_CHECKS_BIN=<dir> Benchmarks/SQL/acceptance-profile.sh [--dir D] [--set NAME=VALUE]… --users 20000 --rounds 2 --slices 2
# (--set adds a server setting to the cluster's postgresql.conf, e.g. --set autovacuum=off, to see
# what a setting changes side by side.)
# Run it under `flock /work/notes/bench.lock`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pgdir="$root/.local/pg-profile"
settings=()
while [ $# -gt 0 ]; do
  case $1 in
    --dir) pgdir=$2; shift 2 ;;
    --set) settings+=("$2"); shift 2 ;;
    *) break ;;
  esac
done
: "${GATEWAY_CHECKS_BIN:?set GATEWAY_CHECKS_BIN to the folder of the release binaries}"
cd "$root"
eval "$(deploy/pg start --fresh --dir "$pgdir")"
echo "shared_preload_libraries = 'pg_stat_statements'" >>"$COMPASS_PG_DIR/data/postgresql.conf"
echo "pg_stat_statements.max = 10000" >>"$COMPASS_PG_DIR/data/postgresql.conf"
for setting in "${settings[@]}"; do echo "${setting%%=*} = '${setting#*=}'" >>"$COMPASS_PG_DIR/data/postgresql.conf"; done
deploy/pg restart --dir "$pgdir" >/dev/null
export DATABASE_URL COMPASS_PG_DIR
trap 'deploy/pg stop --dir "$pgdir" >/dev/null 2>&1 || true' EXIT
admin=${DATABASE_URL%/*}/postgres
out=$(mktemp -d)
.local/py/checks/bin/python Benchmarks/GatewayBench/bench.py "$@" >"$out/bench.txt" 2>&1 &
bench=$!
# (Each step may fail, and must not stop the next: the cluster holds the bench lock's descriptor.)
trap 'kill "$bench" 2>/dev/null || true; deploy/pg stop --dir "$pgdir" >/dev/null 2>&1 || true' EXIT

# The benchmark's database, once its users are made.
db=""
while kill -0 "$bench" 2>/dev/null && [ -z "$db" ]; do
  for name in $(psql -qAtX "$admin" -c "SELECT datname FROM pg_database WHERE datname LIKE 'pytest_%'"); do
    if [ "$(psql -qAtX "${DATABASE_URL%/*}/$name" -c "SELECT to_regclass('public.bench_acceptances') IS NOT NULL" 2>/dev/null)" = t ]; then
      db=$name
    fi
  done
  sleep 0.2
done
[ -n "$db" ] || { cat "$out/bench.txt"; exit 1; }
url=${DATABASE_URL%/*}/$db
psql -qAtX "$url" -c "CREATE EXTENSION pg_stat_statements" >/dev/null
psql -qAtX "$url" -c "SELECT pg_stat_statements_reset(), pg_stat_reset(), pg_stat_reset_shared('wal')" >/dev/null
psql -qAtX "$url" -c "SELECT pg_current_wal_lsn()" >"$out/lsn0"

# Snapshots until the database goes (bench.py drops it when it ends); the last one counts.
snapshot() {
  psql -qAtX -F $'\t' "$url" >"$out/snap.tmp" 2>/dev/null <<'SQL' && mv "$out/snap.tmp" "$out/snap"
SELECT 'acts', coalesce(sum(n_tup_ins), 0) FROM pg_stat_all_tables WHERE relname = 'consent_outbox';
SELECT 'lsn', pg_current_wal_lsn();
SELECT 'commits', xact_commit FROM pg_stat_database WHERE datname = current_database();
SELECT 'walstats', wal_records, wal_fpi, wal_bytes, wal_write, wal_sync FROM pg_stat_wal;
SELECT 'table', schemaname || '.' || relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del,
    (SELECT count(*) FROM pg_index i WHERE i.indrelid = t.relid), autovacuum_count, autoanalyze_count
FROM pg_stat_all_tables t WHERE schemaname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    AND n_tup_ins + n_tup_upd + n_tup_del > 0;
SELECT 'stmt', calls, total_exec_time, total_plan_time, rows, wal_bytes, regexp_replace(query, '\s+', ' ', 'g')
FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY total_exec_time DESC;
SQL
}
while kill -0 "$bench" 2>/dev/null; do snapshot || true; sleep 1; done
wait "$bench" || { cat "$out/bench.txt"; exit 1; }
cat "$out/bench.txt"

python3 - "$out" <<'PY'
import sys, pathlib
out = pathlib.Path(sys.argv[1])
lsn0 = out.joinpath("lsn0").read_text().strip()
rows = [line.split("\t") for line in out.joinpath("snap").read_text().splitlines() if line]
def lsn(text):
    high, low = text.split("/")
    return (int(high, 16) << 32) + int(low, 16)
values = {r[0]: r[1:] for r in rows if r[0] in ("acts", "lsn", "commits", "walstats")}
acts = int(values["acts"][0])
wal = lsn(values["lsn"][0]) - lsn(lsn0)
stmts = [r[1:] for r in rows if r[0] == "stmt"]
pgbench = [s for s in stmts if "bench_acceptances" in s[5] or "bench_ceiling" in s[5] or s[5] in ("END", "BEGIN")]
pg_wal = sum(float(s[4]) for s in pgbench)
print(f"\nprofile: {acts:,} acts through the consent stream since the users were made")
print(f"WAL: {wal:,} bytes in all, pgbench's statements {pg_wal:,.0f}; the rest {(wal - pg_wal) / acts:,.0f} bytes per act")
print(f"commits: {int(values['commits'][0]):,} in the database (pgbench's among them); WAL records/FPI/bytes/writes/syncs: {' / '.join(values['walstats'])}")
print("\nper act: table, inserted, updated (of them HOT), deleted, indexes, index entries, autovacuums/analyzes")
for r in rows:
    if r[0] != "table" or "bench_" in r[1]:
        continue
    name, ins, upd, hot, dele, indexes, vac, ana = r[1], *map(int, r[2:])
    entries = (ins + upd - hot) * indexes
    print(f"  {name:34} {ins / acts:6.3f} {upd / acts:6.3f} ({hot / acts:5.3f}) {dele / acts:6.3f}  {indexes}  {entries / acts:6.2f}  {vac}/{ana}")
total = sum(float(s[1]) for s in stmts if s not in pgbench)
print(f"\nstatements (not pgbench's): {total * 1000 / acts:.1f} µs execution per act; per statement: µs/act, calls/act, rows/call, WAL bytes/act")
for s in stmts:
    if s in pgbench:
        continue
    calls, ms, plan, nrows, walb, query = int(s[0]), float(s[1]), float(s[2]), int(s[3]), float(s[4]), s[5]
    if ms * 1000 / acts < 0.05:
        continue
    print(f"  {ms * 1000 / acts:7.2f} {calls / acts:6.3f} {nrows / max(calls, 1):7.1f} {walb / acts:7.0f}  {query[:150]}")
PY
rm -rf "$out"
