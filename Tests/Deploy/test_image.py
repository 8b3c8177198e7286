"""The image's one executable and its pinned package versions (deploy/Dockerfile's header).

The image ships `recruiting-compass`, which runs the executable its name picks, and links each
name the compose file and the Kubernetes manifests run to it. These check, against the built
binary, that every such name is linked in the Dockerfile and runs the same executable as the
per-executable build (`--help-env`'s table and `compass --help` are each executable's own), and
that the package versions the image build applies (deploy/package-versions) agree with the exact
pins of Package.swift.

Run by deploy/test with COMPASS_BIN (the built executables).
"""
import os
import pathlib
import re
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("COMPASS_BIN", ROOT / ".build/debug")).resolve()
MULTICALL = BIN / "recruiting-compass"
SERVICES = ["Legal", "Audit", "Accounts", "Documents", "Gateway"]


def linked_names():
    """The names the Dockerfile links to recruiting-compass."""
    dockerfile = (ROOT / "deploy/Dockerfile").read_text()
    match = re.search(r"for exe in ([\w ]+); do ln -s recruiting-compass ", dockerfile)
    assert match, "deploy/Dockerfile links no names to recruiting-compass"
    return match.group(1).split()


def run(argv0, *arguments, executable=MULTICALL):
    assert executable.exists(), f"{executable} is not built (deploy/test builds it)"
    return subprocess.run([argv0, *arguments], executable=str(executable), capture_output=True, text=True, timeout=30)


def test_every_name_the_deployments_run_is_linked():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    run_by_compose = {service["command"][0] for service in compose["services"].values()
                      if service.get("image", "").startswith("${COMPASS_IMAGE") or "build" in service}
    run_by_k8s = set()
    for path in sorted((ROOT / "deploy/k8s").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            spec = (document or {}).get("spec", {})
            pod = spec.get("template", {}).get("spec", {}) or spec.get("jobTemplate", {}).get("spec", {}).get("template", {}).get("spec", {})
            if (document or {}).get("metadata", {}).get("name") == "compass-toolbox":
                run_by_k8s.add("compass")  # its command only waits; operators `kubectl exec` compass in it
                continue
            for container in pod.get("containers", []) + pod.get("initContainers", []):
                if container.get("image", "").startswith("recruiting-compass"):
                    command = container["command"]
                    run_by_k8s.add(command[-1].split()[-1] if command[0] in ("sh", "/bin/sh") else command[0])
    assert run_by_compose, "no service of docker-compose.yml runs the image"
    assert run_by_k8s, "no manifest runs the image"
    missing = (run_by_compose | run_by_k8s) - set(linked_names())
    assert not missing, f"the deployments run {sorted(missing)}, which the image does not link to recruiting-compass"


@pytest.mark.parametrize("name", SERVICES)
def test_each_link_runs_its_own_executable(name):
    own = run(name, "--help-env", executable=BIN / name)
    assert own.returncode == 0, own.stderr
    by_link = run(name, "--help-env")
    by_argument = run("recruiting-compass", name, "--help-env")
    assert by_link.returncode == 0 and by_argument.returncode == 0, by_link.stderr + by_argument.stderr
    assert by_link.stdout == own.stdout == by_argument.stdout


def test_compass_link_runs_the_cli():
    own = run("compass", "--help", executable=BIN / "compass")
    by_link = run("compass", "--help")
    by_argument = run("recruiting-compass", "compass", "--help")
    assert own.returncode == by_link.returncode == by_argument.returncode == 0
    assert "USAGE: compass" in own.stdout and by_link.stdout == own.stdout == by_argument.stdout


@pytest.mark.parametrize("argv", [["recruiting-compass"], ["recruiting-compass", "Billing"], ["legal", "--help-env"]])
def test_an_unknown_name_is_refused(argv):
    result = run(*argv)
    assert result.returncode == 64
    assert result.stdout == "" and "usage: recruiting-compass {Legal|Audit|Accounts|Documents|Gateway|compass}" in result.stderr


def test_package_versions_agree_with_package_swift():
    recorded = {}
    for line in (ROOT / "deploy/package-versions").read_text().splitlines():
        if line and not line.startswith("#"):
            identity, location, version = line.split()
            recorded[identity] = (location, version)
    pins = re.findall(r'\.package\(url: "([^"]+)", exact: "([^"]+)"', (ROOT / "Package.swift").read_text())
    assert pins, "Package.swift pins no dependency with exact:"
    for url, version in pins:
        identity = url.rstrip("/").removesuffix(".git").rsplit("/", 1)[-1].lower()
        assert identity in recorded, f"{identity} is pinned in Package.swift but not recorded (deploy/images/pin-packages record)"
        assert recorded[identity][1] == version, (
            f"{identity}: Package.swift pins {version}, deploy/package-versions records {recorded[identity][1]}")
