"""Slow and stalled clients against a gateway with short limits (its own process in front of the
shared stack): a slowloris client is cut off at the header deadline while others are served, the
connection cap refuses one connection more while the admitted ones still work, and a client that
stops reading a download is disconnected at the write deadline without the gateway buffering the
file."""
import io
import os
import socket
import threading
import time
import urllib.request

import pytest
from tusclient import client as tus_client

HEADER_TIMEOUT = 1.0
WRITE_TIMEOUT = 1.0
MAX_CONNECTIONS = 12


@pytest.fixture(scope="module")
def guarded(stack):
    return stack.extra_gateway(
        GATEWAY_HEADER_TIMEOUT=f"{int(HEADER_TIMEOUT * 1000)}ms", GATEWAY_WRITE_TIMEOUT=f"{int(WRITE_TIMEOUT * 1000)}ms")


@pytest.fixture(scope="module")
def capped(stack):
    # A long header deadline, so the connections held open are not closed by it meanwhile.
    return stack.extra_gateway(GATEWAY_MAX_CONNECTIONS=str(MAX_CONNECTIONS), GATEWAY_HEADER_TIMEOUT="60s")


def connect(url):
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def closed_within(sock, seconds):
    """Whether the server closes `sock` within `seconds` (reads until EOF or a reset)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def healthz(url):
    with urllib.request.urlopen(url + "/healthz", timeout=10) as response:
        return response.status


def test_slowloris_is_cut_off_at_the_header_deadline(guarded):
    clients = [connect(guarded) for _ in range(8)]
    started = time.monotonic()
    stop = threading.Event()

    def dribble():
        # A header byte every 300 ms: never a whole head.
        for sock in clients:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: ")
        while not stop.is_set():
            for sock in clients:
                try:
                    sock.sendall(b"a")
                except OSError:
                    pass
            time.sleep(0.3)

    thread = threading.Thread(target=dribble, daemon=True)
    thread.start()
    try:
        # Others are served meanwhile.
        assert healthz(guarded) == 200
        # The dribble never stops, so only the header deadline can close them: waited for up to
        # 30 s, a bound against a server that never does (a loaded machine delays its timers), and
        # not before the deadline.
        assert all(closed_within(sock, 30) for sock in clients)
        took = time.monotonic() - started
        assert HEADER_TIMEOUT * 0.8 <= took, took
        assert healthz(guarded) == 200
        print(f"SLOW-CLIENTS slowloris: 8 dribbling connections closed after {took:.2f} s (header deadline {HEADER_TIMEOUT} s)")
    finally:
        stop.set()
        for sock in clients:
            sock.close()


def test_a_keep_alive_connection_lives_while_requests_come_and_closes_at_the_header_deadline(guarded):
    """The header deadline runs from each response's end: requests 0.3 s apart keep a connection
    open past the first deadline (the guard's timer, armed for it, finds the deadline moved and
    waits on), and silence after the last response closes it one deadline later."""
    sock = connect(guarded)
    try:
        # Five requests, 0.3 s of silence after each (0.7 s to spare for a loaded machine): together
        # past the first deadline.
        for _ in range(5):
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            response = b""
            while b"\r\n\r\n" not in response or not response.rstrip().endswith(b"}"):
                chunk = sock.recv(65536)
                assert chunk, "the connection was closed while requests kept coming within the deadline"
                response += chunk
            assert response.startswith(b"HTTP/1.1 200")
            answered = time.monotonic()
            time.sleep(HEADER_TIMEOUT * 0.3)
        # Closed once silent (waited for up to 30 s, against a server that never closes it), and not
        # before a deadline has passed since the last response.
        assert closed_within(sock, 30)
        idle = time.monotonic() - answered
        assert HEADER_TIMEOUT * 0.8 <= idle, idle
        print(f"SLOW-CLIENTS keep-alive: 5 requests over {5 * HEADER_TIMEOUT * 0.3:.1f} s of pauses served on one connection, "
              f"closed {idle:.2f} s after the last response (header deadline {HEADER_TIMEOUT} s)")
    finally:
        sock.close()


def test_the_connection_cap_refuses_one_more_while_the_others_work(capped):
    guarded = capped
    admitted = []
    refused = None
    for _ in range(MAX_CONNECTIONS + 5):
        sock = connect(guarded)
        if closed_within(sock, 0.3):
            refused = sock
            break
        admitted.append(sock)
    try:
        assert refused is not None, "every connection was admitted"
        assert 0 < len(admitted) <= MAX_CONNECTIONS
        # An admitted connection still gets its answer.
        admitted[0].settimeout(10)
        admitted[0].sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := admitted[0].recv(65536):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer[:100]
        print(f"SLOW-CLIENTS cap: {len(admitted)} admitted, the next closed at once (cap {MAX_CONNECTIONS})")
    finally:
        for sock in admitted + ([refused] if refused else []):
            sock.close()
    # Once they are gone, new connections are admitted again.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if healthz(guarded) == 200:
                break
        except OSError:
            time.sleep(0.2)
    else:
        pytest.fail("no connection admitted after the others closed")


def gateway_rss_kib(stack, url):
    port = int(url.rsplit(":", 1)[1])
    for process in stack.processes:
        if process.port("http") == port:
            with open(f"/proc/{process.popen.pid}/status") as status:
                return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    raise RuntimeError("gateway process not found")


def test_a_client_that_stops_reading_a_download_is_disconnected(stack, guarded):
    _, token = stack.signed_up_user()
    data = os.urandom(12 * 1024 * 1024)
    uploader = tus_client.TusClient(stack.url + "/api/uploads", headers={"Authorization": "Bearer " + token}).uploader(
        file_stream=io.BytesIO(data), chunk_size=4 * 1024 * 1024,
        metadata={"type": "highlight_video", "filename": "big.bin", "filetype": "application/octet-stream", "title": "Big"})
    uploader.upload()
    document_id = uploader.url.rstrip("/").rsplit("/", 1)[-1]
    before = gateway_rss_kib(stack, guarded)
    sock = connect(guarded)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(f"GET /api/documents/{document_id}/content HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
    time.sleep(WRITE_TIMEOUT + 3)  # reads nothing
    during = gateway_rss_kib(stack, guarded)
    received = 0
    sock.settimeout(10)
    try:
        while chunk := sock.recv(1 << 20):
            received += len(chunk)
    except (ConnectionResetError, socket.timeout):
        pass
    sock.close()
    assert received < len(data), "the whole file arrived: the connection was not cut"
    assert during - before < 16 * 1024, f"the gateway grew {during - before} KiB holding an unread download"
    assert healthz(guarded) == 200
    print(f"SLOW-CLIENTS unread download: cut after {received} of {len(data)} bytes; gateway RSS {before} -> {during} KiB")
