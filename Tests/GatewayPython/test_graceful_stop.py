"""The gateway's SIGTERM stop, as a rolling update meets it: requests in flight when the signal
comes are answered (and committed), new connections are refused at once so the load balancer
sends them elsewhere, and the process exits 0 within the time Kubernetes gives it.

A gateway of its own in front of the shared stack. Eight clients each send the head of an
acceptance (`PUT /api/users/{id}/accept-tos`) and then its body a byte every 100 ms, so every one is
still arriving when SIGTERM comes and ends after it; four more keep making ordinary acceptances on
new connections until they are refused.
"""
import http.client
import json
import signal
import socket
import subprocess
import threading
import time
import uuid

STOP_BOUND_S = 10.0  # the deployments' terminationGracePeriodSeconds leaves room for this and the preStop pause


def connect(url):
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=15)


def read_status(sock):
    """The status code of the one response on `sock` (the request asked to close after it)."""
    reply = b""
    while b"\r\n" not in reply:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError(f"closed before an answer ({reply!r})")
        reply += chunk
    return int(reply.split(b" ", 2)[1])


def test_sigterm_answers_every_request_in_flight_and_exits_in_time(stack):
    process, url = stack.extra_gateway_process(GATEWAY_BODY_TIMEOUT="30s", GATEWAY_HEADER_TIMEOUT="30s")
    users = [stack.signed_up_user(email=f"stop-{i}@example.com") for i in range(12)]
    _, terms = stack.request("GET", "/api/terms")
    run = uuid.uuid4().hex[:8]
    outcomes, lock = [], threading.Lock()
    sigterm = threading.Event()
    keys = {}

    def record(kind, value):
        with lock:
            outcomes.append((kind, value))

    def dribbling(index):
        user_id, token = users[index]
        key = f"stop-{run}-slow-{index}"
        body = json.dumps({"tos_version": terms["version"]}).encode()
        head = (f"PUT /api/users/{user_id}/accept-tos HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer {token}\r\n"
                f"Idempotency-Key: {key}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
                "Connection: close\r\n\r\n").encode()
        try:
            with connect(url) as sock:
                sock.sendall(head)
                for position, byte in enumerate(body):
                    sock.sendall(bytes([byte]))
                    # Half the body before the signal, the rest after it.
                    if position == len(body) // 2:
                        sigterm.wait(15)
                    time.sleep(0.1)
                status = read_status(sock)
            keys[key] = status
            record("in flight", status)
        except OSError as error:
            record("in flight", f"{type(error).__name__}: {error}")

    def ordinary(index):
        user_id, token = users[8 + index]
        n = 0
        while True:
            n += 1
            key = f"stop-{run}-fast-{index}-{n}"
            connection = http.client.HTTPConnection(url.removeprefix("http://"), timeout=15)
            try:
                connection.request("PUT", f"/api/users/{user_id}/accept-tos", json.dumps({"tos_version": terms["version"]}),
                                   {"Authorization": "Bearer " + token, "Idempotency-Key": key,
                                    "Content-Type": "application/json", "Connection": "close"})
                status = connection.getresponse().status
                keys[key] = status
                record("ordinary", status)
            except ConnectionRefusedError:
                record("refused", None)  # the listener is closed: the balancer takes the next pod
                return
            except OSError as error:
                record("ordinary", f"{type(error).__name__}: {error}")
                if sigterm.is_set():
                    return
            finally:
                connection.close()

    threads = [threading.Thread(target=dribbling, args=(i,)) for i in range(8)]
    threads += [threading.Thread(target=ordinary, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)  # every slow client is half-way through its body
    signalled = time.monotonic()
    process.popen.send_signal(signal.SIGTERM)
    sigterm.set()
    try:
        code = process.popen.wait(STOP_BOUND_S + 5)
    except subprocess.TimeoutExpired:
        code = None
    stopped = time.monotonic() - signalled
    for thread in threads:
        thread.join(30)

    in_flight = [value for kind, value in outcomes if kind == "in flight"]
    ordinary_failures = [value for kind, value in outcomes if kind == "ordinary" and value != 200]
    assert in_flight == [200] * 8, f"requests in flight at SIGTERM: {in_flight}"
    assert code == 0, f"exit {code} (output: {process.lines[-10:]})"
    assert stopped <= STOP_BOUND_S, f"the stop took {stopped:.1f} s"
    assert any(kind == "refused" for kind, _ in outcomes), "new connections were still accepted after the stop"
    # A connection the gateway had accepted is answered; one reset while it closed the listener is
    # the only failure a client can see, and then only before any answer (the app retries it).
    assert all(str(value).startswith(("ConnectionResetError", "RemoteDisconnected")) for value in ordinary_failures), \
        ordinary_failures
    # What was answered 200 was committed, once.
    answered = [key for key, status in keys.items() if status == 200]
    # On standard input, so psql interpolates the run id as a quoted literal (it does not in -c).
    rows = subprocess.run(
        ["psql", "-tAX", "-v", "ON_ERROR_STOP=1", "-v", f"run={run}", stack.db_url],
        input="SELECT key FROM accounts.consent_keys WHERE key LIKE '%stop-' || :'run' || '-%';\n",
        capture_output=True, text=True, check=True).stdout.split()
    committed = [row.rsplit(":", 1)[-1] for row in rows]
    assert sorted(committed) == sorted(answered)
    print(f"RELIABILITY gateway-sigterm in-flight-answered={in_flight.count(200)}/8 ordinary-answered="
          f"{sum(1 for kind, value in outcomes if kind == 'ordinary' and value == 200)} resets={len(ordinary_failures)} "
          f"stopped-after={stopped:.2f}s exit={code}")
