"""Seeds 000 and 001's Supabase calls, made with the official `supabase` client against the gateway."""
import pytest
from postgrest.exceptions import APIError
from supabase import create_client


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
        client(stack).from_("legal_documents").select("version").neq("type", "privacy_policy").execute()
    assert refused.value.code == "PGRST100"


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
