"""Where `compass load acceptances --via accounts` spends its CPU: the acceptance path a service
takes (batches to Accounts, Audit chaining from Accounts' consent stream after the reply), beside
pgbench's one-INSERT-per-commit baseline, per act and per insert, by process.

Each run starts the stack on a fresh database (Tests/GatewayPython's `Stack`, as the gateway
benchmark does), runs `compass load acceptances --max --via accounts` (which first makes its users
in bulk, then drives the load and waits until Audit has chained every act), and samples the CPU
time of every process of the stack, of PostgreSQL (the postmaster, its live backends and the ones
gone) and of compass, ten times a second. The window is the load and its drain: from the first
acceptance (compass's progress line gives its elapsed time) to compass's exit, so the users' bulk
creation before it does not count. Then `compass load baseline` runs the baseline of `compass load
--baseline` (pgbench `-M prepared`, 32 clients, one acceptance-shaped INSERT per commit into a
scratch schema) for the same time on the same cluster, measured alike. It prints each run and the medians: acts acknowledged
and chained per second, pgbench's tps, the two ratios, CPU per act and per insert by process, and
the CPU per act that goal 2's 1.5x would allow (an insert's ÷ 1.5, both CPU-bound on the same cores).

    bench_load.py [--runs N] [--concurrency C] [--duration S] [--users U]   (deploy/bench-load)
"""
import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "Benchmarks" / "GatewayBench"), str(ROOT / "Tests" / "GatewayPython")]
from bench_measure import children_cpu, postgres_cpu, process_cpu  # noqa: E402
from stack import Stack  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--runs", type=int, default=3, help="runs, each on a fresh stack and database")
parser.add_argument("--concurrency", type=int, default=2048, help="acceptances in flight (compass load --concurrency)")
parser.add_argument("--duration", type=int, default=10, help="seconds of load, and of pgbench")
parser.add_argument("--users", type=int, default=100_000, help="distinct users (compass load --users)")
args = parser.parse_args()

def cpu_now(pids: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each named process and of PostgreSQL; a process gone counts as 0."""
    spent = {}
    for name, pid in pids.items():
        try:
            spent[name] = process_cpu(pid)
        except OSError:
            spent[name] = 0.0
    spent["PostgreSQL"] = postgres_cpu()
    return spent


def load_run(stack: Stack) -> dict:
    database = stack.database_url.rsplit("/", 1)[0] + "/" + stack.db_name
    env = dict(os.environ, **stack.bus_env, DATABASE_URL=database)
    compass = subprocess.Popen([str(stack.bin / "compass"), "load", "acceptances", "--max", "--via", "accounts",
                                "--concurrency", str(args.concurrency), "--duration", str(args.duration), "--users", str(args.users)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids = {process.name: process.popen.pid for process in stack.processes} | {"compass": compass.pid}
    samples, stop = [], threading.Event()

    def sample():
        while not stop.is_set():
            samples.append((time.monotonic(), cpu_now(pids)))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    started, errors = None, []
    for line in compass.stderr:
        progress = re.match(r"\s*([\d.]+) s\s+\d+/s", line)
        if progress and started is None:
            started = time.monotonic() - float(progress.group(1))
        elif not progress:
            errors.append(line)
    report = compass.stdout.read()
    compass.wait()
    stop.set()
    sampler.join()
    if compass.returncode != 0 or started is None:
        raise SystemExit(f"compass load failed (exit {compass.returncode}):\n{report}{''.join(errors)}")
    # A process gone reads 0 (compass once reaped), and CPU time only grows: each one's largest sample.
    before = min(samples, key=lambda s: abs(s[0] - started))[1]
    after = {name: max(sample[name] for _, sample in samples) for name in before}
    acts = int(re.search(r"\((\d+) acknowledged, (\d+) failed\)", report).group(1))
    chained = re.search(r"chained every act ([\d.]+) s after the last acknowledgement: (\d+)/s", report)
    if not chained:
        raise SystemExit(f"Audit did not chain every act:\n{report}")
    spent = {name: after[name] - before[name] for name in after}
    return {"acts": acts, "acknowledged": float(re.search(r"throughput\s+(\d+)", report).group(1)),
            "chained": float(chained.group(2)), "drain": float(chained.group(1)),
            "per_act": {name: value / acts * 1e6 for name, value in spent.items()}, "database": database}


def baseline_run(stack: Stack, database: str) -> dict:
    """`compass load baseline` (the baseline `compass load --baseline` runs) on the same cluster:
    its rate, and the CPU per insert of PostgreSQL and of compass with its pgbench."""
    env = dict(os.environ, DATABASE_URL=database)
    pg, children = postgres_cpu(), children_cpu()
    run = subprocess.run([str(stack.bin / "compass"), "load", "baseline", "--duration", str(args.duration), "--json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    time.sleep(1)  # pgbench's backends exit and are reaped: their CPU moves to the postmaster's children
    spent = {"PostgreSQL": postgres_cpu() - pg, "pgbench (and compass)": children_cpu() - children}
    tps = json.loads(run)["pgbenchPerSecond"]
    # pgbench's rate leaves out its connections' set-up, a fraction of a percent of a 10 s run.
    inserts = tps * args.duration
    return {"tps": tps, "per_insert": {k: v / inserts * 1e6 for k, v in spent.items()}}


def shown(costs: dict) -> str:
    return ", ".join(f"{name} {value:,.1f}" for name, value in sorted(costs.items(), key=lambda kv: -kv[1]) if value >= 0.05) \
        + f"; total {sum(costs.values()):,.1f}"


runs = []
for number in range(1, args.runs + 1):
    stack = Stack()
    try:
        load = load_run(stack)
        base = baseline_run(stack, load["database"])
    finally:
        stack.close()
    runs.append((load, base))
    print(f"run {number}: {load['acts']:,} acts at {args.concurrency} in flight, {load['acknowledged']:,.0f} acknowledged/s, "
          f"{load['chained']:,.0f} chained/s (Audit done {load['drain']:.2f} s after the load); pgbench -M prepared {base['tps']:,.0f} tps; "
          f"ratio acknowledged {load['acknowledged'] / base['tps']:.2f}x, chained {load['chained'] / base['tps']:.2f}x; "
          f"CPU µs per act (load and drain): {shown(load['per_act'])}; per insert: {shown(base['per_insert'])}", flush=True)

median = statistics.median
act_names = runs[0][0]["per_act"].keys()
per_act = {name: median(r[0]["per_act"][name] for r in runs) for name in act_names}
per_insert = {name: median(r[1]["per_insert"][name] for r in runs) for name in runs[0][1]["per_insert"]}
print(f"users: {args.users}")
print(f"ratio (medians of {len(runs)} runs): acknowledged {median(r[0]['acknowledged'] / r[1]['tps'] for r in runs):.2f}x, "
      f"chained {median(r[0]['chained'] / r[1]['tps'] for r in runs):.2f}x pgbench -M prepared one INSERT per commit")
print(f"CPU per act (µs, medians): {shown(per_act)}")
print(f"CPU per pgbench insert (µs, medians): {shown(per_insert)}")
insert_total = median(sum(r[1]["per_insert"].values()) for r in runs)
print(f"1.5x pgbench on the same cores allows {insert_total / 1.5:,.1f} µs of CPU per act in all; PostgreSQL alone spends "
      f"{per_act['PostgreSQL']:,.1f} per act, against {per_insert['PostgreSQL']:,.1f} per insert")
