"""Seeds 000 and 001's Supabase calls, made with the official `supabase` client against the gateway."""
import base64
import hashlib
import io
import json
import os
import secrets
import time
import urllib.parse
import uuid

import pytest
from postgrest.exceptions import APIError
from supabase import create_client
from supabase_auth.errors import AuthApiError
from tusclient import client as tus_client


def client(stack, session_token=None):
    supabase = create_client(stack.url, stack.anon_key)
    if session_token:
        supabase.postgrest.auth(session_token)
    return supabase


@pytest.mark.parametrize("doc_type", ["privacy_policy", "terms_of_service"])
def test_seed_reads_the_current_document_with_single(stack, doc_type):
    response = (client(stack).from_("legal_documents").select("content, last_updated, version")
                .eq("type", doc_type).single().execute())
    assert set(response.data) == {"content", "last_updated", "version"}
    assert response.data["content"].startswith("# ")
    assert response.data["last_updated"].endswith("Z")
    _, terms = stack.request("GET", "/api/terms")
    if doc_type == "terms_of_service":
        assert response.data["version"] == terms["version"]


def test_single_with_several_rows_is_postgrests_error(stack):
    with pytest.raises(APIError) as refused:
        client(stack).from_("legal_documents").select("version").single().execute()
    assert refused.value.code == "PGRST116"


def test_unsupported_operator_is_postgrests_parse_error(stack):
    with pytest.raises(APIError) as refused:
        client(stack).from_("legal_documents").select("version").contains("type", ["privacy_policy"]).execute()
    assert refused.value.code == "PGRST100"


def test_legal_documents_filter_like_the_other_tables(stack):
    response = client(stack).from_("legal_documents").select("type").neq("type", "privacy_policy").execute()
    assert [row["type"] for row in response.data] == ["terms_of_service"]
    response = client(stack).from_("legal_documents").select("type").in_("type", ["privacy_policy"]).execute()
    assert [row["type"] for row in response.data] == ["privacy_policy"]


def test_count_exact_is_a_number(stack):
    """supabase-js's `select('version', {count: 'exact'})`, in supabase-py: the count is the number of rows."""
    response = client(stack).from_("legal_documents").select("version", count="exact").execute()
    assert response.count == 2 and len(response.data) == 2
    one = client(stack).from_("legal_documents").select("version", count="exact").eq("type", "terms_of_service").execute()
    assert one.count == 1 and len(one.data) == 1
    paged = client(stack).from_("legal_documents").select("type", count="exact").order("type").range(1, 1).execute()
    assert paged.count == 2 and [row["type"] for row in paged.data] == ["terms_of_service"]


def test_order_and_limit(stack):
    response = client(stack).from_("legal_documents").select("type, version").order("type", desc=True).limit(1).execute()
    assert [row["type"] for row in response.data] == ["terms_of_service"]


@pytest.mark.parametrize("doc_type", ["privacy_policy", "terms_of_service"])
def test_seed_records_the_callers_acceptance(stack, doc_type):
    user_id, token = stack.signed_up_user()
    version = client(stack).from_("legal_documents").select("version").eq("type", doc_type).single().execute().data["version"]
    acceptance = {"user_id": user_id, "document_type": doc_type, "version": version,
                  "accepted_at": "2026-01-15T00:00:00Z", "ip_address": "10.0.0.1"}
    response = client(stack, token).from_("legal_acceptances").insert([acceptance]).execute()
    assert len(response.data) == 1
    assert response.data[0]["action"] == ("acknowledge" if doc_type == "privacy_policy" else "accept")
    assert response.data[0]["user_id"] == user_id
    status, history = stack.request("GET", "/api/me/consents/history?documentType=" + doc_type, headers={"Authorization": "Bearer " + token})
    assert status == 200 and any(r["receipt"]["recordId"].lower() == response.data[0]["id"] for r in history["records"])


def test_inserting_for_someone_else_is_refused(stack):
    _, token = stack.signed_up_user()
    other_id, _ = stack.signed_up_user()
    row = {"user_id": other_id, "document_type": "terms_of_service", "version": "2025-12-12"}
    with pytest.raises(APIError) as refused:
        client(stack, token).from_("legal_acceptances").insert([row]).execute()
    assert refused.value.code == "42501"


