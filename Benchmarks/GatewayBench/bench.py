"""Gateway benchmark: terms acceptances through `PUT /api/users/{id}/accept-tos` under wrk, beside
pgbench's one-INSERT-per-commit rate on the same cluster in the same run.

Each request is the whole path a real acceptance takes: the session token checked by the gateway,
the acceptance gathered with concurrent ones into one `accounts.accept_terms_batch` call, which
records the batch through Audit (`audit.record_batch`, group-committed, answered only after commit)
and stores the users' terms version. Round 1 also prints the bus calls each service handled per
acceptance: the number of hops, from the services' own metrics. Each round runs wrk, then pgbench
(same client count); the figures are medians over the rounds.

Beside the rates it prints what each side costs in CPU: per acceptance, the CPU time of every
service process, of PostgreSQL (the cluster's postmaster and all its backends) and of wrk; per
pgbench insert, PostgreSQL's and pgbench's. On a machine where the load generator, the services and
the database share the same cores, the ratio of those costs bounds the ratio of the rates, whatever
the scheduling: that is the figure to read on a noisy machine. Usage (deploy/bench-gateway):
    bench.py [--seconds N] [--connections N] [--users N] [--rounds N] [--profile FILE]
"""
import argparse
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Tests" / "GatewayPython"))
from stack import RATE_LIMITS_OFF, Stack  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=int, default=10)
parser.add_argument("--connections", type=int, default=64)
parser.add_argument("--users", type=int, default=200)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--profile", metavar="FILE",
                    help="also record a system-wide `perf record -g` into FILE during round 1's acceptances "
                         "(read it with `perf report -i FILE --sort comm,dso,sym`)")
args = parser.parse_args()

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int, children: bool = False) -> float:
    """CPU seconds of `pid` (with its reaped children's when `children`)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if children else 0)
    return ticks / TICK


def postgres_cpu() -> float:
    """CPU seconds of the benchmark's cluster: the postmaster, its live backends and the ones gone."""
    postmaster = int(pathlib.Path(os.environ["COMPASS_PG_DIR"], "data", "postmaster.pid").read_text().split()[0])
    total = process_cpu(postmaster, children=True)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1]) == postmaster:
                    total += process_cpu(int(entry))
            except (OSError, ValueError):
                pass
    return total


def rss_mib(pid: int) -> float:
    """Resident memory of `pid` in MiB."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def milliseconds(text: str) -> float:
    """wrk's latency figure ("812.00us", "98.56ms", "1.02s") in milliseconds."""
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def bus_metrics() -> dict[tuple[str, str, str], float]:
    """The bus's calls and their times from every service's `/metrics`, summed over outcomes, by
    (process, metric, type): `bus_rpc_handled_total` (keyed by the server's name, not the process's),
    and the sums and counts of `bus_rpc_handle_seconds` (arrival to reply, on the server) and
    `bus_rpc_call_seconds` (send to reply, on the client); and Audit's `audit_batch_duration` (a
    group-committed batch's statements, commit and signature), under the type "audit.write"."""
    totals: dict[tuple[str, str, str], float] = {}
    wanted = r"bus_rpc_handled_total|(?:bus_rpc_handle_seconds|bus_rpc_call_seconds|audit_batch_duration)_(?:sum|count)"
    for process in stack.processes:
        health = process.port("health")
        if health is None:
            continue
        with urllib.request.urlopen(f"http://127.0.0.1:{health}/metrics", timeout=30) as response:
            for line in response.read().decode().splitlines():
                match = re.match(rf'^({wanted})(?:\{{(.*)\}})? ([\d.e+-]+)$', line)
                if match:
                    labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
                    if match.group(1).startswith("audit_batch"):
                        labels["type"] = "audit.write"
                    owner = labels.get("server", process.name) if match.group(1) == "bus_rpc_handled_total" else process.name
                    key = (owner, match.group(1), labels.get("type", "?"))
                    totals[key] = totals.get(key, 0) + float(match.group(3))
    return totals


