"""The real Legal, Audit, Accounts, Documents and Gateway executables on a fresh database, for the Python
checks: what the official Supabase client, headless Chromium and schemathesis run against.

Apple is stood in for by an RSA key of our own whose key set is written to a file that Accounts
and the gateway read; identity tokens are signed with it (RS256), so a session can be opened the
way the app opens one.
"""
import base64
import json
import os
import pathlib
import secrets
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUNDLE_ID = "com.recruitingcompass.app"
# The one browser origin the checks' gateway lets call it cross-origin.
CORS_ORIGIN = "http://viewer.example:5173"
JWT_SECRET = "python-checks-jwt-secret-" + secrets.token_hex(16)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class AppleStandIn:
    def __init__(self, directory: str):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        numbers = self.key.public_key().public_numbers()
        jwk = {
            "kty": "RSA", "kid": "python-apple-key", "use": "sig", "alg": "RS256",
            "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
            "e": b64url(numbers.e.to_bytes(3, "big")),
        }
        self.jwks_path = os.path.join(directory, "jwks.json")
        with open(self.jwks_path, "w") as handle:
            json.dump({"keys": [jwk]}, handle)

    def token(self, subject: str, nonce: str | None = None, email: str | None = None) -> str:
        """An identity token as Apple signs it; `nonce` is the claim as written (apps give Apple the
        SHA-256 hex of their raw nonce)."""
        now = int(time.time())
        header = b64url(json.dumps({"alg": "RS256", "kid": "python-apple-key"}).encode())
        claims = {"iss": "https://appleid.apple.com", "aud": BUNDLE_ID, "sub": subject, "iat": now, "exp": now + 600}
        if nonce is not None:
            claims["nonce"] = nonce
        if email is not None:
            claims["email"] = email
        payload = b64url(json.dumps(claims).encode())
        signature = self.key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{header}.{payload}.{b64url(signature)}"


