"""docker-compose.yml brought up through deploy/compose as a project of its own, for the container
tests (deploy/test-containers): its own COMPOSE_PROJECT_NAME, .env (COMPASS_ENV_FILE), gateway
port and a compose override that mounts a test Apple key set into Accounts and the gateway and
runs every Recruiting Compass container with a read-only root filesystem, no capabilities and no
privilege escalation (as deploy/k8s's securityContext asks).

Everything the tests check goes through the published gateway port, `deploy/compose compass …`
(the CLI in the gateway's container with the operator's key) or podman itself (faults).
"""
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

from cryptography.hazmat.primitives import serialization
from supabase import create_client

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "GatewayPython"))
from stack import BUNDLE_ID, AppleStandIn  # noqa: E402  (the Python checks' Apple stand-in)

IMAGE = os.environ.get("COMPASS_IMAGE", "localhost/recruiting-compass:latest")
PROJECT = os.environ.get("COMPOSE_PROJECT_NAME", "compass-test")
SERVICES = ("legal", "audit", "accounts", "documents", "gateway")
CONTAINERS_CONF = str(ROOT / "deploy" / "containers" / "containers.conf")
# The web origin the keys file allows (GATEWAY_CORS_ORIGINS, set through .env like an operator's).
CORS_ORIGIN = "https://app.compass-test.example"
# Where the test's files (the Apple key set, a legal text) appear inside the containers.
MOUNT = "/run/compass-test"
# The test drives many users from one address: the gateway's per-address and per-user limits
# would stop it (the Python checks turn them off for the same reason).
RATE_LIMITS_OFF = ("GATEWAY_RATE_LIMIT_SIGN_IN_PER_IP", "GATEWAY_RATE_LIMIT_SIGN_IN_PER_USER",
                   "GATEWAY_RATE_LIMIT_ACCEPT_PER_IP", "GATEWAY_RATE_LIMIT_ACCEPT_PER_USER",
                   "GATEWAY_RATE_LIMIT_EXPORT_PER_USER")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def podman(*args, check=True, timeout=600) -> str:
    env = dict(os.environ, CONTAINERS_CONF=os.environ.get("CONTAINERS_CONF", CONTAINERS_CONF))
    done = subprocess.run(["podman", *args], env=env, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout.strip()


class Deployment:
    def __init__(self, workdir: pathlib.Path | None = None, port: int | None = None, project: str | None = None):
        self.project = project or PROJECT
        self.workdir = pathlib.Path(workdir or os.environ.get("CONTAINERS_TEST_DIR") or tempfile.mkdtemp(prefix="compass-test-"))
        self.port = int(port or os.environ.get("GATEWAY_PORT") or free_port())
        self.url = f"http://127.0.0.1:{self.port}"
        self.env_file = self.workdir / "env"
        mount = self.workdir / "mount"
        mount.mkdir(parents=True, exist_ok=True)
        # uid 10001 reads these through a bind mount.
        os.chmod(self.workdir, 0o755)
        os.chmod(mount, 0o755)
        self.mount = mount
        self.apple = self._apple(mount)
        if not self.env_file.exists():
            keys = podman("run", "--rm", "--network", "none", IMAGE, "compass", "keys", "generate")
            self.env_file.write_text(keys + "\n")
            os.chmod(self.env_file, 0o600)
        if "GATEWAY_CORS_ORIGINS=" not in self.env_file.read_text():
            # Documented settings an operator puts in .env (test_settings_from_env sees each act):
            # the app's web origin, and the proxies whose X-Forwarded-For names the client (the
            # host reaches the published port through podman's bridge).
            with self.env_file.open("a") as env:
                env.write(f"GATEWAY_CORS_ORIGINS={CORS_ORIGIN}\n"
                          "GATEWAY_TRUSTED_PROXIES=127.0.0.0/8,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16\n")
        self.override = self.workdir / "override.yml"
        self.override.write_text(self._override())
        self.env = dict(os.environ, COMPOSE_PROJECT_NAME=self.project, COMPASS_ENV_FILE=str(self.env_file),
                        GATEWAY_PORT=str(self.port), COMPOSE_FILE=f"{ROOT / 'docker-compose.yml'}:{self.override}",
                        COMPASS_IMAGE=IMAGE, COMPOSE_HTTP_TIMEOUT="600",
                        CONTAINERS_CONF=os.environ.get("CONTAINERS_CONF", CONTAINERS_CONF))
        self._anon_key = None

    def _apple(self, mount: pathlib.Path) -> AppleStandIn:
        """The test's Apple key: made once per working folder (the services read its key set once)."""
        pem = self.workdir / "apple.pem"
        if pem.exists():
            apple = AppleStandIn.__new__(AppleStandIn)
            apple.key = serialization.load_pem_private_key(pem.read_bytes(), password=None)
            apple.jwks_path = str(mount / "jwks.json")
            return apple
        apple = AppleStandIn(str(mount))
        pem.write_bytes(apple.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
        os.chmod(pem, 0o600)
        os.chmod(apple.jwks_path, 0o644)
        return apple

    def _override(self) -> str:
        # As deploy/k8s runs them: read-only root, no capabilities, no privilege escalation.
        services = {name: {"read_only": True, "cap_drop": ["ALL"], "security_opt": ["no-new-privileges:true"]} for name in SERVICES}
        volume = [f"{self.mount}:{MOUNT}:ro"]
        services["accounts"].update(volumes=volume, environment={"ACCOUNTS_APPLE_JWKS": f"{MOUNT}/jwks.json"})
        services["gateway"].update(volumes=volume, environment=dict(
            {"GATEWAY_APPLE_JWKS": f"{MOUNT}/jwks.json"}, **{name: "off" for name in RATE_LIMITS_OFF}))
        # JSON is YAML: no YAML library needed.
        return json.dumps({"version": "2.4", "services": services}, indent=2) + "\n"

    # compose and podman ------------------------------------------------------------------------

    def compose(self, *args, check=True, timeout=900, stdin=None) -> subprocess.CompletedProcess:
        done = subprocess.run([str(ROOT / "deploy" / "compose"), *args], cwd=ROOT, env=self.env, capture_output=True,
                              text=True, timeout=timeout, input=stdin)
        if check and done.returncode != 0:
            failed = self.exited_with_errors() if "up" in args else ""
            raise RuntimeError(f"deploy/compose {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}{failed}")
        return done

    def exited_with_errors(self, lines=40) -> str:
        """Every project container that exited non-zero, with the end of its log: what compose's
        "Container … exited with code 1" leaves out (a one-shot job's error, a crash at start)."""
        try:
            listed = podman("ps", "-a", "--filter", f"label=com.docker.compose.project={self.project}",
                            "--format", "{{.ID}} {{.Names}} {{.Status}}")
            report = ""
            for line in listed.splitlines():
                identifier, name, status = (line.split(" ", 2) + ["", ""])[:3]
                if status.startswith("Exited") and not status.startswith("Exited (0)"):
                    env = dict(os.environ, CONTAINERS_CONF=os.environ.get("CONTAINERS_CONF", CONTAINERS_CONF))
                    log = subprocess.run(["podman", "logs", "--tail", str(lines), identifier], env=env, text=True,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60).stdout
                    report += f"\n--- {name} ({identifier}): {status}\n{log}"
            return report
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            return f"\n(could not list the exited containers: {error})"

    def compass(self, *args, check=True, timeout=900) -> subprocess.CompletedProcess:
        return self.compose("compass", *args, check=check, timeout=timeout)

    def sql(self, query: str, **variables) -> list[list[str]]:
        """The rows of `query`, run as the postgres superuser in the postgres container, each a list
        of its columns' text. Values travel as psql variables (`:'name'` in the query), never
        formatted into it; the query is an argument of the container's shell, not a file."""
        script = 'query="$1"; shift; printf "%s\\n" "$query" | psql -U compass -d compass -tAX -v ON_ERROR_STOP=1 "$@"'
        settings = [f"--set={name}={value}" for name, value in variables.items()]
        out = self.compose("exec", "-T", "postgres", "sh", "-c", script, "sh", query, "-F", "\t", *settings).stdout
        return [line.split("\t") for line in out.splitlines() if line]

    def inspect_all(self) -> dict[str, dict]:
        """Every container of the project, by compose service: podman's inspect document (two podman calls)."""
        ids = podman("ps", "-a", "-q", "--filter", f"label=com.docker.compose.project={self.project}").split()
        documents = json.loads(podman("inspect", *ids)) if ids else []
        by_service: dict[str, dict] = {}
        for document in documents:
            service = document["Config"]["Labels"].get("com.docker.compose.service")
            if service in by_service:
                raise RuntimeError(f"two {service} containers in {self.project}")
            by_service[service] = document
        return by_service

    def container(self, service: str) -> str:
        ids = podman("ps", "-a", "-q", "--filter", f"label=com.docker.compose.project={self.project}",
                     "--filter", f"label=com.docker.compose.service={service}").split()
        if len(ids) != 1:
            raise RuntimeError(f"expected one {service} container in {self.project}, found {ids}")
        return ids[0]

    def inspect(self, service: str, template: str) -> str:
        return podman("inspect", "-f", template, self.container(service))

    def state(self, service: str) -> dict:
        return json.loads(self.inspect(service, "{{json .State}}"))

    @staticmethod
    def health_of(document: dict | None) -> str:
        state = (document or {}).get("State", {})
        health = state.get("Health") or state.get("Healthcheck") or {}
        return health.get("Status", "") if state.get("Running") else "stopped"

    def health(self, service: str) -> str:
        return self.health_of({"State": self.state(service)})

    def wait_healthy(self, services=SERVICES + ("postgres",), timeout=180) -> float:
        """Waits until every service's container is running and healthy; the seconds it took."""
        started = time.monotonic()
        while True:
            found = self.inspect_all()
            states = {service: self.health_of(found.get(service)) for service in services}
            if all(status == "healthy" for status in states.values()):
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise AssertionError(f"not healthy after {timeout} s: {states}")
            time.sleep(0.5)

    def up(self, timeout=600) -> float:
        started = time.monotonic()
        self.compose("up", "-d", timeout=timeout)
        self.wait_healthy(timeout=timeout)
        self.wait_ready()
        return time.monotonic() - started

    def down(self, volumes=False):
        self.compose("down", *(["-v"] if volumes else []), timeout=900)

    # HTTP on the published port ----------------------------------------------------------------

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.get("/api/terms", timeout=3)[0] == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("the gateway's /api/terms did not answer 200 on the published port")
            time.sleep(0.2)

    def request(self, method, path, body=None, headers=None, timeout=30, raw=False):
        """Status, body (decoded JSON unless raw) and headers; HTTP errors are answers, not exceptions."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path if path.startswith("/") else path, data=data, method=method,
                                         headers=dict(headers or {}))
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, payload, response_headers = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, payload, response_headers = error.code, error.read(), error.headers
        if not raw:
            try:
                payload = json.loads(payload or b"null")
            except ValueError:
                pass
        return status, payload, response_headers

    def get(self, path, **kwargs):
        return self.request("GET", path, **kwargs)

    @property
    def anon_key(self) -> str:
        if self._anon_key is None:
            self._anon_key = self.compose("exec", "-T", "gateway", "Gateway", "--print-anon-key").stdout.strip()
        return self._anon_key

    def terms_version(self) -> str:
        status, terms, _ = self.get("/api/terms")
        assert status == 200, terms
        return terms["version"]

    def document_bytes(self, apple_id: str, document_id: str) -> bytes:
        """A document's bytes as its owner gets them: signed in, a fresh `file_url` from the
        Supabase client, then that URL fetched with no headers."""
        supabase = create_client(self.url, self.anon_key)
        supabase.postgrest.auth(self.sign_in(apple_id)["sessionToken"])
        file_url = supabase.from_("documents").select("file_url").eq("id", document_id).single().execute().data["file_url"]
        with urllib.request.urlopen(file_url, timeout=30) as response:
            return response.read()

    def sign_in(self, apple_id: str) -> dict:
        """Sign in with Apple (the native door): the session, with `sessionToken`."""
        status, session, _ = self.request("POST", "/api/auth/apple", {"identityToken": self.apple.token(apple_id)})
        assert status == 200, session
        return session

    def sign_up(self, state="AL", email=None) -> "User":
        """Seed 004's sign-up of a new Apple id, credential the Apple identity token itself."""
        apple_id = "containers." + uuid.uuid4().hex
        email = email or apple_id + "@example.com"
        body = {"apple_id": apple_id, "email": email, "name": "Container Test", "state": state,
                "eligibility_certified": True, "tos_version": self.terms_version()}
        status, user, _ = self.request("POST", "/api/users", body, {"Authorization": "Bearer " + self.apple.token(apple_id)})
        assert status == 200, user
        session = self.sign_in(apple_id)
        return User(user["id"].lower(), apple_id, email, session["sessionToken"])

    def accept_records(self, user: "User", retries: list | None = None) -> list[dict]:
        """Every terms-of-service record Audit holds for the user, through the API (paged). A 503
        (the user's latest acts still being chained) is asked again after its Retry-After, as the
        app does, for at most 60 s; each such answer is appended to `retries`."""
        records, before, deadline = [], None, time.monotonic() + 60
        while True:
            path = "/api/me/consents/history?documentType=terms_of_service&limit=500" + (f"&before={before}" if before else "")
            status, page, headers = self.get(path, headers={"Authorization": "Bearer " + user.token})
            if status == 401:
                user.token = self.sign_in(user.apple_id)["sessionToken"]
                continue
            if status == 503 and time.monotonic() < deadline:
                if retries is not None:
                    retries.append(page)
                time.sleep(float((headers or {}).get("Retry-After", 1)))
                continue
            assert status == 200, page
            records += page["records"]
            before = page.get("nextBefore") or page.get("before") or page.get("next")
            if not before or not page["records"]:
                return records


class User:
    def __init__(self, user_id, apple_id, email, token):
        self.id, self.apple_id, self.email, self.token = user_id, apple_id, email, token


class AcceptanceLoad:
    """One thread per user, each accepting the terms in effect (`PUT /api/users/{id}/accept-tos`)
    with a new Idempotency-Key once the previous call was acknowledged, and retrying a failed
    call with the same key (as the app does) until it is. Acknowledged = a 200 answer."""

    def __init__(self, deployment: Deployment, users: list[User], version: str):
        self.deployment, self.users, self.version = deployment, users, version
        self.acknowledged = [0] * len(users)
        self.keys: list[set[str]] = [set() for _ in users]  # the acknowledged Idempotency-Keys, per user
        self.failures: dict[str, int] = {}
        self.abandoned = 0
        self.acks: list[float] = []  # monotonic times of acknowledgements
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.run_id = uuid.uuid4().hex[:8]
        self.threads = [threading.Thread(target=self._run, args=(index,), daemon=True) for index in range(len(users))]

    def start(self):
        for thread in self.threads:
            thread.start()
        return self

    def stop(self):
        self.stopped.set()
        for thread in self.threads:
            thread.join(120)

    @property
    def total(self) -> int:
        with self.lock:
            return sum(self.acknowledged)

    def acknowledged_since(self, instant: float) -> int:
        with self.lock:
            return sum(1 for t in self.acks if t >= instant)

    def acknowledged_between(self, start: float, end: float) -> int:
        with self.lock:
            return sum(1 for t in self.acks if start <= t < end)

    def first_ack_after(self, instant: float) -> float | None:
        with self.lock:
            return next((t - instant for t in self.acks if t >= instant), None)

    def wait_acks_after(self, instant: float, count: int, timeout: float):
        deadline = time.monotonic() + timeout
        while self.acknowledged_since(instant) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"fewer than {count} acknowledged acceptances within {timeout} s "
                                     f"(failures so far: {self.failures})")
            time.sleep(0.05)

    def _fail(self, reason: str):
        with self.lock:
            self.failures[reason] = self.failures.get(reason, 0) + 1

    def _run(self, index: int):
        user, n = self.users[index], 0
        while not self.stopped.is_set():
            n += 1
            key = f"containers-{self.run_id}-{index}-{n}"
            deadline = time.monotonic() + 90
            while True:
                try:
                    status, body, _ = self.deployment.request(
                        "PUT", f"/api/users/{user.id}/accept-tos", {"tos_version": self.version},
                        {"Authorization": "Bearer " + user.token, "Idempotency-Key": key}, timeout=10)
                except OSError as error:
                    status, body = None, type(error).__name__
                if status == 200:
                    with self.lock:
                        self.acknowledged[index] += 1
                        self.keys[index].add(key)
                        self.acks.append(time.monotonic())
                    break
                self._fail(str(status or body))
                if status == 401:
                    try:
                        user.token = self.deployment.sign_in(user.apple_id)["sessionToken"]
                    except (AssertionError, OSError):
                        pass
                if time.monotonic() > deadline:
                    with self.lock:
                        self.abandoned += 1
                    break
                time.sleep(0.05)