def print_bus_round(before: dict, after: dict, requests: int) -> None:
    """Round 1's hops per acceptance, and where a batch's time went: each process's mean time from
    sending a call to its reply, and the callee's from the call's arrival to its reply."""
    spent = {key: value - before.get(key, 0) for key, value in after.items()}
    print("bus calls handled per acceptance (round 1): " + (", ".join(
        f"{server} {kind} {value / requests:.3f}" for (server, metric, kind), value in sorted(spent.items())
        if metric == "bus_rpc_handled_total" and value > 0) or "none"), flush=True)
    means = []
    for (process, metric, kind), count in sorted(spent.items()):
        if metric.endswith("_count") and count > 0 and kind in ("accounts.accept_terms_batch", "audit.record_batch", "audit.write"):
            total = spent.get((process, metric[:-len("_count")] + "_sum", kind), 0)
            role = "calls" if metric.startswith("bus_rpc_call") else "handles" if metric.startswith("bus_rpc_handle") else "runs"
            means.append(f"{process} {role} {kind} {total / count * 1000:.2f} ms")
    if means:
        print("mean time per batch call (round 1): " + ", ".join(means), flush=True)


def measured(run, pids: dict[str, int]):
    """Runs `run()`; returns its result and the CPU seconds spent meanwhile per process group."""
    before = {name: process_cpu(pid) for name, pid in pids.items()}
    pg, client = postgres_cpu(), children_cpu()
    result = run()
    spent = {name: process_cpu(pid) - before[name] for name, pid in pids.items()}
    spent["PostgreSQL"] = postgres_cpu() - pg
    spent["client"] = children_cpu() - client
    return result, spent


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
    pids = {process.name: process.popen.pid for process in stack.processes}

    def wrk(path=None, profile=None):
        target = ["-s", lua.name, stack.url] if path is None else [stack.url + path]
        # perf starts with wrk and stops a second before it, so it sees the steady state only.
        recorder = None if profile is None else subprocess.Popen(
            ["perf", "record", "-a", "-g", "-F", "499", "-o", profile, "--", "sleep", str(max(1, args.seconds - 1))],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run = subprocess.run(["wrk", f"-t{min(2, args.connections)}", f"-c{args.connections}", f"-d{args.seconds}s", "--latency", *target],
                             check=True, capture_output=True, text=True)
        if recorder is not None and recorder.wait() != 0:
            raise SystemExit(f"perf record failed (exit {recorder.returncode}); is perf installed and perf_event_paranoid low enough?")
        out = run.stdout
        # The latency distribution's lines ("     50%   33.20ms"), anchored at the line start: the
        # "Thread Stats" lines end in a percentage too ("... 68.50%") and must not match.
        if not re.search(r"^\s*50%\s+[\d.]+(us|ms|s|m)\s*$", out, re.M):
            raise SystemExit(f"wrk measured nothing:\n{out}{run.stderr}")
        non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        return {"rate": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
                "requests": int(re.search(r"(\d+) requests in", out).group(1)),
                "p50": milliseconds(re.search(r"^\s*50%\s+(\S+)\s*$", out, re.M).group(1)),
                "p99": milliseconds(re.search(r"^\s*99%\s+(\S+)\s*$", out, re.M).group(1)),
                "errors": int(non2xx.group(1)) if non2xx else 0}

    def pgbench():
        out = subprocess.run(["pgbench", "-n", "-f", script.name, "-c", str(clients), "-j", "2", "-T", str(args.seconds), database],
                             check=True, capture_output=True, text=True).stdout
        return {"tps": float(re.search(r"tps = ([\d.]+)", out).group(1)),
                "transactions": int(re.search(r"number of transactions actually processed: (\d+)", out).group(1))}

    subprocess.run(["wrk", "-t2", "-c16", "-d3s", "-s", lua.name, stack.url], check=True, capture_output=True)  # warm-up
    rss_before = {name: rss_mib(pid) for name, pid in pids.items()}
    rounds = []
    for number in range(1, args.rounds + 1):
        bus_before = bus_metrics() if number == 1 else None
        http, http_cpu = measured(lambda: wrk(profile=args.profile if number == 1 else None), pids)
        if bus_before is not None:
            # How many hops an acceptance makes (a batch call counts once for all of its items),
            # and how long each hop of a batch takes.
            print_bus_round(bus_before, bus_metrics(), http["requests"])
        health, health_cpu = measured(lambda: wrk("/healthz"), pids)
        inserts, insert_cpu = measured(pgbench, {})
        per_acceptance = {name: seconds / http["requests"] * 1e6 for name, seconds in http_cpu.items()}
        per_insert = {name: seconds / inserts["transactions"] * 1e6 for name, seconds in insert_cpu.items()}
        per_health = sum(health_cpu.values()) / health["requests"] * 1e6
        rounds.append((http, inserts, per_acceptance, per_insert, health, per_health))
        print(f"round {number}: accept-tos {http['rate']:,.0f}/s (p50 {http['p50']:.1f} ms, p99 {http['p99']:.1f} ms, non-2xx {http['errors']}); "
              f"pgbench {inserts['tps']:,.0f} tps; ratio {http['rate'] / inserts['tps']:.3f}x; CPU per acceptance "
              f"{sum(per_acceptance.values()):,.0f} µs, per insert {sum(per_insert.values()):,.0f} µs; "
              f"/healthz {health['rate']:,.0f}/s ({per_health:,.0f} µs CPU each)", flush=True)

    median = statistics.median
    print("resident memory after warm-up → after the rounds (MiB): " + ", ".join(
        f"{name} {rss_before[name]:.0f} → {rss_mib(pid):.0f}" for name, pid in pids.items()))
    with urllib.request.urlopen(stack.url + "/metrics", timeout=30) as response:
        text = response.read().decode()
        total = re.search(r"^gateway_accept_batch_items_sum(?:\{[^}]*\})? ([\d.e+]+)$", text, re.M)
        count = re.search(r"^gateway_accept_batch_items_count(?:\{[^}]*\})? ([\d.e+]+)$", text, re.M)
        if total and count and float(count.group(1)) > 0:
            print(f"acceptances per batch call to Accounts (whole run, warm-up included): {float(total.group(1)) / float(count.group(1)):.1f}")
    print(f"rate limits: off ({', '.join(f'{k}={v}' for k, v in RATE_LIMITS_OFF.items())}): "
          f"{args.users} users from 127.0.0.1 would be throttled by the per-address defaults")
    rate = median(r[0]["rate"] for r in rounds)
    tps = median(r[1]["tps"] for r in rounds)
    errors = sum(r[0]["errors"] for r in rounds)
    acceptance_cpu = {name: median(r[2][name] for r in rounds) for name in rounds[0][2]}
    insert_cpu = {name: median(r[3][name] for r in rounds) for name in rounds[0][3]}
    total_acceptance, total_insert = sum(acceptance_cpu.values()), sum(insert_cpu.values())
    print(f"gateway accept-tos: {rate:,.0f} requests/s at {args.connections} connections, median of {args.rounds} rounds "
          f"(p50 {median(r[0]['p50'] for r in rounds):.1f} ms, p99 {median(r[0]['p99'] for r in rounds):.1f} ms; non-2xx {errors}; {args.users} users, {args.seconds}s each)")
    print(f"pgbench one INSERT per commit: {tps:,.0f} tps at {clients} clients, median of {args.rounds} rounds")
    print(f"ratio: {rate / tps:.3f}x (median rates)")
    health_rate = median(r[4]["rate"] for r in rounds)
    print(f"the same gateway's /healthz (no bus call, no body): {health_rate:,.0f} requests/s, "
          f"{median(r[5] for r in rounds):,.0f} µs CPU per request (gateway and wrk); /healthz is {health_rate / tps:.3f}x pgbench, "
          f"accept-tos is {rate / health_rate:.3f}x /healthz: no route of this gateway is faster than /healthz")
    print("CPU per acceptance (µs, median): " + ", ".join(f"{name} {value:,.0f}" for name, value in acceptance_cpu.items())
          + f"; total {total_acceptance:,.0f}")
    print("CPU per pgbench insert (µs, median): " + ", ".join(f"{name} {value:,.0f}" for name, value in insert_cpu.items())
          + f"; total {total_insert:,.0f}")
    print(f"CPU cost ratio: an acceptance costs {total_acceptance / total_insert:.1f}x an insert; on {os.cpu_count()} cores the "
          f"acceptance path tops out near {os.cpu_count() / total_acceptance * 1e6:,.0f}/s and pgbench near "
          f"{os.cpu_count() / total_insert * 1e6:,.0f}/s")
finally:
    stack.close()
