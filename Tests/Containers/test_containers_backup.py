"""A backup taken under acceptance load (`deploy/compose backup DIR`), restored into a fresh project
with a copy of the keys file (`deploy/compose restore DIR`), as an operator practises it. Runs after
test_containers.py (file order), on the same deployment, whose earlier tests left a document.
"""
import hashlib
import os
import pathlib
import shutil
import tempfile
import time


from deployment import PROJECT, AcceptanceLoad, Deployment, free_port, podman
from test_containers import chained_accepts, committed_keys, wait_chained


def test_a_backup_under_load_restores_into_a_fresh_project(deployment, shared, faults):
    users = [deployment.sign_up() for _ in range(4)]
    wait_chained(deployment)
    signed_up = chained_accepts(deployment, users)  # each user's sign-up acceptances, chained
    backup = scratch_dir("compass-backup-")
    load = AcceptanceLoad(deployment, users, deployment.terms_version()).start()
    try:
        load.wait_acks_after(time.monotonic(), 50, 60)
        with load.lock:
            before_backup = [set(keys) for keys in load.keys]
        began = time.monotonic()
        made = deployment.compose("backup", str(backup), timeout=600)
        backup_s = time.monotonic() - began
        # The load went on through the backup and after it.
        load.wait_acks_after(time.monotonic(), 50, 60)
        during_backup = load.acknowledged_between(began, began + backup_s)
    finally:
        load.stop()
    failures_during_load = dict(load.failures)
    assert load.abandoned == 0 and not failures_during_load, f"the backup failed requests: {failures_during_load}"
    assert sorted(os.listdir(backup)) == ["BACKUP", "compass.pgdump"], made.stderr
    assert "keep" in made.stderr and "apart" in made.stderr  # the keys reminder

    workdir = scratch_dir("compass-restore-")
    shutil.copy(deployment.env_file, workdir / "env")  # the same keys: a copy, kept apart from the backup
    os.chmod(workdir / "env", 0o600)
    # A port of its own: GATEWAY_PORT in the environment is the first project's.
    fresh = Deployment(workdir=workdir, port=free_port(), project=f"{PROJECT}-restore")
    try:
        began = time.monotonic()
        fresh.compose("restore", str(backup), timeout=900)
        fresh.wait_healthy(timeout=300)
        fresh.wait_ready()
        restore_s = time.monotonic() - began
        # Every acceptance acknowledged before the backup began is there.
        restored = committed_keys(fresh, load.run_id)
        lost = sum(len(keys - restored.get(user.id, set())) for user, keys in zip(users, before_backup))
        assert lost == 0, f"{lost} acceptances acknowledged before the backup began are not in the restored database"
        # Audit resumes chaining from the restored consent stream: each restored act chained once.
        wait_chained(fresh)
        chained = chained_accepts(fresh, users)
        doubled_or_missing = {user.id: chained[user.id] - signed_up[user.id] - len(restored.get(user.id, set())) for user in users}
        assert all(difference == 0 for difference in doubled_or_missing.values()), doubled_or_missing
        verified = fresh.compass("audit", "verify", check=False)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        # The document uploaded before the backup, byte for byte through a new file_url.
        apple_id, document_id, digest, length = shared["document"]
        body = fresh.document_bytes(apple_id, document_id)
        assert len(body) == length and hashlib.sha256(body).hexdigest() == digest
        # New acceptances work, and are chained after the restored ones without gaps or doubles.
        for user in users:
            user.token = fresh.sign_in(user.apple_id)["sessionToken"]
        after = AcceptanceLoad(fresh, users, fresh.terms_version()).start()
        try:
            after.wait_acks_after(time.monotonic(), 20, 60)
        finally:
            after.stop()
        assert after.abandoned == 0
        wait_chained(fresh)
        chained = chained_accepts(fresh, users)
        new = committed_keys(fresh, after.run_id)
        for user in users:
            expected = signed_up[user.id] + len(restored.get(user.id, set())) + len(new.get(user.id, set()))
            assert chained[user.id] == expected, (user.id, chained[user.id], expected)
        assert fresh.compass("audit", "verify", check=False).returncode == 0
        row = dict(fault="backup under load, restore", acknowledged=load.total, acked_during_backup=during_backup,
                   acked_before_backup=sum(len(keys) for keys in before_backup), lost=lost, duplicated=0,
                   failed_requests=sum(failures_during_load.values()), backup_s=round(backup_s, 1),
                   dump_bytes=(backup / "compass.pgdump").stat().st_size, restore_s=round(restore_s, 1),
                   acked_after_restore=after.total, recovered_s=round(restore_s, 1), chain_verifies=True)
        faults.append(row)
        print("RELIABILITY containers", " ".join(f"{key}={value}" for key, value in row.items()))
    except BaseException:
        # What the restored services said: the project is removed below.
        for service in ("audit", "accounts", "documents", "gateway"):
            try:
                logs = podman("logs", "--tail", "25", fresh.container(service), check=False)
            except RuntimeError as error:
                logs = str(error)
            print(f"--- restored {service}:\n{logs}")
        raise
    finally:
        fresh.down(volumes=True)
        shutil.rmtree(backup, ignore_errors=True)


def scratch_dir(prefix):
    path = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(path, 0o755)  # the restored project's containers read its Apple key set from here
    return path
