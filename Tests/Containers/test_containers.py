"""The packaged product: the image docker-compose.yml builds, brought up through deploy/compose,
checked against the published gateway port, operated with `compass` from the image, and faulted
from the host (deploy/test-containers runs it; the tests run in this file's order).
"""
import hashlib
import io
import os
import pathlib
import secrets
import signal
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
import uuid

import pytest
from supabase import create_client
from tusclient import client as tus_client

from deployment import CORS_ORIGIN, IMAGE, MOUNT, SERVICES, AcceptanceLoad, podman

UID = GID = 10001


# The deployment as it comes up ------------------------------------------------------------------

def test_every_container_comes_up_healthy(deployment):
    print(f"test-containers: up and healthy in {deployment.up_seconds:.1f} s")
    assert deployment.wait_healthy(timeout=5) < 5
    # db-roles ran once and succeeded; only the gateway is published.
    roles = deployment.state("db-roles")
    assert not roles["Running"] and roles["ExitCode"] == 0
    for service in SERVICES + ("postgres",):
        ports = podman("port", deployment.container(service))
        if service == "gateway":
            assert ports.split() == ["8080/tcp", "->", f"0.0.0.0:{deployment.port}"], ports
        else:
            assert ports == "", f"{service} publishes {ports}"


def test_the_image_runs_as_its_non_root_user(deployment):
    assert podman("image", "inspect", "-f", "{{.Config.User}}", IMAGE) == f"{UID}:{GID}"
    # The uid and gid have entries: a process sees names, not bare numbers.
    assert podman("run", "--rm", "--network", "none", IMAGE, "id") == \
        f"uid={UID}(compass) gid={GID}(compass) groups={GID}(compass)"
    for service in SERVICES:
        status = deployment.compose("exec", "-T", service, "cat", "/proc/1/status").stdout
        ids = {line.split(":")[0]: line.split()[1:] for line in status.splitlines() if line.startswith(("Uid:", "Gid:"))}
        assert ids == {"Uid": [str(UID)] * 4, "Gid": [str(GID)] * 4}, f"{service}: {ids}"
        # deploy/k8s's securityContext, as the override asks: no capabilities, no new privileges.
        fields = {line.split(":")[0]: line.split()[1] for line in status.splitlines() if line.startswith(("CapEff:", "CapPrm:", "NoNewPrivs:"))}
        assert fields == {"CapEff": "0" * 16, "CapPrm": "0" * 16, "NoNewPrivs": "1"}, f"{service}: {fields}"


def test_every_service_runs_with_a_read_only_root_filesystem(deployment):
    for service in SERVICES:
        assert deployment.inspect(service, "{{.HostConfig.ReadonlyRootfs}}") == "true", service
        probe = deployment.compose("exec", "-T", service, "sh", "-c", "touch /app/probe", check=False)
        assert probe.returncode != 0 and "Read-only file system" in probe.stderr + probe.stdout, service


# Seed 004, the legal pages, the API description ------------------------------------------------

def test_seed_004_routes(deployment, shared):
    status, terms, _ = deployment.get("/api/terms")
    assert status == 200 and terms["content"].startswith("# ") and terms["version"]
    apple_id = "containers." + uuid.uuid4().hex
    body = {"apple_id": apple_id, "email": apple_id + "@example.com", "name": "Seed", "state": "AL",
            "eligibility_certified": True, "tos_version": terms["version"]}
    # Without credentials: refused, nothing made.
    status, error, _ = deployment.request("POST", "/api/users", body)
    assert status == 401 and "error" in error
    apple = {"Authorization": "Bearer " + deployment.apple.token(apple_id)}
    # A restricted state: 403 with the seed's {"error": …}, and no user.
    status, error, _ = deployment.request("POST", "/api/users", dict(body, state="NV"), apple)
    assert status == 403 and isinstance(error["error"], str) and error["error"]
    status, user, _ = deployment.request("POST", "/api/users", body, apple)
    assert status == 200 and user["state"] == "AL" and user["hasConfirmedEligibility"] and user["tos_version"] == terms["version"]
    # An existing user skips eligibility: the same account back.
    status, again, _ = deployment.request("POST", "/api/users", {"apple_id": apple_id, "email": None, "name": None}, apple)
    assert status == 200 and again["id"] == user["id"]
    status, accepted, _ = deployment.request("PUT", f"/api/users/{user['id']}/accept-tos", {"tos_version": terms["version"]}, apple)
    assert status == 200 and accepted["has_accepted_tos"] is True and accepted["needs_to_accept_tos"] is False
    # Someone else's id: refused.
    status, error, _ = deployment.request("PUT", f"/api/users/{uuid.uuid4()}/accept-tos", {"tos_version": terms["version"]}, apple)
    assert status == 403 and "error" in error
    shared["seed_user"] = (user["id"].lower(), apple_id, body["email"])


@pytest.mark.parametrize("path, heading", [("/legal/privacy", "Privacy Policy"), ("/legal/terms", "Terms")])
def test_legal_pages(deployment, path, heading):
    status, page, headers = deployment.get(path, raw=True)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert b"<h1" in page and heading.encode() in page


def test_openapi_describes_the_seed_routes(deployment):
    status, document, headers = deployment.get("/openapi.json")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    assert document["openapi"].startswith("3.")
    assert {"/api/terms", "/api/users", "/api/users/{id}/accept-tos"} <= set(document["paths"])
    assert "put" in document["paths"]["/api/users/{id}/accept-tos"]


# Settings from .env, through the published port ---------------------------------------------

def test_settings_from_env_take_effect(deployment, shared):
    """GATEWAY_CORS_ORIGINS and GATEWAY_TRUSTED_PROXIES, written into the keys file as an operator
    does, reach the gateway's container and act: a preflight from the allowed origin is answered
    for it (and one from another origin is not), and an acceptance whose proxy says who the client
    is records that address."""
    status, _, headers = deployment.request("OPTIONS", "/api/terms", headers={
        "Origin": CORS_ORIGIN, "Access-Control-Request-Method": "GET"}, raw=True)
    assert status in (200, 204) and headers.get("Access-Control-Allow-Origin") == CORS_ORIGIN, (status, dict(headers))
    _, _, other = deployment.request("OPTIONS", "/api/terms", headers={
        "Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET"}, raw=True)
    assert other.get("Access-Control-Allow-Origin") is None
    user = deployment.sign_up()
    client = "203.0.113.77"
    status, body, _ = deployment.request(
        "PUT", f"/api/users/{user.id}/accept-tos", {"tos_version": deployment.terms_version()},
        {"Authorization": "Bearer " + user.token, "Idempotency-Key": "xff-" + uuid.uuid4().hex, "X-Forwarded-For": client})
    assert status == 200, body
    wait_chained(deployment)
    recorded = deployment.sql(
        "SELECT r.client_ip FROM audit.records r JOIN audit.subjects s ON r.subject = s.pseudonym "
        "WHERE s.user_id = :'user'::uuid AND r.action = 'accept' ORDER BY r.recorded_ms DESC LIMIT 1", user=user.id)
    assert recorded == [[client]], recorded


# compass from the image, on the containerized bus, with the operator's key ---------------------

