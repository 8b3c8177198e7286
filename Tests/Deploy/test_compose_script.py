"""deploy/compose's own logic on a machine with Docker only: making `.env` from the image when there
is neither Swift nor a built `compass`, and handing an operator's host file to `compass` in the
container on standard input.

Docker is not installed here, so `docker` is a recording stand-in on PATH: it answers `info` and
`compose version`, keeps every command line and the standard input it was given, and prints a
fixed keys file for `run … compass keys generate`. What is under test is the script, not Docker;
the container tests (Tests/Containers) run the same commands against real containers under podman.
"""
import json
import os
import pathlib
import shutil
import stat
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

STAND_IN = r"""#!/usr/bin/env python3
import json, os, sys
log = os.environ["DOCKER_LOG"]
stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
with open(log, "a") as f:
    f.write(json.dumps({"args": sys.argv[1:], "stdin": stdin}) + "\n")
args = sys.argv[1:]
if args[:2] == ["image", "inspect"]:
    sys.exit(1)  # not built yet
if args[:1] == ["run"] and args[-3:] == ["compass", "keys", "generate"]:
    print("OPERATOR_SECRET_KEY=operator-secret\nPOSTGRES_PASSWORD=pw")
sys.exit(0)
"""


@pytest.fixture
def docker_only(tmp_path):
    """A checkout holding only deploy/compose, with PATH giving a `docker` stand-in and no Swift."""
    checkout = tmp_path / "checkout"
    (checkout / "deploy/lib").mkdir(parents=True)
    shutil.copy(ROOT / "deploy/compose", checkout / "deploy/compose")
    shutil.copy(ROOT / "deploy/lib/compose-backup", checkout / "deploy/lib/compose-backup")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text(STAND_IN.replace("/usr/bin/env python3", shutil.which("python3")))
    docker.chmod(docker.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "docker.log"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "DOCKER_LOG": str(log), "HOME": str(tmp_path), "USER": "alice"}
    assert not any((pathlib.Path(d) / "swift").exists() for d in env["PATH"].split(":"))

    def run(*args, stdin=subprocess.DEVNULL):
        done = subprocess.run([str(checkout / "deploy/compose"), *args], cwd=checkout, env=env, capture_output=True,
                              text=True, timeout=60, stdin=stdin)
        calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        log.unlink(missing_ok=True)
        return done, calls

    return checkout, run


def test_env_is_made_from_the_image_on_a_docker_only_machine(docker_only):
    checkout, run = docker_only
    done, calls = run("ps")
    assert done.returncode == 0, done.stderr
    commands = [call["args"] for call in calls]
    build = next(c for c in commands if c[:1] == ["build"])
    assert build[:3] == ["build", "-f", "deploy/Dockerfile"] and "recruiting-compass:latest" in build
    assert ["run", "--rm", "--network", "none", "recruiting-compass:latest", "compass", "keys", "generate"] in commands
    assert commands[-1] == ["compose", "ps"]
    env_file = checkout / ".env"
    assert env_file.read_text() == "OPERATOR_SECRET_KEY=operator-secret\nPOSTGRES_PASSWORD=pw\n"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    # Made once: a second command neither builds nor generates again.
    _, again = run("ps")
    assert again and all(c["args"][:1] not in (["build"], ["run"]) for c in again)


def test_a_host_file_reaches_compass_on_standard_input(docker_only, tmp_path):
    checkout, run = docker_only
    (checkout / ".env").write_text("OPERATOR_SECRET_KEY=operator-secret\n")
    terms = tmp_path / "terms.md"
    terms.write_text("# Terms\n\nFrom the host.\n")
    done, calls = run("compass", "legal", "publish", "--type", "terms_of_service", "--version", "v1", "--file", str(terms))
    assert done.returncode == 0, done.stderr
    call = calls[-1]
    assert call["args"] == ["compose", "exec", "-T", "-e", "BUS_SECRET_KEY", "-e", "USER", "gateway", "compass", "legal",
                            "publish", "--type", "terms_of_service", "--version", "v1", "--file", "-"]
    assert call["stdin"] == "# Terms\n\nFrom the host.\n"
    # --file=F too; a path the host lacks is the container's own and passes unchanged.
    _, calls = run("compass", "legal", "publish", f"--file={terms}")
    assert calls[-1]["args"][-1] == "--file=-" and calls[-1]["stdin"] == terms.read_text()
    _, calls = run("compass", "legal", "publish", "--file", "/run/in-the-container.md")
    assert calls[-1]["args"][-2:] == ["--file", "/run/in-the-container.md"] and calls[-1]["stdin"] == ""


def test_a_host_path_that_cannot_be_handed_over_is_refused_and_runs_nothing(docker_only, tmp_path):
    checkout, run = docker_only
    (checkout / ".env").write_text("OPERATOR_SECRET_KEY=operator-secret\n")
    one, two = tmp_path / "one.md", tmp_path / "two.md"
    one.write_text("1")
    two.write_text("2")
    for args, message in ((["--file", str(tmp_path)], "not a readable file"),
                          (["--file", str(one), "--file", str(two)], "only one --file can come from this host")):
        done, calls = run("compass", "legal", "publish", *args)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert not [c for c in calls if c["args"][:2] == ["compose", "exec"]]


def test_backup_and_restore_refuse_what_they_cannot_do_and_run_nothing(docker_only, tmp_path):
    checkout, run = docker_only
    (checkout / ".env").write_text("OPERATOR_SECRET_KEY=operator-secret\n")
    used = tmp_path / "used"
    used.mkdir()
    (used / "something").write_text("x")
    no_backup = tmp_path / "empty"
    no_backup.mkdir()
    tampered = tmp_path / "tampered"
    tampered.mkdir()
    (tampered / "compass.pgdump").write_bytes(b"dump")
    (tampered / "BACKUP").write_text("began=2026-12-06T00:00:00Z\n" + "0" * 64 + "  compass.pgdump\n")
    cases = ((["backup", str(used)], "is not an empty folder"),
             (["backup"], "usage: deploy/compose backup DIR"),
             (["restore", str(no_backup)], "holds no backup"),
             (["restore", str(tampered)], "does not match its SHA-256"),
             (["backup", "a", "b"], "usage: deploy/compose [--profile s3] backup DIR"))
    for args, message in cases:
        done, calls = run(*args)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
        assert not [c for c in calls if c["args"][:2] in (["compose", "exec"], ["compose", "up"])], args
