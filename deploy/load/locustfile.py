"""Load test of the HTTP gateway as the app uses it: sign-up, read the terms, accept them, and
bursts of acceptances.

The seed 004 routes need a session or Apple identity token unless the gateway runs with
`GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS=true` (a test deployment only: with it on, anyone can act
for any Apple id). Against a local stack:

    GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS=true deploy/run          # or compass up
    locust -f deploy/load/locustfile.py --host http://127.0.0.1:8080 \
        --headless --users 200 --spawn-rate 20 --run-time 2m

`--users` is the number of simulated people; locust prints requests/s, failures and latency
percentiles per route, and `--csv PREFIX` writes them to files. Sign-ups are spread over the
allowed states; every request carries an `Idempotency-Key`, as the app's retries would.
"""
import random
import uuid

from locust import HttpUser, between, constant, task

ALLOWED_STATES = ["CA", "TX", "NY", "FL", "IL", "PA", "OH", "GA", "NC", "MI", "NJ", "VA", "DC"]


class Athlete(HttpUser):
    """One person: signs up once (eligibility and the terms in effect), then reads and accepts."""

    weight = 3
    wait_time = between(0.5, 2.0)

    def on_start(self):
        self.version = self.client.get("/api/terms", name="/api/terms").json()["version"]
        body = {
            "apple_id": f"load.{uuid.uuid4()}",
            "email": f"{uuid.uuid4().hex[:12]}@example.com",
            "name": "Load Test",
            "state": random.choice(ALLOWED_STATES),
            "eligibility_certified": True,
            "tos_version": self.version,
        }
        with self.client.post("/api/users", json=body, name="/api/users", catch_response=True) as response:
            if response.status_code != 200 or not response.json().get("id"):
                response.failure(f"sign-up answered {response.status_code}: {response.text[:200]}")
                self.user_id = None
                return
            self.user_id = response.json()["id"]

    @task(3)
    def read_terms(self):
        self.client.get("/api/terms", name="/api/terms")

    @task(1)
    def accept_terms(self):
        if self.user_id:
            self.accept()

    def accept(self):
        self.client.put(
            f"/api/users/{self.user_id}/accept-tos", json={"tos_version": self.version},
            headers={"Idempotency-Key": str(uuid.uuid4())}, name="/api/users/{id}/accept-tos")


class AcceptanceBurst(Athlete):
    """Acceptances back to back with no think time: the write path at its limit."""

    weight = 1
    wait_time = constant(0)

    @task
    def accept_terms(self):
        if self.user_id:
            self.accept()

    @task(0)
    def read_terms(self):
        pass