def test_compass_audit_verify_and_users_find(deployment, shared):
    verified = deployment.compass("audit", "verify", check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    user_id, apple_id, email = shared["seed_user"]
    for who in (email, apple_id, user_id):
        found = deployment.compass("users", "find", who)
        assert user_id in found.stdout.lower(), (who, found.stdout)
    missing = deployment.compass("users", "find", "nobody-" + uuid.uuid4().hex + "@example.com", check=False)
    assert user_id not in missing.stdout.lower()


def test_compass_legal_publish_reaches_the_gateway(deployment, shared):
    _, terms, _ = deployment.get("/api/terms")
    version = time.strftime("%Y-%m-%d", time.gmtime()) + "-ct" + secrets.token_hex(3)
    marker = "Container test " + uuid.uuid4().hex
    text = terms["content"].rstrip() + f"\n\n## {marker}\n\nPublished by deploy/test-containers.\n"
    # A file on the host, as an operator has it: deploy/compose hands it over on standard input.
    on_host = pathlib.Path(tempfile.mkdtemp(prefix="compass-terms-")) / "terms.md"
    on_host.write_text(text)
    published = deployment.compass("legal", "publish", "--type", "terms_of_service", "--version", version,
                                   "--file", str(on_host), check=False)
    assert published.returncode == 0, published.stdout + published.stderr
    # The gateway learns it from Legal's event: the JSON route and the page.
    deadline = time.monotonic() + 15
    while deployment.get("/api/terms")[1]["version"] != version:
        assert time.monotonic() < deadline, "the published version did not reach /api/terms"
        time.sleep(0.2)
    _, current, _ = deployment.get("/api/terms")
    assert marker in current["content"]
    _, page, _ = deployment.get("/legal/terms", raw=True)
    assert marker.encode() in page
    shown = deployment.compass("legal", "show", "--type", "terms_of_service", "--history")
    assert version in shown.stdout
    # The same version with another text is refused and changes nothing. This file is named by its
    # path inside the container (the host has no such path), which is passed on as it is.
    (deployment.mount / "other.md").write_text(text + "\nAnother line.\n")
    os.chmod(deployment.mount / "other.md", 0o644)
    refused = deployment.compass("legal", "publish", "--type", "terms_of_service", "--version", version,
                                 "--file", f"{MOUNT}/other.md", check=False)
    assert refused.returncode != 0
    assert deployment.get("/api/terms")[1]["content"] == current["content"]
    shared["published"] = (version, marker)


# The Supabase client: sign-in, a tus upload, its file_url ---------------------------------------

def test_supabase_sign_in_tus_upload_and_file_url(deployment, shared):
    apple_id = "containers." + uuid.uuid4().hex
    raw_nonce = secrets.token_urlsafe(24)
    supabase = create_client(deployment.url, deployment.anon_key)
    signed_in = supabase.auth.sign_in_with_id_token({
        "provider": "apple", "nonce": raw_nonce,
        "token": deployment.apple.token(apple_id, nonce=hashlib.sha256(raw_nonce.encode()).hexdigest(), email="ct@example.com")})
    token = signed_in.session.access_token
    assert signed_in.user.app_metadata["provider"] == "apple" and signed_in.session.token_type == "bearer"
    status, user, _ = deployment.request(
        "POST", "/api/users", {"apple_id": apple_id, "email": "ct@example.com", "name": "Ct", "state": "AL",
                               "eligibility_certified": True, "tos_version": deployment.terms_version()},
        {"Authorization": "Bearer " + token})
    assert status == 200, user
    assert str(uuid.UUID(supabase.auth.get_user().user.id)) == user["id"].lower()

    data = os.urandom(1_500_000)
    uploader = tus_client.TusClient(deployment.url + "/api/uploads", headers={"Authorization": "Bearer " + token})
    upload = uploader.uploader(file_stream=io.BytesIO(data), chunk_size=512 * 1024, metadata={
        "type": "transcript", "filename": "grades.bin", "filetype": "application/octet-stream", "title": "Grades"})
    upload.upload()
    assert upload.offset == len(data)
    document_id = upload.url.rstrip("/").rsplit("/", 1)[-1]
    supabase.postgrest.auth(token)
    row = supabase.from_("documents").select("id, title, file_url").eq("id", document_id).single().execute().data
    assert row["title"] == "Grades"
    file_url = row["file_url"]
    assert file_url.startswith(deployment.url + "/storage/v1/object/sign/documents/" + document_id + "/")
    with urllib.request.urlopen(file_url, timeout=30) as response:  # no headers at all
        assert response.status == 200 and response.read() == data
    with urllib.request.urlopen(urllib.request.Request(file_url, headers={"Range": "bytes=1000-1999"}), timeout=30) as response:
        assert response.status == 206 and response.read() == data[1000:2000]
        assert response.headers["Content-Range"] == f"bytes 1000-1999/{len(data)}"
    shared["document"] = (apple_id, document_id, hashlib.sha256(data).hexdigest(), len(data))


# Faults under acceptance load -------------------------------------------------------------------

@pytest.fixture(scope="module")
def users(deployment):
    return [deployment.sign_up() for _ in range(8)]


def accept_counts(deployment, users, retries: list | None = None) -> dict[str, int]:
    """Each user's accept records in their history, read through the API as the user."""
    return {user.id: sum(1 for record in deployment.accept_records(user, retries) if record["receipt"]["action"] == "accept")
            for user in users}


def committed_keys(deployment, run_id: str) -> dict[str, set[str]]:
    """The client keys of the load's acceptances Accounts committed (its idempotency key of an act
    ends with the client's `Idempotency-Key`), per user."""
    rows = deployment.sql("SELECT user_id, key FROM accounts.consent_keys WHERE key LIKE '%:containers-' || :'run' || '-%'",
                          run=run_id)
    keys: dict[str, set[str]] = {}
    for user_id, key in rows:
        keys.setdefault(user_id.lower(), set()).add(key.rsplit(":", 1)[-1])
    return keys


def chained_accepts(deployment, users) -> dict[str, int]:
    """Each user's accept records in Audit's chain, counted in its tables."""
    rows = deployment.sql(
        "SELECT s.user_id, count(*) FROM audit.subjects s JOIN audit.records r ON r.subject = s.pseudonym "
        "WHERE r.action = 'accept' AND s.user_id = ANY (string_to_array(:'users', ',')::uuid[]) GROUP BY s.user_id",
        users=",".join(user.id for user in users))
    counts = {user.id: 0 for user in users}
    counts.update({user_id.lower(): int(count) for user_id, count in rows})
    return counts


def wait_chained(deployment, timeout=120) -> float:
    """Seconds until Accounts' consent stream is empty (Audit chained every act), bounded."""
    start = time.monotonic()
    while int(deployment.sql("SELECT count(*) FROM accounts.consent_outbox")[0][0]) > 0:
        assert time.monotonic() - start < timeout, f"Audit did not chain the consent stream within {timeout} s"
        time.sleep(0.5)
    return time.monotonic() - start


def ready(deployment, service) -> bool:
    """The new process answers its own readiness (what the health check asks)."""
    if service == "postgres":
        probe = podman("exec", deployment.container(service), "pg_isready", "-U", "compass", "-d", "compass", check=False, timeout=10)
        return "accepting connections" in probe
    try:
        podman("exec", deployment.container(service), "curl", "-fsS", "http://127.0.0.1:8081/readyz", timeout=10)
        return True
    except (RuntimeError, subprocess.TimeoutExpired):
        # An exec that hangs (seen right after a restart, on a new podman on a slow machine) is
        # "not ready yet": the caller asks again until its own deadline. (`TimeoutExpired` is no
        # `TimeoutError`: caught as one, it ended the test at the first slow exec.)
        return False


def longest_pause(load: AcceptanceLoad, start: float, end: float) -> float:
    """The longest time without an acknowledged acceptance between start and end."""
    with load.lock:
        times = sorted(t for t in load.acks if start <= t <= end)
    points = [start, *times, end]
    return max(b - a for a, b in zip(points, points[1:]))


def under_load(deployment, users, faults, name, inject):
    """Runs `inject` (which returns once the system recovered, with its figures, and the instants
    `_down` and `_up` the fault began and ended) under acceptance load. Every acknowledged
    acceptance is then looked for three ways: committed by Accounts (`missing_in_accounts`,
    a loss), in the user's history as read the moment the load stops (`missing_in_read`: the reads
    promise a user their own acts), and chained by Audit once the stream drained
    (`missing_in_audit`, `duplicated`); and the chain verifies."""
    baseline = accept_counts(deployment, users)
    chained_before = chained_accepts(deployment, users)
    load = AcceptanceLoad(deployment, users, deployment.terms_version()).start()
    try:
        started = time.monotonic()
        load.wait_acks_after(started, 100, 60)
        t0 = time.monotonic()
        figures = inject(t0)
        recovered = time.monotonic()
        down, up = figures.pop("_down", t0), figures.pop("_up", recovered)
        during_fault = load.acknowledged_since(t0)
        load.wait_acks_after(recovered, 100, 120)
        pause = longest_pause(load, t0, recovered)
    finally:
        # Stopped whatever happened: a load left running by a failed fault counts its acceptances
        # in the next test's (as "doubled") and appends while it verifies the chain.
        load.stop()
    read_retries: list = []
    read = accept_counts(deployment, users, read_retries)
    committed = committed_keys(deployment, load.run_id)
    drained = wait_chained(deployment)
    chained = chained_accepts(deployment, users)
    missing_in_accounts = missing_in_read = missing_in_audit = duplicated = 0
    for index, user in enumerate(users):
        acknowledged = load.keys[index]
        missing_in_accounts += len(acknowledged - committed.get(user.id, set()))
        missing_in_read += max(0, baseline[user.id] + len(acknowledged) - read[user.id])
        difference = chained[user.id] - chained_before[user.id] - len(acknowledged)
        missing_in_audit += max(0, -difference)
        duplicated += max(0, difference)
    verified = deployment.compass("audit", "verify", check=False)
    row = dict(fault=name, acknowledged=load.total, acked_before_down=load.acknowledged_between(t0, down),
               acked_while_down=load.acknowledged_between(down, up), acked_after_up=load.acknowledged_between(up, recovered),
               during_fault=during_fault, lost=missing_in_accounts, missing_in_read=missing_in_read,
               missing_in_audit=missing_in_audit, duplicated=duplicated, read_503s=len(read_retries),
               audit_drained_s=round(drained, 2), abandoned=load.abandoned, longest_pause=round(pause, 2),
               failed_attempts=dict(load.failures), chain_verifies=verified.returncode == 0, **figures)
    faults.append(row)
    print("RELIABILITY containers", " ".join(f"{key}={value}" for key, value in row.items()))
    assert load.abandoned == 0, f"{load.abandoned} acceptances never acknowledged"
    assert missing_in_accounts == 0, f"{missing_in_accounts} acknowledged acceptances Accounts never committed"
    assert missing_in_read == 0, f"{missing_in_read} acknowledged acceptances missing from the users' histories read after the load"
    assert missing_in_audit == 0 and duplicated == 0, f"{missing_in_audit} acknowledged acceptances never chained, {duplicated} doubled"
    assert verified.returncode == 0, verified.stdout + verified.stderr
    return row


@pytest.mark.parametrize("service", SERVICES)
def test_kill_9_of_a_service_process_is_restarted_and_loses_nothing(deployment, users, faults, service):
    def inject(t0):
        container = deployment.container(service)
        pid = int(deployment.inspect(service, "{{.State.Pid}}"))
        restarts = int(deployment.inspect(service, "{{.RestartCount}}"))
        assert pid > 0
        os.kill(pid, signal.SIGKILL)  # from the host: a crash, not a user stop
        killed = time.monotonic()
        while True:
            state = deployment.state(service)
            if state["Running"] and state["Pid"] not in (0, pid):
                break
            assert time.monotonic() - killed < 60, f"{service} was not restarted: {state}"
            time.sleep(0.05)
        restarted = time.monotonic()
        while not ready(deployment, service):
            assert time.monotonic() - killed < 90, f"{service} did not become ready again"
            time.sleep(0.1)
        ready_at = time.monotonic()
        assert deployment.container(service) == container, "a new container, not a restart"
        assert int(deployment.inspect(service, "{{.RestartCount}}")) == restarts + 1
        return dict(restarted_s=round(restarted - killed, 2), ready_s=round(ready_at - killed, 2))

    row = under_load(deployment, users, faults, f"kill -9 {service}", inject)
    deployment.wait_healthy(timeout=60)
    assert row["ready_s"] < 60


def test_postgres_stopped_for_20_s_services_recover_without_restart(deployment, users, faults):
    def inject(t0):
        before = {service: deployment.inspect(service, "{{.State.StartedAt}} {{.RestartCount}} {{.State.Pid}}") for service in SERVICES}
        postgres = deployment.container("postgres")
        stop = time.monotonic()
        podman("stop", "-t", "10", postgres)
        stopped = time.monotonic()
        time.sleep(max(0.0, 20 - (stopped - stop)))
        podman("start", postgres)
        started = time.monotonic()
        while not ready(deployment, "postgres"):
            assert time.monotonic() - started < 60, "PostgreSQL did not accept connections again"
            time.sleep(0.1)
        pg_ready = time.monotonic()
        # The services find it again by themselves: every one ready, none restarted.
        for service in SERVICES:
            while not ready(deployment, service):
                assert time.monotonic() - started < 90, f"{service} did not become ready again"
                time.sleep(0.2)
        services_ready = time.monotonic()
        after = {service: deployment.inspect(service, "{{.State.StartedAt}} {{.RestartCount}} {{.State.Pid}}") for service in SERVICES}
        assert after == before, f"services were restarted: {before} -> {after}"
        # Down from when `podman stop` returned (PostgreSQL had exited) to when `podman start`
        # returned. Not to `pg_ready`: the services reconnect and commit before this probe (a
        # `podman exec`, seconds on a loaded machine) sees PostgreSQL accept, and those
        # acknowledgements came after the outage, not during it.
        return dict(stopped_s=round(started - stop, 1), stop_command_s=round(stopped - stop, 2),
                    pg_ready_after_start_s=round(pg_ready - started, 2),
                    services_ready_after_start_s=round(services_ready - started, 2), before_s=round(stop - t0, 2),
                    _down=stopped, _up=started)

    row = under_load(deployment, users, faults, "postgres stopped 20 s", inject)
    deployment.wait_healthy(timeout=60)
    assert row["services_ready_after_start_s"] < 60


def test_down_then_up_keeps_every_row_and_document(deployment, users, shared, faults):
    counts = accept_counts(deployment, users)
    version, marker = shared["published"]
    ids = {service: deployment.container(service) for service in SERVICES + ("postgres",)}
    down = time.monotonic()
    deployment.down()
    assert podman("ps", "-a", "-q", "--filter", "label=com.docker.compose.project=" + deployment.env["COMPOSE_PROJECT_NAME"]) == ""
    up_seconds = deployment.up()
    recovered = time.monotonic() - down
    assert all(deployment.container(service) != ids[service] for service in ids), "the containers were not made anew"
    assert accept_counts(deployment, users) == counts
    _, terms, _ = deployment.get("/api/terms")
    assert terms["version"] == version and marker in terms["content"]
    user_id, apple_id, email = shared["seed_user"]
    assert user_id in deployment.compass("users", "find", email).stdout.lower()
    # The document: its bytes through a fresh file_url.
    apple_id, document_id, digest, length = shared["document"]
    body = deployment.document_bytes(apple_id, document_id)
    assert len(body) == length and hashlib.sha256(body).hexdigest() == digest
    verified = deployment.compass("audit", "verify", check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    row = dict(fault="down, then up", acknowledged=sum(counts.values()), lost=0, duplicated=0, up_s=round(up_seconds, 1),
               recovered_s=round(recovered, 1), chain_verifies=True)
    faults.append(row)
    print("RELIABILITY containers", " ".join(f"{key}={value}" for key, value in row.items()))


def test_nothing_written_outside_the_database(deployment):
    """podman gives a read-only container tmpfs at /tmp, /var/tmp and /run (Kubernetes does not):
    none of the services may have written a file there either."""
    for service in SERVICES:
        found = deployment.compose("exec", "-T", service, "sh", "-c",
                                   f"find /tmp /var/tmp /run /dev/shm -type f ! -path '{MOUNT}/*' ! -name .containerenv 2>/dev/null").stdout
        assert found.strip() == "", f"{service} wrote {found.split()}"