def test_the_anon_key_cannot_write(stack):
    user_id, _ = stack.signed_up_user()
    with pytest.raises(APIError) as refused:
        client(stack).from_("legal_acceptances").insert([{"user_id": user_id, "document_type": "privacy_policy", "version": "1.0"}]).execute()
    assert refused.value.code == "42501"


def test_own_acceptances_filtered_ordered_and_counted(stack):
    user_id, token = stack.signed_up_user()
    other_id, _ = stack.signed_up_user()
    supabase = client(stack, token)
    version = client(stack).from_("legal_documents").select("version").eq("type", "privacy_policy").single().execute().data["version"]
    row = {"user_id": user_id, "document_type": "privacy_policy", "version": version}
    # A retried insert with ignore-duplicates lands once.
    headers = {"apikey": stack.anon_key, "Authorization": "Bearer " + token,
               "Prefer": "return=representation,resolution=ignore-duplicates"}
    first = stack.request("POST", "/rest/v1/legal_acceptances", body=[row], headers=headers)
    second = stack.request("POST", "/rest/v1/legal_acceptances", body=[row], headers=headers)
    assert first[0] == 201 and second[0] == 201 and first[1][0]["id"] == second[1][0]["id"]
    response = (supabase.from_("legal_acceptances").select("document_type, action, accepted_at", count="exact")
                .in_("document_type", ["privacy_policy", "terms_of_service"]).order("accepted_at", desc=True).execute())
    assert response.count == 2 and len(response.data) == 2
    assert response.data[0]["document_type"] == "privacy_policy" and response.data[0]["action"] == "acknowledge"
    page = supabase.from_("legal_acceptances").select("id", count="exact").range(0, 0).execute()
    assert page.count == 2 and len(page.data) == 1
    either = (supabase.from_("legal_acceptances").select("action")
              .or_("action.eq.acknowledge,and(document_type.eq.terms_of_service,version.neq.none)").execute())
    assert sorted(r["action"] for r in either.data) == ["accept", "acknowledge"]
    assert supabase.from_("legal_acceptances").select("id").eq("user_id", other_id).execute().data == []
    with pytest.raises(APIError) as refused:
        supabase.from_("legal_acceptances").select("id").filter("version", "fts", "x").execute()
    assert refused.value.code == "PGRST100"


# Supabase Auth (/auth/v1): the client signs in with an Apple identity token, refreshes, uses
# rest/v1 and storage with the session, and signs out; the gateway then refuses the old token.

def sha256_hex(text):
    return hashlib.sha256(text.encode()).hexdigest()


def jwt_claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def apple_sign_in(stack, apple_id=None, email=None):
    """The app's Sign in with Apple through supabase-py: a raw nonce, its SHA-256 in Apple's token."""
    apple_id = apple_id or "python." + uuid.uuid4().hex
    raw_nonce = secrets.token_urlsafe(24)
    supabase = create_client(stack.url, stack.anon_key)
    response = supabase.auth.sign_in_with_id_token(
        {"provider": "apple", "token": stack.apple.token(apple_id, nonce=sha256_hex(raw_nonce), email=email), "nonce": raw_nonce})
    return supabase, response, apple_id


def sign_up(stack, token, apple_id, email="py@example.com"):
    """Seed 004's sign-up (eligibility and terms) with the Supabase access token."""
    _, terms = stack.request("GET", "/api/terms")
    status, user = stack.request(
        "POST", "/api/users", {"apple_id": apple_id, "email": email, "name": "Py", "state": "AL",
                               "eligibility_certified": True, "tos_version": terms["version"]},
        {"Authorization": "Bearer " + token})
    assert status == 200, user
    return user


