"""The gateway benchmark's figures: each round's (its slices summed, its pairs' ratios) and the
summary (medians of the rounds), with the ceiling of this path on this machine.

Round 1 is the only one where every token is new to the gateway (its first sight of a token pays an
Ed25519 check; later rounds reuse the same tokens, which its verified-token cache may judge without
one), so round 1 is labelled and summarised on its own beside the medians: it is the wave's
first-use case, the one a real wave of users accepting once looks like."""
import re
import statistics

median = statistics.median


def round_figures(data: dict, cores: int, ceiling_batch: int) -> dict:
    """One round's figures from its slices, /healthz run and ceiling run."""
    pairs = data["pairs"]
    requests = data["requests"]
    transactions = sum(p[2]["transactions"] for p in pairs)
    names = pairs[0][1].keys()
    per_acceptance = {name: sum(p[1][name] for p in pairs) / requests * 1e6 for name in names}
    per_insert = {name: sum(p[3][name] for p in pairs) / transactions * 1e6 for name in pairs[0][3].keys()}
    health = data["health"]
    load_generator = per_acceptance["wrk"]
    http_floor = data["health_cpu"]["Gateway"] / health["requests"] * 1e6
    durable = data["ceiling_cpu"]["PostgreSQL"] / (data["ceiling"]["transactions"] * ceiling_batch) * 1e6
    ceiling_rate = cores / (load_generator + http_floor + durable) * 1e6
    # The gateway's CPU per acceptance in three parts: its HTTP floor (/healthz), the token check
    # and body (an accept-tos refused before its bus call, its token cached by then), and the rest
    # (batch, bus call, reply; in round 1 also each token's first signature check).
    refused = data["refused_cpu"]["Gateway"] / data["refused"]["requests"] * 1e6
    gateway_parts = {"HTTP (/healthz)": http_floor, "token and body (refused before the bus)": refused - http_floor,
                     "batch, bus call, reply (round 1: and the token's first check)": per_acceptance.get("Gateway", 0) - refused}
    tps = sum(p[2]["tps"] * p[0]["seconds"] for p in pairs) / sum(p[0]["seconds"] for p in pairs)
    return {
        "rate": requests / sum(p[0]["seconds"] for p in pairs),
        "tps": tps,
        "ratios": [p[0]["rate"] / p[2]["tps"] for p in pairs],
        "p50": median(p[0]["p50"] for p in pairs),
        "p99": max(p[0]["p99"] for p in pairs),
        "pgbench_p99": max(p[2]["p99"] for p in pairs),
        "errors": sum(p[0]["errors"] for p in pairs),
        "short": sum(1 for p in pairs if p[0]["socket_errors"]),
        "per_acceptance": per_acceptance,
        "per_insert": per_insert,
        "verify_session": data["verify_session"],
        "health_rate": health["rate"],
        "health_cpu": sum(data["health_cpu"].values()) / health["requests"] * 1e6,
        "gateway_parts": gateway_parts,
        "floor": {"wrk": load_generator, "gateway HTTP": http_floor, "PostgreSQL durable rows": durable},
        "ceiling_rate": ceiling_rate,
        "drain": max(p[0]["drain"] for p in pairs),
    }


def round_label(number: int) -> str:
    return f"round {number} (tokens first seen by the gateway)" if number == 1 else f"round {number} (tokens seen in round 1)"


def print_round(number: int, data: dict, cores: int, ceiling_batch: int) -> dict:
    figures = round_figures(data, cores, ceiling_batch)
    data["figures"] = figures
    print(f"{round_label(number)}: accept-tos {figures['rate']:,.0f}/s (p50 {figures['p50']:.1f} ms, p99 {figures['p99']:.1f} ms, "
          f"non-2xx {figures['errors']}); pgbench -M prepared {figures['tps']:,.0f} tps (p99 {figures['pgbench_p99']:.1f} ms); pair ratios "
          + ", ".join(f"{ratio:.3f}" for ratio in figures["ratios"])
          + f" (median {median(figures['ratios']):.3f}x); CPU per acceptance {sum(figures['per_acceptance'].values()):,.0f} µs ("
          + ", ".join(f"{name} {value:,.0f}" for name, value in figures["per_acceptance"].items() if value >= 0.5) + "), "
          f"per insert {sum(figures['per_insert'].values()):,.0f} µs; accounts.verify_session per acceptance "
          f"{figures['verify_session']:.3f}; /healthz {figures['health_rate']:,.0f}/s; the gateway's µs per acceptance by part: "
          + ", ".join(f"{name} {value:,.0f}" for name, value in figures["gateway_parts"].items())
          + f"; ceiling {figures['ceiling_rate']:,.0f}/s"
          + (f"; Audit chained each slice's acts within {figures['drain'] * 1000:,.0f} ms of its last answer" if figures["drain"] else "")
          + "; batch calls over 100 ms / over 1 s: " + ", ".join(
              f"{who} {over_100ms} / {over_1s} of {total}" for who, (over_100ms, over_1s, total) in data["slow_batches"].items()),
          flush=True)
    return figures


