"""What the gateway benchmark reads off the machine: CPU time per process from /proc, the
benchmark cluster's CPU (postmaster and every backend), resident memory, the bus's counters from
each service's /metrics, and wrk's and pgbench's printed figures."""
import os
import pathlib
import re
import resource
import urllib.request

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


def children_cpu() -> float:
    """CPU seconds of this script's reaped children (wrk, pgbench, compass)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(run, pids: dict[str, int], client: str = "client"):
    """Runs `run()`; returns its result and the CPU seconds spent meanwhile per process group: each
    of `pids`, PostgreSQL, and the load generator (this script's children) under `client`."""
    before = {name: process_cpu(pid) for name, pid in pids.items()}
    pg, children = postgres_cpu(), children_cpu()
    result = run()
    spent = {name: process_cpu(pid) - before[name] for name, pid in pids.items()}
    spent["PostgreSQL"] = postgres_cpu() - pg
    spent[client] = children_cpu() - children
    return result, spent


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


def wrk_figures(out: str, stderr: str = "") -> dict:
    """Rate, completed requests, run time, p50/p99, non-2xx and socket errors from wrk's output."""
    # The latency distribution's lines ("     50%   33.20ms"), anchored at the line start: the
    # "Thread Stats" lines end in a percentage too ("... 68.50%") and must not match.
    if not re.search(r"^\s*50%\s+[\d.]+(us|ms|s|m)\s*$", out, re.M):
        raise SystemExit(f"wrk measured nothing:\n{out}{stderr}")
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    count, duration, unit = re.search(r"(\d+) requests in ([\d.]+)(ms|s|m)", out).groups()
    return {"rate": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "requests": int(count), "seconds": float(duration) * {"ms": 0.001, "s": 1, "m": 60}[unit],
            "p50": milliseconds(re.search(r"^\s*50%\s+(\S+)\s*$", out, re.M).group(1)),
            "p99": milliseconds(re.search(r"^\s*99%\s+(\S+)\s*$", out, re.M).group(1)),
            "errors": int(non2xx.group(1)) if non2xx else 0,
            "socket_errors": sum(int(n) for n in socket.groups()) if socket else 0}


def pgbench_figures(out: str, log_prefix: pathlib.Path) -> dict:
    """pgbench's rate and count from its output, and the p99 of its logged transactions' latencies
    (ms) from the logs `-l --log-prefix` wrote (one per thread, a line per logged transaction:
    `client transaction latency_us script epoch epoch_us`), which it then removes."""
    logs = sorted(log_prefix.parent.glob(log_prefix.name + ".*"))
    latencies = sorted(int(line.split()[2]) for log in logs for line in log.read_text().splitlines() if line.strip())
    for log in logs:
        log.unlink()
    return {"tps": float(re.search(r"tps = ([\d.]+)", out).group(1)),
            "transactions": int(re.search(r"number of transactions actually processed: (\d+)", out).group(1)),
            "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] / 1000 if latencies else float("nan")}


def bus_metrics(processes) -> dict[tuple[str, str, str], float]:
    """The bus's calls and their times from every service's `/metrics`, summed over outcomes, by
    (process, metric, type): `bus_rpc_handled_total` (keyed by the server's name, not the process's),
    and the sums and counts of `bus_rpc_handle_seconds` (arrival to reply, on the server) and
    `bus_rpc_call_seconds` (send to reply, on the client), and their histograms' buckets (metric
    `…_bucket@<le>`); and Audit's `audit_batch_duration` (a group-committed batch's statements,
    commit and signature), under the type "audit.write"."""
    totals: dict[tuple[str, str, str], float] = {}
    wanted = (r"bus_rpc_handled_total|(?:bus_rpc_handle_seconds|bus_rpc_call_seconds|audit_batch_duration)_(?:sum|count)"
              r"|(?:bus_rpc_handle_seconds|bus_rpc_call_seconds)_bucket")
    for process in processes:
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
                    metric = match.group(1) + (f"@{labels['le']}" if match.group(1).endswith("_bucket") else "")
                    key = (owner, metric, labels.get("type", "?"))
                    totals[key] = totals.get(key, 0) + float(match.group(3))
    return totals


def audit_chained(processes) -> float | None:
    """`audit_consent_entries_chained_total` from Audit's /metrics: the acts Audit has chained from
    Accounts' consent stream; None where Audit records synchronously (no such counter)."""
    for process in processes:
        if process.name == "Audit" and process.port("health") is not None:
            with urllib.request.urlopen(f"http://127.0.0.1:{process.port('health')}/metrics", timeout=30) as response:
                match = re.search(r"^audit_consent_entries_chained_total(?:\{[^}]*\})? ([\d.e+]+)$", response.read().decode(), re.M)
                return float(match.group(1)) if match else None
    return None


SLOW_SECONDS = ("0.1", "1.0")


def slow_batch_calls(before: dict, after: dict) -> dict[str, tuple[int, ...]]:
    """`accounts.accept_terms_batch` calls between two readings of `bus_metrics` that took longer
    than each of ``SLOW_SECONDS``, and all of them: as Accounts handled them (arrival to reply) and
    as the gateway waited for them (send to reply). Tells a batch held up in Accounts or
    PostgreSQL from a wait outside them, when the acceptances' p99 runs long."""
    kind = "accounts.accept_terms_batch"
    counts = {}
    for process, metric, label in (("Accounts", "bus_rpc_handle_seconds", "Accounts handling"),
                                   ("Gateway", "bus_rpc_call_seconds", "the gateway's waits")):
        spent = lambda name: after.get((process, name, kind), 0) - before.get((process, name, kind), 0)
        total = spent(f"{metric}_count")
        counts[label] = tuple(int(total - spent(f"{metric}_bucket@{le}")) for le in SLOW_SECONDS) + (int(total),)
    return counts


def verify_session_calls(before: dict, after: dict) -> float:
    """`accounts.verify_session` calls Accounts handled between two readings of `bus_metrics`."""
    key = ("accounts", "bus_rpc_handled_total", "accounts.verify_session")
    return after.get(key, 0) - before.get(key, 0)


def print_bus_round(before: dict, after: dict, requests: int) -> None:
    """A round's hops per acceptance, and where a batch's time went: each process's mean time from
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
