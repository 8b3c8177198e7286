"""Gateway benchmark: a realistic acceptance wave through `PUT /api/users/{id}/accept-tos` under
wrk, beside pgbench (`-M prepared`, one INSERT per commit) on the same cluster in the same run.

The users are made in bulk (`compass load users N --tokens`): each signed up as Accounts stores a
sign-up (its acceptance recorded by Audit, its row, eligibility confirmation and session), with a
session token minted with Accounts' key that the gateway has never seen. Each round publishes a new
terms version through Legal, then every user accepts it once: the users are cut into slices, wrk's
threads split each slice with no overlap (`wave.lua`), and each slice is followed by a pgbench
slice of about the same length, so the two sides alternate in short slices and each pair gives a
ratio. Each request is the whole path of a real acceptance: the token checked by the gateway (the
first time it sees it), the acceptance batched into `accounts.accept_terms_batch`, recorded and
stored, answered after commit. Where Audit chains the acts from Accounts' consent stream after the
reply, a slice ends once Audit has chained its acts, so that work counts in the slice's CPU.

It prints, per round and as medians of the rounds: the rates, the per-pair ratios, p50/p99,
non-2xx, `accounts.verify_session` calls per acceptance, the CPU time per acceptance of every
process (services, PostgreSQL, wrk) and per pgbench insert, the gateway's share in three parts
(its `/healthz`; the same acceptances refused with 403 before their bus call, `refused.lua`: the
token and the body; the rest: batch, bus call, reply), and the machine's ceiling for this
path: the costs no design removes, per acceptance (wrk's CPU per request, the gateway's HTTP floor
from `/healthz` under the same wrk, PostgreSQL's CPU for the rows that must be durable, measured
by pgbench running an acceptance's statements, a user's update and its record, 32 a commit)
turned into a rate on this machine's cores. Round 1 is printed and summarised on its own: it is the
only round where every token is new to the gateway (its first sight of a token costs a signature
check, which later rounds' same tokens may skip through the gateway's verified-token cache), the
first-use case a real wave measures. Usage (deploy/bench-gateway):
    bench.py [--users N] [--rounds N] [--slices N] [--seconds N] [--connections N] [--profile FILE [--profile-rounds 1,2]]
"""
import argparse
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from bench_measure import (audit_chained, bus_metrics, measured, pgbench_figures, print_bus_round, rss_mib, slow_batch_calls,
                           verify_session_calls, wrk_figures)
from bench_report import print_round, print_summary

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Tests" / "GatewayPython"))
from stack import RATE_LIMITS_OFF, Stack  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--users", type=int, default=100_000, help="distinct users, each accepting once per round")
parser.add_argument("--rounds", type=int, default=3, help="rounds, each a newly published terms version")
parser.add_argument("--slices", type=int, default=4, help="gateway/pgbench pairs per round")
parser.add_argument("--seconds", type=int, default=5, help="length of each /healthz run and of the ceiling's pgbench run")
parser.add_argument("--connections", type=int, default=64)
parser.add_argument("--threads", type=int, default=2, help="wrk threads")
parser.add_argument("--cap", type=int, default=120, help="seconds after which wrk gives up on a slice's last answers")
parser.add_argument("--compass", help="the compass executable that makes the users (default: the one beside the services)")
parser.add_argument("--profile", metavar="FILE", help="also record `perf record -g` of the stack's processes into FILE during "
                    "round 1's first slice (read it with `perf report -i FILE --pid <Gateway's> --no-children --sort dso,sym`)")
parser.add_argument("--profile-rounds", default="1", metavar="N,M",
                    help="the rounds whose first slice --profile records (1: every token new to the gateway; later: tokens it "
                    "holds); round 1's goes to FILE, round N's to FILE.rN")
args = parser.parse_args()
if args.users < args.slices * args.threads:
    raise SystemExit("--users must give every wrk thread of every slice at least one user")

