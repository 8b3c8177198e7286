"""Legal reads benchmark: the gateway's reads of the legal texts in effect under wrk, each beside the
same gateway's `/healthz` measured in the same round (the ceiling of an HTTP request that does
nothing), with the ratio.

Reads: seed 004's `GET /api/terms`, the privacy policy as JSON (`GET /api/legal/privacy_policy`),
the terms page (`GET /legal/terms`, HTML) and the PostgREST read seeds 000/001 make with the
Supabase client (`legal_documents?select=content,last_updated,version&type=eq.privacy_policy` with
the object media type of `.single()` and the anon key). Each round runs wrk on `/healthz`, then on
each read; the summary gives medians over the rounds. Beside the rates it prints the CPU each
request cost the gateway and Legal (and wrk), from /proc: on a machine whose cores wrk, the
gateway and the services share, that is the figure to compare.

`--bin DIR` runs other builds of the executables (e.g. an older commit's release build) on the
same stack, for a before/after comparison on the same machine. Usage (deploy/bench-legal):
    bench_legal.py [--seconds N] [--connections N] [--rounds N] [--bin DIR]
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=int, default=8)
parser.add_argument("--connections", type=int, default=64)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--bin", help="folder of the Legal, Audit, Accounts, Documents and Gateway executables to run")
args = parser.parse_args()
if args.bin:
    os.environ["GATEWAY_CHECKS_BIN"] = str(pathlib.Path(args.bin).resolve())

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Tests" / "GatewayPython"))
from stack import Stack  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """CPU seconds of `pid` so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children_cpu() -> float:
    usage = os.times()
    return usage.children_user + usage.children_system


def milliseconds(text: str) -> float:
    """wrk's latency figure ("812.00us", "98.56ms", "1.02s") in milliseconds."""
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


stack = Stack()
try:
    anon = stack.anon_key
    rest_headers = {"apikey": anon, "Authorization": "Bearer " + anon, "Accept": "application/vnd.pgrst.object+json"}
    routes = [
        ("/healthz", "/healthz", {}),
        ("/api/terms", "/api/terms", {}),
        ("/api/legal/privacy_policy", "/api/legal/privacy_policy", {}),
        ("/legal/terms", "/legal/terms", {}),
        ("PostgREST legal_documents", "/rest/v1/legal_documents?select=content,last_updated,version&type=eq.privacy_policy", rest_headers),
    ]
    pids = {process.name: process.popen.pid for process in stack.processes if process.name in ("Gateway", "Legal")}

    def wrk(path, headers, seconds, connections=args.connections):
        command = ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency"]
        for name, value in headers.items():
            command += ["-H", f"{name}: {value}"]
        before = {name: process_cpu(pid) for name, pid in pids.items()}
        client_before = children_cpu()
        run = subprocess.run(command + [stack.url + path], check=True, capture_output=True, text=True)
        cpu = {name: process_cpu(pid) - before[name] for name, pid in pids.items()}
        cpu["wrk"] = children_cpu() - client_before
        out = run.stdout
        if not re.search(r"^\s+50%\s+[\d.]+(us|ms|s|m)\s", out, re.MULTILINE):
            raise SystemExit(f"wrk measured nothing on {path}:\n{out}{run.stderr}")
        non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        requests = int(re.search(r"(\d+) requests in", out).group(1))
        return {"rate": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), "requests": requests,
                # The latency distribution's lines only (a Stdev column such as "76.50%" would match too).
                "p50": milliseconds(re.search(r"^\s+50%\s+(\S+)", out, re.MULTILINE).group(1)),
                "p99": milliseconds(re.search(r"^\s+99%\s+(\S+)", out, re.MULTILINE).group(1)),
                "errors": int(non2xx.group(1)) if non2xx else 0,
                "cpu": {name: seconds / max(requests, 1) * 1e6 for name, seconds in cpu.items()}}

    # Every read answers 200 before anything is measured, and each is warmed up.
    for label, path, headers in routes:
        check = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", stack.url + path]
                               + [item for name, value in headers.items() for item in ("-H", f"{name}: {value}")],
                               check=True, capture_output=True, text=True).stdout.split()
        if check[0] != "200":
            raise SystemExit(f"{label} answered {check[0]} before the benchmark")
        print(f"{label}: {int(check[1]):,} bytes per response", flush=True)
        wrk(path, headers, 2, connections=16)

    rounds = []
    for number in range(1, args.rounds + 1):
        results = {label: wrk(path, headers, args.seconds) for label, path, headers in routes}
        rounds.append(results)
        health = results["/healthz"]["rate"]
        print(f"round {number}: /healthz {health:,.0f}/s (p50 {results['/healthz']['p50']:.2f} ms, p99 {results['/healthz']['p99']:.2f} ms)", flush=True)
        for label, _, _ in routes[1:]:
            r = results[label]
            cpu = ", ".join(f"{name} {value:,.0f}" for name, value in r["cpu"].items())
            print(f"  {label}: {r['rate']:,.0f}/s = {r['rate'] / health:.2f}x /healthz (p50 {r['p50']:.2f} ms, p99 {r['p99']:.2f} ms, "
                  f"non-2xx {r['errors']}; CPU µs/request {cpu})", flush=True)

    median = statistics.median
    health = median(r["/healthz"]["rate"] for r in rounds)
    print(f"\nmedians of {args.rounds} rounds, {args.seconds}s each, {args.connections} connections, wrk -t2 "
          f"({os.cpu_count()} cores shared by wrk, the gateway and the services)")
    print(f"{'read':<28}{'req/s':>9}{'ratio':>8}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}   CPU µs/request (median)")
    for label, _, _ in routes:
        rates = [r[label]["rate"] for r in rounds]
        ratio = median(r[label]["rate"] / r["/healthz"]["rate"] for r in rounds)
        cpu = {name: median(r[label]["cpu"][name] for r in rounds) for name in rounds[0][label]["cpu"]}
        print(f"{label:<28}{median(rates):>9,.0f}{ratio:>7.2f}x{median(r[label]['p50'] for r in rounds):>9.2f}"
              f"{median(r[label]['p99'] for r in rounds):>9.2f}{sum(r[label]['errors'] for r in rounds):>9}   "
              + ", ".join(f"{name} {value:,.0f}" for name, value in cpu.items()))
    worst = min(median(r[label]["rate"] / r["/healthz"]["rate"] for r in rounds) for label, _, _ in routes[1:])
    print(f"lowest legal read / /healthz ratio (median per round): {worst:.2f}x (goal >= 0.70x)")
finally:
    stack.close()
