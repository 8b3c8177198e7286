"""Compose's `s3` profile: the running deployment, on PostgreSQL large objects until
now, switched to SeaweedFS the way an operator does it (`deploy/compose --profile s3 up -d` with
the deployment's env file). pytest runs this file after test_containers.py, so every earlier check
keeps its large-objects deployment; `down -v` afterwards takes SeaweedFS too (the env file now
keeps COMPOSE_PROFILES=s3).

Checked through the published gateway port (tus upload, file_url whole and by Range), the bucket
through the S3 API (curl's SigV4 from the Documents container, with Documents' own settings: the
store is not published) and the rows' own `storage` (psql in the postgres container).
"""
import hashlib
import io
import os
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

from supabase import create_client
from tusclient import client as tus_client

from deployment import SERVICES, User

# Documents' S3 part size (DOCUMENTS_S3_PART_SIZE's default): more than two parts runs the
# multipart path to the end (parts 1 and 2 from staging, the short last part at completion).
PART = 8 * 1024 * 1024
S3_NAMESPACE = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def upload(deployment, user, data: bytes, title: str) -> str:
    """A tus upload through the gateway, as the app makes it; the document's id."""
    uploader = tus_client.TusClient(deployment.url + "/api/uploads", headers={"Authorization": "Bearer " + user.token})
    upload = uploader.uploader(file_stream=io.BytesIO(data), chunk_size=1024 * 1024, metadata={
        "type": "transcript", "filename": "s3.bin", "filetype": "application/octet-stream", "title": title})
    upload.upload()
    assert upload.offset == len(data)
    return upload.url.rstrip("/").rsplit("/", 1)[-1]


def read(deployment, user, document_id: str, byte_range: str | None = None) -> tuple[int, bytes, str | None]:
    """The document's bytes through a fresh file_url (no headers but the Range): status, body, Content-Range."""
    user.token = deployment.sign_in(user.apple_id)["sessionToken"]
    supabase = create_client(deployment.url, deployment.anon_key)
    supabase.postgrest.auth(user.token)
    file_url = supabase.from_("documents").select("file_url").eq("id", document_id).single().execute().data["file_url"]
    request = urllib.request.Request(file_url, headers={"Range": byte_range} if byte_range else {})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.status, response.read(), response.headers["Content-Range"]


def assert_reads_whole(deployment, user, document_id: str, data: bytes):
    status, body, _ = read(deployment, user, document_id)
    assert status == 200 and len(body) == len(data)
    assert hashlib.sha256(body).hexdigest() == hashlib.sha256(data).hexdigest()


def storage_of(deployment, document_id: str) -> str:
    """The row's own `storage` column, read as the postgres superuser."""
    rows = deployment.sql("SELECT storage FROM documents.documents WHERE id = :'id'", id=document_id)
    return rows[0][0] if rows else ""


# Documents' S3 settings from its own environment (the secret never leaves the container).
SIGNED_CURL = ('curl -fsS --aws-sigv4 "aws:amz:$DOCUMENTS_S3_REGION:s3" '
               '--user "$DOCUMENTS_S3_ACCESS_KEY_ID:$DOCUMENTS_S3_SECRET_ACCESS_KEY" '
               '"$DOCUMENTS_S3_ENDPOINT/$DOCUMENTS_S3_BUCKET$1"')


def bucket_listing(deployment, prefix: str) -> dict[str, int]:
    """ListObjectsV2 under prefix, signed with Documents' credentials: key -> size."""
    query = "?list-type=2&prefix=" + urllib.parse.quote(prefix, safe="")  # sorted and encoded: SigV4's canonical query
    listed = deployment.compose("exec", "-T", "documents", "sh", "-c", SIGNED_CURL, "sh", query).stdout
    contents = ET.fromstring(listed).iter(S3_NAMESPACE + "Contents")
    return {item.find(S3_NAMESPACE + "Key").text: int(item.find(S3_NAMESPACE + "Size").text) for item in contents}


def object_sha256(deployment, key: str) -> str:
    """GetObject of key, signed with Documents' credentials, hashed inside the container."""
    script = "set -o pipefail; " + SIGNED_CURL + " | sha256sum"
    return deployment.compose("exec", "-T", "documents", "bash", "-c", script, "sh", "/" + key).stdout.split()[0]