HERE = pathlib.Path(__file__).resolve().parent
CEILING_BATCH = 32
stack = Stack()
try:
    database = stack.database_url.rsplit("/", 1)[0] + "/" + stack.db_name
    compass = args.compass or str(stack.bin / "compass")
    compass_env = dict(os.environ, **stack.bus_env, DATABASE_URL=database, ACCOUNTS_SESSION_SIGNING_KEY=stack.session_signing_key)
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-gateway-"))
    tokens = work / "tokens"
    started = time.monotonic()
    made = subprocess.run([compass, "load", "users", str(args.users), "--tokens", str(tokens)], env=compass_env,
                          capture_output=True, text=True)
    if made.returncode != 0:
        raise SystemExit(f"compass load users failed:\n{made.stdout}{made.stderr}")
    tokens_minted = time.monotonic()
    print(f"users: {args.users:,} made in {tokens_minted - started:.1f} s by `compass load users` "
          f"(sign-up acceptances through audit.record_batch, rows written as Accounts' schema owner, tokens minted "
          f"with Accounts' key, none seen by the gateway yet)", flush=True)

    def psql(sql):
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", database, "-c", sql], check=True, capture_output=True)

    psql("CREATE TABLE bench_acceptances (id bigserial PRIMARY KEY, user_id uuid NOT NULL, document text NOT NULL,"
         " version text NOT NULL, action text NOT NULL, ip text, user_agent text, recorded_at timestamptz NOT NULL DEFAULT now())")
    # The ceiling's durable rows: a user's terms state (as accounts.users keeps it, updated in place)
    # and the acceptance's record (as audit.records keeps it: looked up by user).
    psql("CREATE SCHEMA bench_ceiling;"
         " CREATE TABLE bench_ceiling.users (n integer PRIMARY KEY, id uuid NOT NULL, tos_version text, tos_accepted_at timestamptz)"
         " WITH (fillfactor = 80);"
         f" INSERT INTO bench_ceiling.users SELECT n, gen_random_uuid(), 'v0', now() FROM generate_series(1, {args.users}) AS n;"
         " CREATE TABLE bench_ceiling.records (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), user_id uuid NOT NULL, document text NOT NULL,"
         " version text NOT NULL, action text NOT NULL, ip text, user_agent text, recorded_at timestamptz NOT NULL DEFAULT now());"
         " CREATE INDEX ON bench_ceiling.records (user_id, recorded_at)")
    insert_script = work / "insert.sql"
    insert_script.write_text("INSERT INTO bench_acceptances (user_id, document, version, action, ip, user_agent)"
                             " VALUES (gen_random_uuid(), 'terms_of_service', '2025-12-12', 'accept', '203.0.113.9', 'PlayoffChallenge/1.0');\n")
    ceiling_script = work / "ceiling.sql"
    ceiling_script.write_text(
        f"\\set n random(1, {max(1, args.users - CEILING_BATCH + 1)})\nBEGIN;\n"
        f"UPDATE bench_ceiling.users SET tos_version = 'v1', tos_accepted_at = now() WHERE n BETWEEN :n AND :n + {CEILING_BATCH - 1};\n"
        "INSERT INTO bench_ceiling.records (user_id, document, version, action, ip, user_agent)"
        " SELECT id, 'terms_of_service', 'v1', 'accept', '203.0.113.9', 'PlayoffChallenge/1.0' FROM bench_ceiling.users"
        f" WHERE n BETWEEN :n AND :n + {CEILING_BATCH - 1};\nEND;\n")
    clients = min(args.connections, 64)
    pids = {process.name: process.popen.pid for process in stack.processes}

    def pgbench(script, seconds, connections=clients):
        # A tenth of the transactions' latencies logged (`-l`, sampled so that logging costs the
        # baseline next to nothing), for the slice's p99 beside wrk's: a stall of the machine shows
        # in both, one of the stack in the gateway's alone.
        prefix = work / "pgbench-log"
        run = subprocess.run(["pgbench", "-n", "-M", "prepared", "-f", str(script), "-c", str(connections), "-j", "2",
                              "-T", str(seconds), "-l", "--sampling-rate", "0.1", "--log-prefix", str(prefix), database],
                             check=True, capture_output=True, text=True)
        return pgbench_figures(run.stdout, prefix)

    def drain(chained_before, acts):
        """Where Audit chains acts from Accounts' stream after the reply, waits until it has
        chained the slice's (inside the slice's CPU measurement: that work is the acceptances');
        the seconds it took after the last answer."""
        if chained_before is None:
            return 0.0
        started, deadline = time.monotonic(), time.monotonic() + 120
        while audit_chained(stack.processes) < chained_before + acts:
            if time.monotonic() > deadline:
                raise SystemExit(f"Audit did not chain {acts} acts within 120 s of the slice's end")
            time.sleep(0.02)
        return time.monotonic() - started

    def wrk_wave(first, last, version, profile=None):
        chained_before = audit_chained(stack.processes)
        # The stack's processes only (builds beside the run would drown them in a system-wide
        # profile), from the slice's first request to its last answer.
        recorder = None if profile is None else subprocess.Popen(
            ["perf", "record", "-g", "-F", "1999", "-o", profile, "-p", ",".join(str(pid) for pid in pids.values())],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run = subprocess.run(["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.cap}s", "--timeout", f"{args.cap}s", "--latency",
                              "-s", str(HERE / "wave.lua"), stack.url, "--", str(tokens), str(first), str(last), version,
                              str(args.threads), str(work / f"done-{version}-{first}")], check=True, capture_output=True, text=True)
        if recorder is not None:
            recorder.send_signal(signal.SIGINT)
        if recorder is not None and recorder.wait() not in (0, -signal.SIGINT):  # perf ends by the signal it was sent
            raise SystemExit(f"perf record failed (exit {recorder.returncode}); is perf installed and perf_event_paranoid low enough?")
        figures = wrk_figures(run.stdout, run.stderr)
        figures["drain"] = drain(chained_before, figures["requests"] - figures["errors"])
        if figures["requests"] < last - first + 1:
            print(f"  slice {first}-{last}: only {figures['requests']} of {last - first + 1} answered within wrk's "
                  f"{args.cap} s:\n{run.stdout}", flush=True)
        return figures

    def wrk_timed(*target):
        """wrk on `target` for --seconds at the wave's threads and connections; its figures and the CPU spent."""
        return measured(lambda: wrk_figures(subprocess.run(
            ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.seconds}s", "--latency", *target],
            check=True, capture_output=True, text=True).stdout), pids, "wrk")

    def publish(version):
        text = work / f"{version}.md"
        text.write_text(f"# Terms of Service\n\nVersion {version}, published for the gateway benchmark.\n")
        subprocess.run([compass, "legal", "publish", "--type", "terms_of_service", "--version", version, "--file", str(text)],
                       env=compass_env, check=True, capture_output=True)
        deadline = time.monotonic() + 30
        while stack.request("GET", "/api/terms")[1].get("version") != version:
            if time.monotonic() > deadline:
                raise SystemExit(f"the gateway did not serve terms {version} within 30 s of publishing it")
            time.sleep(0.1)

    # Warm-up on /healthz only: an acceptance would show the gateway some users' tokens before
    # round 1, which must be the first it sees of each.
    subprocess.run(["wrk", "-t2", "-c16", "-d3s", stack.url + "/healthz"], check=True, capture_output=True)
    rss_before = {name: rss_mib(pid) for name, pid in pids.items()}
    per_slice = args.users // args.slices
    rounds = []
    for number in range(1, args.rounds + 1):
        version = f"bench-{int(time.time())}-r{number}"
        publish(version)
        bus_before = bus_metrics(stack.processes)
        pairs = []
        for index in range(args.slices):
            first = index * per_slice + 1
            last = args.users if index == args.slices - 1 else (index + 1) * per_slice
            profile = None
            if args.profile and index == 0 and str(number) in args.profile_rounds.split(","):
                profile = args.profile if number == 1 else f"{args.profile}.r{number}"
            http, http_cpu = measured(lambda: wrk_wave(first, last, version, profile), pids, "wrk")
            inserts, insert_cpu = measured(lambda: pgbench(insert_script, max(1, round(http["seconds"]))), {}, "pgbench")
            pairs.append((http, http_cpu, inserts, insert_cpu))
        bus_after = bus_metrics(stack.processes)
        requests = sum(p[0]["requests"] for p in pairs)
        if number == 1:
            print_bus_round(bus_before, bus_after, requests)
        health, health_cpu = wrk_timed(stack.url + "/healthz")
        # The same requests refused before their bus call (another user's id): the gateway's cost of
        # the token and the body, between /healthz and a whole acceptance. After the wave, so that
        # round 1's tokens are first seen by its acceptances.
        refused, refused_cpu = wrk_timed("-s", str(HERE / "refused.lua"), stack.url, "--", str(tokens), version)
        if refused["errors"] != refused["requests"]:
            raise SystemExit(f"refused.lua: {refused['requests'] - refused['errors']} of {refused['requests']} requests were not refused")
        ceiling, ceiling_cpu = measured(lambda: pgbench(ceiling_script, args.seconds, 8), {}, "pgbench")
        rounds.append({"pairs": pairs, "requests": requests, "verify_session": verify_session_calls(bus_before, bus_after) / requests,
                       "slow_batches": slow_batch_calls(bus_before, bus_after),
                       "health": health, "health_cpu": health_cpu, "refused": refused, "refused_cpu": refused_cpu, "ceiling": ceiling, "ceiling_cpu": ceiling_cpu})
        print_round(number, rounds[-1], os.cpu_count() or 1, CEILING_BATCH)
    if time.monotonic() - tokens_minted > 14 * 60:
        print("note: the run outlasted the session tokens' 15 minutes: later acceptances may have been refused as expired")
    print("resident memory after warm-up → after the rounds (MiB): " + ", ".join(
        f"{name} {rss_before[name]:.0f} → {rss_mib(pid):.0f}" for name, pid in pids.items()))
    with urllib.request.urlopen(stack.url + "/metrics", timeout=30) as response:
        metrics = response.read().decode()
    print_summary(rounds, metrics, args, clients, os.cpu_count() or 1)
    print(f"rate limits: off ({', '.join(f'{k}={v}' for k, v in RATE_LIMITS_OFF.items())}): "
          f"{args.users} users from 127.0.0.1 would be throttled by the per-address defaults")
finally:
    stack.close()
