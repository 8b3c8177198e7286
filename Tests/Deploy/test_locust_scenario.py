"""The locust scenario (deploy/load/locustfile.py) run headless for a few seconds against a real
stack that `compass up` starts on a database of its own: it must drive every route it names and
see no failure. (The figures of a real load test come from running it longer; see deploy/OPERATIONS.md.)
"""
import csv
import os
import pathlib
import random
import queue
import signal
import subprocess
import threading
import time
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("COMPASS_BIN", ROOT / ".build/debug")).resolve()
PY = pathlib.Path(os.environ.get("COMPASS_PY", ROOT / ".local/py")).resolve()


def psql(url, sql):
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql], check=True, capture_output=True, timeout=60)


@pytest.fixture
def stack(tmp_path):
    url = os.environ.get("DATABASE_URL")
    if not url:
        pytest.fail("DATABASE_URL is not set: run deploy/test")
    name = "locust_" + uuid.uuid4().hex[:12]
    psql(url, f"CREATE DATABASE {name}")
    # Below the kernel's ephemeral range (32768+), where other tests' "port 0" sockets land.
    base = random.randrange(210, 320) * 100 + 50
    environment = dict(os.environ, DATABASE_URL=url.rsplit("/", 1)[0] + "/" + name,
                       GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS="true", LOG_LEVEL="error",
                       # 200 simulated people from one address: the per-address limits would stop them.
                       GATEWAY_RATE_LIMIT_SIGN_IN_PER_IP="off", GATEWAY_RATE_LIMIT_ACCEPT_PER_IP="off",
                       GATEWAY_RATE_LIMIT_SIGN_IN_PER_USER="off", GATEWAY_RATE_LIMIT_ACCEPT_PER_USER="off")
    up = subprocess.Popen([str(BIN / "compass"), "up", "--base-port", str(base)], env=environment, cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # A thread reads the output line by line (select() on a buffered pipe misses lines already read
    # ahead into Python's buffer) and keeps draining it so compass never blocks on a full pipe.
    output, lines = [], queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in up.stdout], daemon=True).start()
    deadline = time.monotonic() + 180
    ready = False
    while not ready and time.monotonic() < deadline and up.poll() is None:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        output.append(line)
        ready = line.startswith("ready ")
    try:
        assert ready, "compass up did not become ready:\n" + "".join(output)
        assert "gateway" in output[-1], "the gateway was not started:\n" + "".join(output)
        yield f"http://127.0.0.1:{base + 30}"
    finally:
        up.send_signal(signal.SIGINT)
        try:
            up.wait(timeout=60)
        except subprocess.TimeoutExpired:
            up.kill()
        psql(url, f"DROP DATABASE IF EXISTS {name}")


def test_locust_scenario_runs_without_failures(stack, tmp_path):
    result = subprocess.run(
        [str(PY / "tools/bin/locust"), "-f", str(ROOT / "deploy/load/locustfile.py"), "--host", stack, "--headless",
         "--users", "12", "--spawn-rate", "12", "--run-time", "8s", "--csv", str(tmp_path / "run"), "--only-summary"],
        capture_output=True, text=True, timeout=120)
    with open(tmp_path / "run_stats.csv") as file:
        rows = {row["Name"]: row for row in csv.DictReader(file)}
    report = result.stdout + result.stderr
    for route in ["/api/terms", "/api/users", "/api/users/{id}/accept-tos"]:
        assert int(rows[route]["Request Count"]) > 0, f"{route} was never called\n{report}"
    assert int(rows["Aggregated"]["Failure Count"]) == 0, report
    assert result.returncode == 0, report
