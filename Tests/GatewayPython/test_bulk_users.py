"""The benchmarks' bulk users (`compass load users`) are users like the ones the sign-up makes: the
gateway takes their minted session tokens, they read, accept the terms, see their consent history
and sign in with Apple exactly as a user signed up through `POST /api/users` does; and `compass load
acceptances --json` says how many users the load was spread over."""
import json
import os
import subprocess
import time
import uuid

import pytest


def compass(stack, *arguments):
    env = dict(os.environ, **stack.bus_env, DATABASE_URL=stack.db_url, ACCOUNTS_SESSION_SIGNING_KEY=stack.session_signing_key)
    run = subprocess.run([str(stack.bin / "compass"), *arguments], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def bearer(token):
    return {"Authorization": "Bearer " + token}


def accept_records(stack, token, count):
    """The versions of the user's accept records of the terms, once `count` of them are there
    (Audit may chain them a moment after the reply)."""
    deadline = time.time() + 15
    while True:
        status, history = stack.request("GET", "/api/me/consents/history?documentType=terms_of_service", headers=bearer(token))
        assert status == 200, history
        versions = [r["receipt"]["version"] for r in history["records"] if r["receipt"]["action"] == "accept"]
        if len(versions) >= count or time.time() > deadline:
            return versions


def standing(stack, token):
    """`GET /api/me/consents` without the times of the records."""
    status, body = stack.request("GET", "/api/me/consents", headers=bearer(token))
    assert status == 200, body
    return [{k: v for k, v in document.items() if k != "lastRecordedAt"} for document in body["documents"]]


def account(stack, apple_id, token):
    """`POST /api/users` for an Apple id that has an account: the account, unchanged."""
    status, user = stack.request("POST", "/api/users", {"apple_id": apple_id, "email": "other@example.com", "name": "Other",
                                                        "state": "AL", "eligibility_certified": True}, bearer(token))
    assert status == 200, user
    return user


@pytest.fixture(scope="module")
def bulk(stack, tmp_path_factory):
    tokens = tmp_path_factory.mktemp("bulk") / "tokens"
    out = compass(stack, "load", "users", "5", "--tokens", str(tokens))
    assert "users: 5" in out
    assert oct(tokens.stat().st_mode & 0o777) == "0o600"
    rows = subprocess.run(["psql", "-At", "-F", " ", stack.db_url, "-c",
                           "SELECT id, apple_id FROM accounts.users WHERE apple_id LIKE 'compass-load.%'"],
                          check=True, capture_output=True, text=True).stdout.split("\n")
    apple_ids = dict(row.split() for row in rows if row)
    return [(user, token, apple_ids[user]) for user, token in (line.split() for line in tokens.read_text().splitlines())]


@pytest.fixture(scope="module")
def reference(stack):
    """A user made by the sign-up itself: Apple sign-in, then `POST /api/users`."""
    apple_id = "python." + uuid.uuid4().hex
    status, session = stack.request("POST", "/api/auth/apple", {"identityToken": stack.apple.token(apple_id)})
    assert status == 200, session
    _, terms = stack.request("GET", "/api/terms")
    status, user = stack.request("POST", "/api/users", {"apple_id": apple_id, "email": "py@example.com", "name": "Py", "state": "AL",
                                                        "eligibility_certified": True, "tos_version": terms["version"]},
                                 bearer(session["sessionToken"]))
    assert status == 200, user
    return user["id"], session["sessionToken"], apple_id


IDENTITY = ("id", "apple_id", "appleId", "email", "name", "created_at", "createdAt", "eligibility_confirmed_at",
            "eligibilityConfirmedAt", "tos_accepted_at", "tosAcceptedAt")


def test_bulk_users_read_and_accept_like_signed_up_ones(stack, bulk, reference):
    assert len(bulk) == 5 and len({user for user, _, _ in bulk}) == 5
    reference_id, reference_token, reference_apple_id = reference
    _, terms = stack.request("GET", "/api/terms")
    expected = {k: v for k, v in account(stack, reference_apple_id, reference_token).items() if k not in IDENTITY}
    expected_standing = standing(stack, reference_token)
    assert accept_records(stack, reference_token, 1) == [terms["version"]]
    status, reference_accepted = stack.request("PUT", f"/api/users/{reference_id}/accept-tos", {"tos_version": terms["version"]},
                                               {**bearer(reference_token), "Idempotency-Key": str(uuid.uuid4())})
    assert status == 200, reference_accepted
    for user_id, token, apple_id in bulk:
        user = account(stack, apple_id, token)
        assert user["id"] == user_id and {k: v for k, v in user.items() if k not in IDENTITY} == expected
        assert standing(stack, token) == expected_standing
        assert accept_records(stack, token, 1) == [terms["version"]], "the sign-up's acceptance is recorded"
        status, accepted = stack.request("PUT", f"/api/users/{user_id}/accept-tos", {"tos_version": terms["version"]},
                                         {**bearer(token), "Idempotency-Key": str(uuid.uuid4())})
        assert status == 200, accepted
        assert set(accepted) == set(reference_accepted) and accepted["id"] == user_id
        assert accept_records(stack, token, 2) == [terms["version"]] * 2
    status, _ = stack.request("PUT", f"/api/users/{bulk[1][0]}/accept-tos", {"tos_version": terms["version"]},
                              {**bearer(bulk[0][1]), "Idempotency-Key": str(uuid.uuid4())})
    assert status == 403, "a bulk user's token names that user only"


def test_bulk_users_sign_in_with_apple_to_their_account(stack, bulk):
    user_id, _, apple_id = bulk[2]
    status, session = stack.request("POST", "/api/auth/apple", {"identityToken": stack.apple.token(apple_id)})
    assert status == 200, session
    assert account(stack, apple_id, session["sessionToken"])["id"] == user_id


def test_load_json_says_how_many_users(stack):
    report = json.loads(compass(stack, "load", "acceptances", "--via", "accounts", "--max", "--concurrency", "8",
                                "--duration", "1", "--users", "20", "--json"))
    assert report["users"] == 20
    assert report["acknowledged"] > 0 and report["failed"] == 0, report
    assert report["itemsPerBatch"] >= 1
    # Audit chained every act the load wrote, and the rate over the load and the drain is given.
    assert report["chained"]["remaining"] == 0, report
    assert 0 <= report["chained"]["drainSeconds"] < 60, report
    assert 0 < report["chained"]["perSecond"] <= report["throughputPerSecond"], report
