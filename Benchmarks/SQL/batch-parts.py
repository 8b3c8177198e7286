# The SQL of Accounts' batch statement for batch-parts.sh: its schema, a variant, the Swift source
# on stdin; prints a pgbench script whose batch is BATCH (30) consecutive users of USERS (100,000).
import os, re, sys
schema, variant, s = sys.argv[1], sys.argv[2], sys.stdin.read()
sql = s[s.index("sql: \"\"\"") + 8:s.index("                \"\"\")")]
sql = sql.replace("\\(users)", schema + ".users").replace("\\(schema)", schema)
sql = re.sub(r'\\\(StoredUser\.columns\(of: "(\w+)"\)\)',
             lambda m: ", ".join(m.group(1) + "." + c for c in ("id", "tos_version", "tos_accepted_at", "signup_receipt_id")), sql)
start, end = sql.index("WITH a AS ("), sql.index("), t AS (")
sql = sql[:start] + """WITH a AS (
    SELECT id AS user_id, 'v' || :v AS version, 'accounts.accept:' || gen_random_uuid() AS key, '203.0.113.9'::text AS client_ip,
        'PlayoffChallenge/1.0'::text AS user_agent, gen_random_uuid() AS record_id,
        row_number() OVER () AS n
    FROM """ + schema + """.users
    WHERE id BETWEEN ('00000000-0000-4000-8000-' || lpad(to_hex(:n::int), 12, '0'))::uuid
        AND ('00000000-0000-4000-8000-' || lpad(to_hex((:n + K_MINUS_1)::int), 12, '0'))::uuid
""" + sql[end:]
def cte(name, body):
    global sql
    i = sql.index(name + " AS (")
    # the CTE ends where the next one starts: "), <name> AS"
    m = re.compile(r"\), \w+ AS").search(sql, i)
    sql = sql[:i] + name + " AS (" + body + sql[m.start():]
v = set(variant.split("+"))
if "nolock" in v:
    sql = sql.replace("ORDER BY id FOR UPDATE", "")
if "nokeys" in v:
    cte("fresh", "SELECT DISTINCT user_id, key FROM a")
if "nostream" in v:
    cte("streamed", "SELECT 1")
if "noorder" in v:
    sql = sql.replace(schema + ".consent_order_key()", "pg_current_xact_id()")
if "nounion" in v:
    sql = sql[:sql.index("UNION ALL")]
if "barea" in v:
    a = sql[sql.index("WITH a AS ("):sql.index("), t AS (")] + ")"
    sql = a + " UPDATE " + schema + ".users u SET tos_version = a.version, tos_accepted_at = now(), tos_declined_at = NULL, signup_receipt_id = coalesce(u.signup_receipt_id, a.record_id) FROM a WHERE u.id = a.user_id" + (" RETURNING u.id, u.tos_version, u.tos_accepted_at, u.signup_receipt_id" if "ret" in v else "")
elif "bare" in v:
    sql = ("UPDATE " + schema + ".users SET tos_version = 'v' || :v, tos_accepted_at = now(), tos_declined_at = NULL "
           "WHERE id BETWEEN ('00000000-0000-4000-8000-' || lpad(to_hex(:n::int), 12, '0'))::uuid "
           "AND ('00000000-0000-4000-8000-' || lpad(to_hex((:n + K_MINUS_1)::int), 12, '0'))::uuid")
K = int(os.environ.get("BATCH", "30"))
sql=sql.replace("K_MINUS_1", str(K-1))
print(("\\set n random(1, N_MAX)\n\\set v random(1, 1000000)\n" + " ".join(line.strip() for line in sql.splitlines()) + ";").replace("N_MAX", str(int(os.environ.get("USERS", "100000"))-K+1)))