class Process:
    """A child executable whose output is drained on a thread; ready once it prints `ready …`."""

    def __init__(self, binary: pathlib.Path, env: dict, timeout: float = 60):
        self.name = binary.name
        self.popen = subprocess.Popen([str(binary)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.lines: list[str] = []
        self.ready_line: str | None = None
        self._ready = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()
        if not self._ready.wait(timeout) or self.ready_line is None:
            self.stop()
            raise RuntimeError(f"{self.name} did not become ready:\n" + "\n".join(self.lines[-40:]))

    def _drain(self):
        for raw in self.popen.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            self.lines.append(line)
            if line.startswith("ready ") and self.ready_line is None:
                self.ready_line = line[len("ready "):]
                self._ready.set()
        self._ready.set()

    def port(self, name: str) -> int | None:
        """The port its ready line gives for `name` (`http`, `health`), if it gives one."""
        prefix = name + "="
        return next((int(field[len(prefix):]) for field in (self.ready_line or "").split() if field.startswith(prefix)), None)

    def stop(self):
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


# The gateway's rate limits, off for the checks and the benchmark: they drive many users from
# 127.0.0.1, which the default per-address limits are meant to stop.
RATE_LIMITS_OFF = {name: "off" for name in (
    "GATEWAY_RATE_LIMIT_SIGN_IN_PER_IP", "GATEWAY_RATE_LIMIT_SIGN_IN_PER_USER",
    "GATEWAY_RATE_LIMIT_ACCEPT_PER_IP", "GATEWAY_RATE_LIMIT_ACCEPT_PER_USER", "GATEWAY_RATE_LIMIT_EXPORT_PER_USER")}


class Stack:
    def __init__(self):
        self.database_url = os.environ.get("DATABASE_URL")
        if not self.database_url:
            raise RuntimeError("DATABASE_URL is not set: run deploy/test")
        self.bin = pathlib.Path(os.environ.get("GATEWAY_CHECKS_BIN") or subprocess.check_output(
            ["swift", "build", "--show-bin-path"], cwd=ROOT, text=True).strip())
        self.tmp = tempfile.mkdtemp(prefix="gateway-py-")
        self.apple = AppleStandIn(self.tmp)
        self.db_name = "pytest_" + uuid.uuid4().hex
        self._admin(f"CREATE DATABASE {self.db_name}")
        parts = urllib.parse.urlsplit(self.database_url)
        db_url = urllib.parse.urlunsplit(parts._replace(path="/" + self.db_name))
        endpoint = lambda name: f"ipc://{self.tmp}/{name}"
        # Accounts' session signing key, kept so a load tool can mint the sessions Accounts would
        # (`compass load users --tokens`); `bus_env` is what `compass` needs to reach the services.
        self.session_signing_key = base64.b64encode(secrets.token_bytes(32)).decode()
        self.bus_env = {f"{service.upper()}_{kind.upper()}_ENDPOINTS": endpoint(service + ("" if kind == "rpc" else "-events"))
                        for service in ("legal", "audit", "accounts", "documents") for kind in ("rpc", "events")}
        common = dict(os.environ, DATABASE_URL=db_url, HEALTH_PORT="0", LOG_LEVEL="warning")
        self.processes: list[Process] = []
        try:
            roles = self._service_roles(db_url)
            self._start("Legal", dict(common, **roles["legal"]), RPC_BIND=endpoint("legal"), EVENTS_BIND=endpoint("legal-events"))
            self._start("Audit", dict(common, **roles["audit"]), RPC_BIND=endpoint("audit"), EVENTS_BIND=endpoint("audit-events"),
                        LEGAL_RPC_ENDPOINTS=endpoint("legal"), LEGAL_EVENTS_ENDPOINTS=endpoint("legal-events"),
                        ACCOUNTS_RPC_ENDPOINTS=endpoint("accounts"), ACCOUNTS_EVENTS_ENDPOINTS=endpoint("accounts-events"),
                        AUDIT_SIGNING_KEY=base64.b64encode(secrets.token_bytes(32)).decode(), AUDIT_CHECKPOINT_INTERVAL="1h")
            self._start("Accounts", dict(common, **roles["accounts"]), RPC_BIND=endpoint("accounts"), EVENTS_BIND=endpoint("accounts-events"),
                        LEGAL_RPC_ENDPOINTS=endpoint("legal"), LEGAL_EVENTS_ENDPOINTS=endpoint("legal-events"),
                        AUDIT_RPC_ENDPOINTS=endpoint("audit"), ACCOUNTS_APPLE_JWKS=self.apple.jwks_path, ACCOUNTS_APPLE_BUNDLE_ID=BUNDLE_ID,
                        ACCOUNTS_SESSION_SIGNING_KEY=self.session_signing_key)
            self._start("Documents", dict(common, **roles["documents"]), RPC_BIND=endpoint("documents"), EVENTS_BIND=endpoint("documents-events"),
                        ACCOUNTS_RPC_ENDPOINTS=endpoint("accounts"), ACCOUNTS_EVENTS_ENDPOINTS=endpoint("accounts-events"))
            gateway_env = dict({k: v for k, v in common.items() if k != "DATABASE_URL"}, **RATE_LIMITS_OFF)
            self.gateway_settings = dict(
                gateway_env, GATEWAY_HTTP_PORT="0",
                LEGAL_RPC_ENDPOINTS=endpoint("legal"), LEGAL_EVENTS_ENDPOINTS=endpoint("legal-events"),
                AUDIT_RPC_ENDPOINTS=endpoint("audit"),
                ACCOUNTS_RPC_ENDPOINTS=endpoint("accounts"), ACCOUNTS_EVENTS_ENDPOINTS=endpoint("accounts-events"),
                DOCUMENTS_RPC_ENDPOINTS=endpoint("documents"),
                GATEWAY_APPLE_BUNDLE_ID=BUNDLE_ID, GATEWAY_APPLE_JWKS=self.apple.jwks_path, GATEWAY_JWT_SECRET=JWT_SECRET,
                READINESS_INTERVAL="100ms", GATEWAY_PUBLIC_OPERATIONS="true")
            gateway = self._start("Gateway", gateway_env, GATEWAY_HTTP_PORT="0",
                                  LEGAL_RPC_ENDPOINTS=endpoint("legal"), LEGAL_EVENTS_ENDPOINTS=endpoint("legal-events"),
                                  AUDIT_RPC_ENDPOINTS=endpoint("audit"),
                                  ACCOUNTS_RPC_ENDPOINTS=endpoint("accounts"), ACCOUNTS_EVENTS_ENDPOINTS=endpoint("accounts-events"),
                                  DOCUMENTS_RPC_ENDPOINTS=endpoint("documents"),
                                  GATEWAY_APPLE_BUNDLE_ID=BUNDLE_ID,
                                  GATEWAY_APPLE_JWKS=self.apple.jwks_path, GATEWAY_JWT_SECRET=JWT_SECRET,
                                  GATEWAY_CORS_ORIGINS=CORS_ORIGIN, READINESS_INTERVAL="100ms",
                                  GATEWAY_PUBLIC_OPERATIONS="true")
            self.url = f"http://127.0.0.1:{gateway.port('http')}"
            self.anon_key = subprocess.check_output(
                [str(self.bin / "Gateway"), "--print-anon-key"], env=dict(os.environ, GATEWAY_JWT_SECRET=JWT_SECRET), text=True).strip()
            self._wait_ready()
        except BaseException:
            self.close()
            raise

    def _service_roles(self, db_url):
        """Each service's roles, made by `compass db roles` as a deployment makes them (the database's
        name is their prefix): its runtime role's DATABASE_URL and its schema owner's
        DATABASE_MIGRATION_URL, with new passwords the test cluster checks."""
        services = ("legal", "audit", "accounts", "documents")
        passwords = {service: (secrets.token_hex(24), secrets.token_hex(24)) for service in services}
        env = dict(os.environ, DATABASE_ADMIN_URL=db_url)
        for service, (owner, runtime) in passwords.items():
            env[f"{service.upper()}_DATABASE_OWNER_PASSWORD"] = owner
            env[f"{service.upper()}_DATABASE_PASSWORD"] = runtime
        made = subprocess.run([str(self.bin / "compass"), "db", "roles"], env=env, capture_output=True, text=True)
        if made.returncode != 0:
            raise RuntimeError("compass db roles failed:\n" + made.stdout + made.stderr)
        parts = urllib.parse.urlsplit(db_url)
        host = parts.netloc.rsplit("@", 1)[-1]

        def url(user, password):
            return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:{password}@{host}"))

        return {service: {"DATABASE_URL": url(f"{self.db_name}_{service}", runtime),
                          "DATABASE_MIGRATION_URL": url(f"{self.db_name}_{service}_owner", owner)}
                for service, (owner, runtime) in passwords.items()}

    def _start(self, name, base, **extra):
        process = Process(self.bin / name, dict(base, **extra))
        self.processes.append(process)
        return process

    def extra_gateway(self, **settings):
        """Another gateway in front of the same services, with `settings` added to its
        environment; its base URL. Stopped with the stack."""
        return self.extra_gateway_process(**settings)[1]

    def extra_gateway_process(self, **settings):
        """``extra_gateway``'s process (to signal it) and base URL, once it is ready."""
        process = self._start("Gateway", self.gateway_settings, **settings)
        url = f"http://127.0.0.1:{process.port('http')}"
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(url + "/readyz", timeout=2) as response:
                    if response.status == 200:
                        return process, url
            except Exception:
                pass
            time.sleep(0.1)
        raise RuntimeError("the extra gateway did not become ready")

    def _admin(self, sql):
        subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", self.database_url, "-c", sql], check=True, capture_output=True)

    def _wait_ready(self):
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except Exception:
                pass
            time.sleep(0.1)
        raise RuntimeError("the gateway did not become ready")

    def request(self, method, path, body=None, headers=None, with_headers=False):
        """Status and decoded JSON body (and the response headers with `with_headers`)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=dict(headers or {}))
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                result = response.status, json.loads(response.read() or b"null"), response.headers
        except urllib.error.HTTPError as error:
            result = error.code, json.loads(error.read() or b"null"), error.headers
        return result if with_headers else result[:2]

    @property
    def db_url(self) -> str:
        """The database the stack's services run on."""
        parts = urllib.parse.urlsplit(self.database_url)
        return urllib.parse.urlunsplit(parts._replace(path="/" + self.db_name))

    def signed_up_user(self, state="AL", email="py@example.com"):
        """A user with an account and a session: Apple sign-in, then the seed's sign-up."""
        apple_id = "python." + uuid.uuid4().hex
        status, session = self.request("POST", "/api/auth/apple", {"identityToken": self.apple.token(apple_id)})
        assert status == 200, session
        token = session["sessionToken"]
        _, terms = self.request("GET", "/api/terms")
        status, user = self.request(
            "POST", "/api/users",
            {"apple_id": apple_id, "email": email, "name": "Py", "state": state,
             "eligibility_certified": True, "tos_version": terms["version"]},
            {"Authorization": "Bearer " + token})
        assert status == 200, user
        return user["id"], token

    def close(self):
        for process in reversed(self.processes):
            process.stop()
        try:
            self._admin(f"DROP DATABASE IF EXISTS {self.db_name} WITH (FORCE)")
            for service in ("legal", "audit", "accounts", "documents"):
                self._admin(f"DROP ROLE IF EXISTS {self.db_name}_{service}, {self.db_name}_{service}_owner")
        except Exception:
            pass
