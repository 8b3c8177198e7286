"""A browser origin calling the API (CORS, for the one origin the checks' gateway allows) and seed
004's database check run verbatim with psql against the database the services made."""
import os
import subprocess
import urllib.request

from stack import CORS_ORIGIN

SUPABASE_HEADERS = "apikey, authorization, content-type, x-client-info, x-supabase-api-version, prefer, range"


def raw(stack, method, path, headers):
    request = urllib.request.Request(stack.url + path, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers
    except urllib.error.HTTPError as error:
        return error.code, error.headers


def test_preflight_from_an_allowed_origin_allows_the_supabase_headers(stack):
    for path, method in [("/rest/v1/documents", "GET"), ("/auth/v1/token", "POST"), ("/storage/v1/object/documents/x", "GET"),
                         ("/api/uploads", "POST")]:
        status, headers = raw(stack, "OPTIONS", path, {
            "Origin": CORS_ORIGIN, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": SUPABASE_HEADERS})
        assert status == 204, path
        assert headers["Access-Control-Allow-Origin"] == CORS_ORIGIN
        assert method in [m.strip() for m in headers["Access-Control-Allow-Methods"].split(",")]
        allowed = {h.strip().lower() for h in headers["Access-Control-Allow-Headers"].split(",")}
        assert {h.strip() for h in SUPABASE_HEADERS.split(",")} <= allowed
        assert "Origin" in headers.get_all("Vary")


def test_an_allowed_origin_gets_the_headers_on_answers_and_errors(stack):
    status, headers = raw(stack, "GET", "/rest/v1/legal_documents?select=version", {"Origin": CORS_ORIGIN, "apikey": stack.anon_key,
                                                                                   "Authorization": "Bearer " + stack.anon_key})
    assert status == 200 and headers["Access-Control-Allow-Origin"] == CORS_ORIGIN
    assert "Content-Range" in headers["Access-Control-Expose-Headers"]
    status, headers = raw(stack, "GET", "/auth/v1/user", {"Origin": CORS_ORIGIN, "apikey": stack.anon_key})
    assert status == 401 and headers["Access-Control-Allow-Origin"] == CORS_ORIGIN


def test_another_origin_gets_no_cors_header(stack):
    status, headers = raw(stack, "OPTIONS", "/rest/v1/documents", {
        "Origin": "https://evil.example", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": SUPABASE_HEADERS})
    assert status == 403
    assert not [name for name in headers if name.lower().startswith("access-control-")]
    status, headers = raw(stack, "GET", "/api/terms", {"Origin": "https://evil.example"})
    assert status == 200 and not [name for name in headers if name.lower().startswith("access-control-")]
    # Without Origin (an app, a server): nothing CORS either.
    status, headers = raw(stack, "GET", "/api/terms", {})
    assert status == 200 and "Access-Control-Allow-Origin" not in headers


# Seed 004's "Database Verification" step, exactly as the seed prints it.
SEED_004_CHECK = '''psql "$DATABASE_URL" -c "
  SELECT
    id, email, state,
    eligibility_confirmed_at IS NOT NULL as eligible,
    tos_accepted_at IS NOT NULL as tos_accepted
  FROM users
  WHERE email = 'your-test-email@example.com';
"'''


def test_seed_004_psql_check_runs_verbatim(stack):
    stack.signed_up_user(state="AL", email="your-test-email@example.com")
    run = subprocess.run(["bash", "-c", SEED_004_CHECK], env=dict(os.environ, DATABASE_URL=stack.db_url), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stdout.splitlines() if "|" in line]
    assert [c.strip() for c in lines[0].split("|")] == ["id", "email", "state", "eligible", "tos_accepted"]
    assert [c.strip() for c in lines[1].split("|")][1:] == ["your-test-email@example.com", "AL", "t", "t"]
    assert "(1 row)" in run.stdout


def test_the_users_view_is_read_only(stack):
    user_id, _ = stack.signed_up_user()
    for sql in (f"UPDATE users SET state = 'NV' WHERE id = '{user_id}'", f"DELETE FROM users WHERE id = '{user_id}'"):
        run = subprocess.run(["psql", "-v", "ON_ERROR_STOP=1", stack.db_url, "-c", sql], capture_output=True, text=True)
        assert run.returncode != 0 and "read-only view of accounts.users" in run.stderr
    run = subprocess.run(["psql", "-At", stack.db_url, "-c", f"SELECT state FROM users WHERE id = '{user_id}'"], capture_output=True, text=True)
    assert run.stdout.strip() == "AL"