def test_supabase_auth_sign_in_refresh_rest_storage_and_sign_out(stack):
    supabase, signed_in, apple_id = apple_sign_in(stack, email="gotrue@example.com")
    session, user = signed_in.session, signed_in.user
    # The session as GoTrue shapes it; the access token is the native session token, a JWT.
    assert session.token_type == "bearer" and 0 < session.expires_in <= 15 * 60
    assert abs(session.expires_at - (time.time() + session.expires_in)) < 5
    claims = jwt_claims(session.access_token)
    assert claims["role"] == "authenticated" and claims["exp"] == session.expires_at and claims["sub"] and claims["aud"]
    assert user.aud == "authenticated" and user.role == "authenticated" and user.email == "gotrue@example.com"
    assert user.app_metadata["provider"] == "apple" and user.app_metadata["providers"] == ["apple"]
    assert user.app_metadata["eligibility_confirmed"] is False
    assert user.identities[0].provider == "apple" and user.identities[0].id == apple_id
    user_id = str(uuid.UUID(user.id))

    # The id given at sign-in is the account's once eligibility is confirmed (seed 004 sign-up).
    account = sign_up(stack, session.access_token, apple_id, email="gotrue@example.com")
    assert account["id"].lower() == user_id

    refreshed = supabase.auth.refresh_session()
    assert refreshed.session.refresh_token != session.refresh_token
    assert refreshed.session.access_token != session.access_token
    assert str(uuid.UUID(refreshed.user.id)) == user_id and refreshed.user.app_metadata["eligibility_confirmed"] is True
    assert jwt_claims(refreshed.session.access_token)["sub"] == user_id
    fetched = supabase.auth.get_user()
    assert str(uuid.UUID(fetched.user.id)) == user_id and fetched.user.email == "gotrue@example.com"

    # The same account through the native door.
    status, native = stack.request("POST", "/api/auth/apple", {"identityToken": stack.apple.token(apple_id)})
    assert status == 200 and native["user"]["id"].lower() == user_id

    # Rotation: the old refresh token is spent, and presenting it again (a stolen copy) revokes the
    # whole session it came from (RFC 9700): the refreshed tokens stop working too.
    status, body = stack.request("POST", "/auth/v1/token?grant_type=refresh_token", {"refresh_token": session.refresh_token},
                                 {"apikey": stack.anon_key})
    assert status == 400 and body["error_code"] == "refresh_token_not_found"
    # The revocation reaches the gateway as Accounts' session.revoked event: within a second.
    deadline = time.time() + 3
    while True:
        status, body = stack.request(
            "GET", "/auth/v1/user", headers={"apikey": stack.anon_key, "Authorization": "Bearer " + refreshed.session.access_token})
        if status != 200 or time.time() > deadline:
            break
        time.sleep(0.05)
    assert status == 403 and body["error_code"] == "session_not_found", body
    supabase, signed_in, _ = apple_sign_in(stack, apple_id=apple_id, email="gotrue@example.com")
    assert str(uuid.UUID(signed_in.user.id)) == user_id
    refreshed = signed_in

    # rest/v1 and storage act as the signed-in user.
    version = supabase.from_("legal_documents").select("version").eq("type", "privacy_policy").single().execute().data["version"]
    inserted = supabase.from_("legal_acceptances").insert(
        [{"user_id": user_id, "document_type": "privacy_policy", "version": version}]).execute()
    assert inserted.data[0]["user_id"] == user_id
    data = os.urandom(50_000)
    uploader = tus_client.TusClient(stack.url + "/api/uploads", headers={"Authorization": "Bearer " + refreshed.session.access_token})
    upload = uploader.uploader(file_stream=io.BytesIO(data), chunk_size=len(data),
                               metadata={"type": "transcript", "filename": "t.bin", "filetype": "application/octet-stream", "title": "T"})
    upload.upload()
    document_id = upload.url.rstrip("/").rsplit("/", 1)[-1]
    row = supabase.from_("documents").select("file_url").eq("id", document_id).single().execute().data
    # file_url is an absolute signed link; its Storage object path is `documents/<id>/<name>`.
    bucket, path = urllib.parse.urlsplit(row["file_url"]).path.removeprefix("/storage/v1/object/sign/").split("/", 1)
    assert supabase.storage.from_(bucket).download(path) == data

    old_token = refreshed.session.access_token
    supabase.auth.sign_out()  # scope global, the client's default
    assert supabase.auth.get_session() is None
    # The old access token is refused everywhere, at once.
    status, _ = stack.request("GET", "/rest/v1/documents?select=id", headers={"apikey": stack.anon_key, "Authorization": "Bearer " + old_token})
    assert status == 401
    status, body = stack.request("GET", "/auth/v1/user", headers={"apikey": stack.anon_key, "Authorization": "Bearer " + old_token})
    assert status == 403 and body["error_code"] == "session_not_found"
    # Global: the native session of the same user ended too.
    status, _ = stack.request("POST", "/api/auth/refresh", {"refreshToken": native["refreshToken"]})
    assert status == 401