def env_settings(deployment) -> dict[str, str]:
    """The env file's names and values (the values only compared, never printed)."""
    lines = deployment.env_file.read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def test_switch_to_the_s3_profile_new_documents_in_the_bucket_old_ones_read(deployment, shared):
    user = deployment.sign_up()
    before = os.urandom(1_300_000)
    before_id = upload(deployment, user, before, "Before S3")
    assert storage_of(deployment, before_id) == "postgres"
    documents_container = deployment.container("documents")

    started = time.monotonic()
    deployment.compose("--profile", "s3", "up", "-d", timeout=900)
    healthy = deployment.wait_healthy(SERVICES + ("postgres", "seaweedfs"), timeout=600)
    deployment.wait_ready()
    switched = time.monotonic() - started
    print(f"test-containers: switched to the s3 profile in {switched:.1f} s (healthy {healthy:.1f} s after up returned)")
    settings = env_settings(deployment)
    assert settings.get("DOCUMENTS_STORAGE") == "s3" and settings.get("COMPOSE_PROFILES") == "s3"
    assert settings.get("DOCUMENTS_S3_ENDPOINT") == "http://seaweedfs:8333" and settings.get("DOCUMENTS_S3_SECRET_ACCESS_KEY")
    assert deployment.container("documents") != documents_container, "Documents was not recreated on the new store"
    assert deployment.compose("exec", "-T", "documents", "printenv", "DOCUMENTS_STORAGE").stdout.strip() == "s3"

    # Documents was recreated: the gateway's bus connection to it is made anew (the old container's
    # address no longer answers), and until then its routes answer 503 with Retry-After, as the app
    # is told to retry. CI met that once right after `up`; wait for the routes as a client would, bounded.
    reconnecting = time.monotonic()
    while deployment.get("/api/documents", headers={"Authorization": "Bearer " + user.token})[0] != 200:
        assert time.monotonic() - reconnecting < 60, "the documents routes did not answer 200 within 60 s of the switch"
        time.sleep(0.2)
    print(f"test-containers: documents routes answered 200 {time.monotonic() - reconnecting:.1f} s after the switch was healthy")

    # A new document: three S3 parts (two full, one short), through the gateway.
    data = os.urandom(2 * PART + 123_457)
    digest = hashlib.sha256(data).hexdigest()
    uploading = time.monotonic()
    document_id = upload(deployment, user, data, "On S3")
    uploaded = time.monotonic() - uploading
    status, document, _ = deployment.get("/api/documents/" + document_id, headers={"Authorization": "Bearer " + user.token})
    assert status == 200 and document["bytesState"] == "available", document
    assert document["sha256"] == digest and document["length"] == len(data)
    assert storage_of(deployment, document_id) == "s3"
    reading = time.monotonic()
    status, body, _ = read(deployment, user, document_id)
    downloaded = time.monotonic() - reading
    assert status == 200 and len(body) == len(data) and hashlib.sha256(body).hexdigest() == digest
    print(f"test-containers: s3 profile: {len(data)} bytes uploaded (tus) in {uploaded:.1f} s, read back in {downloaded:.1f} s")
    # Ranges: across the first part boundary, and the last bytes.
    status, body, content_range = read(deployment, user, document_id, f"bytes={PART - 1000}-{PART + 999}")
    assert status == 206 and body == data[PART - 1000:PART + 1000]
    assert content_range == f"bytes {PART - 1000}-{PART + 999}/{len(data)}"
    status, body, content_range = read(deployment, user, document_id, "bytes=-100")
    assert status == 206 and body == data[-100:] and content_range == f"bytes {len(data) - 100}-{len(data) - 1}/{len(data)}"

    # The object is in the bucket, under the owner's prefix, whole; the old document is not there.
    prefix = f"documents/{user.id}/"
    key = prefix + document_id.lower()
    assert bucket_listing(deployment, prefix) == {key: len(data)}
    assert object_sha256(deployment, key) == digest

    # The document uploaded before the switch stays where its row says, and reads.
    assert storage_of(deployment, before_id) == "postgres"
    assert_reads_whole(deployment, user, before_id, before)

    # compass documents migrate-storage, where Documents runs: the old rows move and still read.
    moved = deployment.compose("exec", "-T", "documents", "compass", "documents", "migrate-storage", "--to", "s3",
                               check=False, timeout=600)
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert storage_of(deployment, before_id) == "s3"
    assert bucket_listing(deployment, prefix) == {key: len(data), prefix + before_id.lower(): len(before)}
    assert_reads_whole(deployment, user, before_id, before)
    if "document" in shared:  # test_containers.py's upload, on large objects until now
        apple_id, earlier_id, earlier_digest, length = shared["document"]
        assert storage_of(deployment, earlier_id) == "s3"
        earlier_user = User(None, apple_id, None, None)
        status, body, _ = read(deployment, earlier_user, earlier_id)
        assert status == 200 and len(body) == length and hashlib.sha256(body).hexdigest() == earlier_digest
    verified = deployment.compass("audit", "verify", check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr
