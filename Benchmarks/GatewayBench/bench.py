"""Gateway benchmark: terms acceptances through `PUT /api/users/{id}/accept-tos` under wrk, beside
pgbench's one-INSERT-per-commit rate on the same cluster in the same run.

Each request is the whole path a real acceptance takes: the session token checked by Accounts
(`accounts.verify_session`), `accounts.accept_terms`, which records through Audit (group-committed,
answered only after commit) and stores the user's terms version. Usage (deploy/bench-gateway):
    bench.py [--seconds N] [--connections N] [--users N]
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Tests" / "GatewayPython"))
from stack import RATE_LIMITS_OFF, Stack  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=int, default=15)
parser.add_argument("--connections", type=int, default=64)
parser.add_argument("--users", type=int, default=200)
args = parser.parse_args()

stack = Stack()
try:
    _, terms = stack.request("GET", "/api/terms")
    users = [stack.signed_up_user() for _ in range(args.users)]
    lua = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    lua.write("local users = {\n" + ",\n".join(f'{{"{uid}", "{token}"}}' for uid, token in users) + "\n}\n")
    lua.write(f'local body = \'{{"tos_version":"{terms["version"]}"}}\'\n')
    lua.write("""local i = 0
request = function()
  i = i + 1
  local u = users[(i % #users) + 1]
  return wrk.format("PUT", "/api/users/" .. u[1] .. "/accept-tos",
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. u[2]}, body)
end
""")
    lua.close()
    # Warm-up, then the measured run.
    subprocess.run(["wrk", "-t2", "-c16", "-d3s", "-s", lua.name, stack.url], check=True, capture_output=True)
    run = subprocess.run(["wrk", "-t2", f"-c{args.connections}", f"-d{args.seconds}s", "--latency", "-s", lua.name, stack.url],
                         check=True, capture_output=True, text=True)
    out = run.stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+(\S+)", out).group(1)
    p50 = re.search(r"50%\s+(\S+)", out).group(1)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = int(non2xx.group(1)) if non2xx else 0

    # pgbench: one INSERT of an acceptance-sized row per transaction, same client count.
    database = stack.database_url.rsplit("/", 1)[0] + "/" + stack.db_name
    subprocess.run(["psql", "-q", database, "-c",
                    "CREATE TABLE bench_acceptances (id bigserial PRIMARY KEY, user_id uuid NOT NULL, document text NOT NULL,"
                    " version text NOT NULL, action text NOT NULL, ip text, user_agent text, recorded_at timestamptz NOT NULL DEFAULT now())"],
                   check=True)
    script = tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False)
    script.write("INSERT INTO bench_acceptances (user_id, document, version, action, ip, user_agent)"
                 " VALUES (gen_random_uuid(), 'terms_of_service', '2025-12-12', 'accept', '203.0.113.9', 'PlayoffChallenge/1.0');\n")
    script.close()
    clients = min(args.connections, 64)
    bench = subprocess.run(["pgbench", "-n", "-f", script.name, "-c", str(clients), "-j", "2", "-T", str(args.seconds), database],
                           check=True, capture_output=True, text=True)
    tps = float(re.search(r"tps = ([\d.]+)", bench.stdout).group(1))

    print(f"rate limits: off ({', '.join(f'{k}={v}' for k, v in RATE_LIMITS_OFF.items())}): "
          f"{args.users} users from 127.0.0.1 would be throttled by the per-address defaults")
    print(f"gateway accept-tos: {rate:,.0f} requests/s at {args.connections} connections "
          f"(p50 {p50}, p99 {p99}; non-2xx {errors}; {args.users} users, {args.seconds}s)")
    print(f"pgbench one INSERT per commit: {tps:,.0f} tps at {clients} clients")
    print(f"ratio: {rate / tps:.2f}x")
finally:
    stack.close()
