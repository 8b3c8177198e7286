"""Seed 002's calls and resumable uploads with the official clients: a tus upload interrupted and
resumed with `tuspy`, then the document read with the `supabase` client's PostgREST
(`.single()`) and downloaded through its `file_url` with no headers, with its Storage client
(authenticated and through a signed URL)."""
import hashlib
import io
import os
import urllib.parse
import urllib.request

import pytest
from storage3.exceptions import StorageException
from supabase import ClientOptions, create_client
from tusclient import client as tus_client


def user_clients(stack, token):
    """The Supabase client as the app makes it (anon key), acting with the user's session."""
    return create_client(stack.url, stack.anon_key, options=ClientOptions(headers={"Authorization": "Bearer " + token}))


def upload_interrupted_then_resumed(stack, token, data, **metadata):
    """Starts a tus upload, stops half-way (as a dropped connection would), and finishes it with
    a fresh client that knows only the upload's URL (tus HEAD finds the committed offset)."""
    headers = {"Authorization": "Bearer " + token}
    first = tus_client.TusClient(stack.url + "/api/uploads", headers=headers)
    uploader = first.uploader(file_stream=io.BytesIO(data), chunk_size=256 * 1024, metadata=metadata)
    uploader.upload(stop_at=len(data) // 2)
    assert 0 < uploader.offset < len(data)
    url = uploader.url
    second = tus_client.TusClient(stack.url + "/api/uploads", headers=headers)
    resumed = second.uploader(file_stream=io.BytesIO(data), chunk_size=256 * 1024, url=url)
    assert resumed.get_offset() == uploader.offset
    resumed.upload()
    assert resumed.offset == len(data)
    return url.rstrip("/").rsplit("/", 1)[-1]


def test_tus_upload_interrupted_and_resumed(stack):
    _, token = stack.signed_up_user()
    data = os.urandom(3 * 1024 * 1024 + 12345)
    document_id = upload_interrupted_then_resumed(
        stack, token, data, type="highlight_video", filename="game.bin", filetype="application/octet-stream", title="Game 1")
    status, document = stack.request("GET", "/api/documents/" + document_id, headers={"Authorization": "Bearer " + token})
    assert status == 200 and document["bytesState"] == "available"
    assert document["sha256"] == hashlib.sha256(data).hexdigest()
    assert document["title"] == "Game 1" and document["length"] == len(data)


def test_seed_002_reads_and_downloads_with_the_supabase_client(stack):
    _, token = stack.signed_up_user()
    data = os.urandom(700_000)
    document_id = upload_interrupted_then_resumed(
        stack, token, data, type="transcript", filename="grades.bin", filetype="application/octet-stream", title="Transcript")
    supabase = user_clients(stack, token)
    row = (supabase.from_("documents").select("id, title, file_url, file_type, type")
           .eq("id", document_id).single().execute()).data
    assert row == {"id": document_id, "title": "Transcript", "file_url": row["file_url"],
                   "file_type": "application/octet-stream", "type": "transcript"}
    # file_url is an absolute signed link: seed 002 downloads it with no headers at all.
    file_url = row["file_url"]
    assert file_url.startswith(stack.url + "/storage/v1/object/sign/documents/" + document_id + "/")
    with urllib.request.urlopen(file_url) as response:
        assert response.status == 200 and response.read() == data
        assert response.headers["ETag"] == '"' + hashlib.sha256(data).hexdigest() + '"'
    ranged = urllib.request.Request(file_url, headers={"Range": "bytes=100-199"})
    with urllib.request.urlopen(ranged) as response:
        assert response.status == 206 and response.read() == data[100:200]
    bucket, path = urllib.parse.urlsplit(file_url).path.split("/object/sign/", 1)[1].split("/", 1)
    assert bucket == "documents"
    assert supabase.storage.from_(bucket).download(path) == data
    signed = supabase.storage.from_(bucket).create_signed_url(path, 60)
    with urllib.request.urlopen(signed["signedURL"]) as response:  # no session: the URL is the credential
        assert response.read() == data
    # Another user's client sees nothing of it.
    _, other = stack.signed_up_user()
    stranger = user_clients(stack, other)
    assert stranger.from_("documents").select("id").eq("id", document_id).execute().data == []
    with pytest.raises(StorageException):
        stranger.storage.from_(bucket).download(path)