def test_supabase_auth_user_before_eligibility_keeps_its_id(stack):
    supabase, signed_in, apple_id = apple_sign_in(stack)
    user_id = str(uuid.UUID(signed_in.user.id))
    assert jwt_claims(signed_in.session.access_token)["sub"] == "apple:" + apple_id
    assert str(uuid.UUID(supabase.auth.get_user().user.id)) == user_id
    # A second sign-in before the account exists is given the same id.
    _, again, _ = apple_sign_in(stack, apple_id=apple_id)
    assert str(uuid.UUID(again.user.id)) == user_id
    assert str(uuid.UUID(supabase.auth.refresh_session().user.id)) == user_id


def test_supabase_auth_sign_out_scopes(stack):
    apple_id = "python." + uuid.uuid4().hex
    first, one, _ = apple_sign_in(stack, apple_id=apple_id)
    sign_up(stack, one.session.access_token, apple_id)
    second, two, _ = apple_sign_in(stack, apple_id=apple_id)
    third, three, _ = apple_sign_in(stack, apple_id=apple_id)
    user = lambda token: stack.request("GET", "/auth/v1/user", headers={"apikey": stack.anon_key, "Authorization": "Bearer " + token})[0]
    first.auth.sign_out({"scope": "local"})
    assert user(one.session.access_token) == 403 and user(two.session.access_token) == 200
    second.auth.sign_out({"scope": "others"})
    assert user(two.session.access_token) == 200 and user(three.session.access_token) == 403
    assert second.auth.get_session() is not None


def test_supabase_auth_nonce_mismatch_is_the_clients_auth_error(stack):
    supabase = create_client(stack.url, stack.anon_key)
    token = stack.apple.token("python." + uuid.uuid4().hex, nonce=sha256_hex("the nonce Apple saw"))
    with pytest.raises(AuthApiError) as refused:
        supabase.auth.sign_in_with_id_token({"provider": "apple", "token": token, "nonce": "another nonce"})
    assert refused.value.status == 400 and refused.value.code == "validation_failed"
    assert "nonce" in refused.value.message.lower()
    # A nonce on one side only is refused too, as GoTrue does.
    with pytest.raises(AuthApiError):
        supabase.auth.sign_in_with_id_token({"provider": "apple", "token": token})
    assert supabase.auth.get_session() is None


def test_supabase_auth_error_shapes_and_apikey(stack):
    token = stack.apple.token("python." + uuid.uuid4().hex)
    body = {"provider": "apple", "id_token": token}
    # Without the apikey header: refused before anything else.
    status, error = stack.request("POST", "/auth/v1/token?grant_type=id_token", body)
    assert status == 401 and error["error_code"] == "no_api_key"
    # The legacy body, then the 2024-01-01 one (what current clients ask for).
    status, error = stack.request("POST", "/auth/v1/token?grant_type=password", body, {"apikey": stack.anon_key})
    assert status == 400 and error == {"code": 400, "error_code": "unsupported_grant_type", "msg": error["msg"]}
    status, error, headers = stack.request("POST", "/auth/v1/token?grant_type=password", body,
                                           {"apikey": stack.anon_key, "X-Supabase-Api-Version": "2024-01-01"}, with_headers=True)
    assert status == 400 and set(error) == {"code", "message"} and error["code"] == "unsupported_grant_type"
    assert headers["X-Supabase-Api-Version"] == "2024-01-01"
    status, error = stack.request("GET", "/auth/v1/user", headers={"apikey": stack.anon_key})
    assert status == 401 and error["error_code"] == "no_authorization"
    status, error = stack.request("GET", "/auth/v1/user", headers={"apikey": stack.anon_key, "Authorization": "Bearer " + stack.anon_key})
    assert status == 403 and error["error_code"] == "bad_jwt"
    status, error = stack.request("POST", "/auth/v1/token?grant_type=id_token", dict(body, provider="google"), {"apikey": stack.anon_key})
    assert status == 400 and error["error_code"] == "validation_failed"
    with pytest.raises(AuthApiError) as refused:
        create_client(stack.url, stack.anon_key).auth.refresh_session("not-a-refresh-token")
    assert refused.value.code == "refresh_token_not_found"