def print_summary(rounds: list, metrics: str, args, clients: int, cores: int) -> None:
    figures = [r["figures"] for r in rounds]
    rate, tps = median(f["rate"] for f in figures), median(f["tps"] for f in figures)
    ratio = median(median(f["ratios"]) for f in figures)
    acceptance = {name: median(f["per_acceptance"][name] for f in figures) for name in figures[0]["per_acceptance"]}
    insert = {name: median(f["per_insert"][name] for f in figures) for name in figures[0]["per_insert"]}
    floor = {name: median(f["floor"][name] for f in figures) for name in figures[0]["floor"]}
    ceiling_rate = median(f["ceiling_rate"] for f in figures)
    total_acceptance, total_insert = sum(acceptance.values()), sum(insert.values())
    total = re.search(r"^gateway_accept_batch_items_sum(?:\{[^}]*\})? ([\d.e+]+)$", metrics, re.M)
    count = re.search(r"^gateway_accept_batch_items_count(?:\{[^}]*\})? ([\d.e+]+)$", metrics, re.M)
    if total and count and float(count.group(1)) > 0:
        print(f"acceptances per batch call to Accounts (whole run): {float(total.group(1)) / float(count.group(1)):.1f}")
    evicted = {reason: sum(float(v) for v in re.findall(
        rf'^gateway_session_cache_evictions_total\{{[^}}]*reason="{reason}"[^}}]*\}} ([\d.e+]+)$', metrics, re.M))
        for reason in ("expired", "capacity")}
    print(f"gateway's verified-token cache (whole run): {evicted['expired']:,.0f} expired and {evicted['capacity']:,.0f} live "
          "tokens evicted (a live one evicted is checked again on its next use)")
    print(f"users: {args.users}")
    print(f"gateway accept-tos: {rate:,.0f} requests/s at {args.connections} connections, median of {len(rounds)} rounds, each "
          f"a new terms version accepted once by every user in {args.slices} slices (p50 {median(f['p50'] for f in figures):.1f} ms, "
          f"p99 {median(f['p99'] for f in figures):.1f} ms (worst slice of a round); non-2xx {sum(f['errors'] for f in figures)})")
    print(f"pgbench -M prepared, one INSERT per commit: {tps:,.0f} tps at {clients} clients, in slices between the gateway's "
          f"(p99 {median(f['pgbench_p99'] for f in figures):.1f} ms (worst slice of a round): a stall of the machine shows here "
          "too, one of the stack's only in the gateway's)")
    first = figures[0]
    first_acceptance, first_insert = sum(first["per_acceptance"].values()), sum(first["per_insert"].values())
    print(f"ratio: {ratio:.3f}x pgbench -M prepared one INSERT per commit (median over rounds of each round's median pair ratio); "
          f"round 1 (tokens first seen): {median(first['ratios']):.3f}x")
    print(f"round 1 (tokens first seen by the gateway, each paying its signature check): ratio {median(first['ratios']):.3f}x, "
          f"CPU per acceptance {first_acceptance:,.0f} µs (Gateway {first['per_acceptance'].get('Gateway', 0):,.0f}), "
          f"{first_acceptance / first_insert:.2f}x an insert, {first['rate']:,.0f} acceptances/s")
    if len(figures) > 1:
        later = figures[1:]
        later_acceptance = median(sum(f["per_acceptance"].values()) for f in later)
        later_insert = median(sum(f["per_insert"].values()) for f in later)
        print(f"rounds 2-{len(figures)} (the same tokens again, which the gateway's cache may judge without a signature check): "
              f"ratio {median(median(f['ratios']) for f in later):.3f}x, CPU per acceptance {later_acceptance:,.0f} µs "
              f"(Gateway {median(f['per_acceptance'].get('Gateway', 0) for f in later):,.0f}), "
              f"{later_acceptance / later_insert:.2f}x an insert (medians)")
    print("accounts.verify_session calls per acceptance, by round: " + ", ".join(f"{f['verify_session']:.3f}" for f in figures))
    print(f"the same gateway's /healthz (no bus call, no body): {median(f['health_rate'] for f in figures):,.0f} requests/s, "
          f"{median(f['health_cpu'] for f in figures):,.0f} µs CPU per request (gateway and wrk)")
    print("the gateway's CPU per acceptance by part (µs, median): " + ", ".join(
        f"{name} {median(f['gateway_parts'][name] for f in figures):,.1f}" for name in figures[0]["gateway_parts"]))
    print("CPU per acceptance (µs, median): " + ", ".join(f"{name} {value:,.0f}" for name, value in acceptance.items())
          + f"; total {total_acceptance:,.0f}")
    print("CPU per pgbench insert (µs, median): " + ", ".join(f"{name} {value:,.0f}" for name, value in insert.items())
          + f"; total {total_insert:,.0f}")
    print(f"CPU cost ratio: an acceptance costs {total_acceptance / total_insert:.2f}x an insert (round 1, tokens first seen: "
          f"{first_acceptance / first_insert:.2f}x); on {cores} cores the "
          f"acceptance path tops out near {cores / total_acceptance * 1e6:,.0f}/s and pgbench near {cores / total_insert * 1e6:,.0f}/s")
    print("costs no design removes, per acceptance (µs, median): " + ", ".join(f"{name} {value:,.1f}" for name, value in floor.items())
          + f"; total {sum(floor.values()):,.1f}: at most {ceiling_rate:,.0f} acceptances/s on {cores} cores")
    print(f"ceiling: {ceiling_rate / tps:.3f}x pgbench -M prepared; accept-tos is {rate / ceiling_rate:.1%} of the ceiling "
          f"({rate / ceiling_rate:.3f}x)")
