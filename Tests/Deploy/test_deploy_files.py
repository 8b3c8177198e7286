"""The container and Kubernetes files, checked against the executables they run.

No Docker engine or cluster runs here, so these tests validate rather than run: `docker-compose
config` and `kubernetes-validate --strict` judge the syntax and schemas, and every environment
variable the files set is checked against the list the executable itself prints with `--help-env`
(the same code that reads the settings declares them), so a renamed setting cannot silently
leave a deployment running on a default.

Run by deploy/test with COMPASS_BIN (the built executables) and COMPASS_PY (deploy/lib/python-tools).
"""
import os
import pathlib
import re
import subprocess

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("COMPASS_BIN", ROOT / ".build/debug")).resolve()
PY = pathlib.Path(os.environ.get("COMPASS_PY", ROOT / ".local/py")).resolve()
K8S = ROOT / "deploy/k8s"
# Variables a container sets for its own start command rather than for the executable, or that
# Kubernetes puts into another variable ($(VAR) in a database URL).
SHELL_ONLY = {"POD_INDEX"} | {f"{service}_DATABASE{kind}_PASSWORD" for service in ("LEGAL", "ACCOUNTS", "DOCUMENTS", "AUDIT")
                              for kind in ("", "_OWNER")}
# Kinds defined by operators' CRDs, which kubernetes-validate has no schema for.
CUSTOM_KINDS = {"Cluster", "ClusterIssuer"}


def help_env(executable):
    """The variables an executable reads: {name: (default, description)} from its --help-env table."""
    path = BIN / executable
    assert path.exists(), f"{path} is not built (deploy/test builds it)"
    # The CLI prints the same table as `compass env` (its --help is ArgumentParser's).
    flag = ["env"] if executable == "compass" else ["--help-env"]
    out = subprocess.run([str(path), *flag], capture_output=True, text=True, timeout=30, check=True).stdout
    rows = {}
    for line in out.splitlines():
        match = re.match(r"\|\s*`([A-Z0-9_]+)`\s*\|\s*(.*?)\s*\|\s*(yes|no)\s*\|\s*(.*?)\s*\|$", line)
        if match:
            rows[match.group(1)] = (match.group(2), match.group(4))
    assert rows, f"{executable} {flag[0]} printed no table:\n{out}"
    return rows


def required(variables):
    return {name for name, (_, description) in variables.items() if "Required" in description}


def env_file(tmp_path, leave_out=()):
    """The .env a deployer makes with `compass keys generate`, less the variables in leave_out."""
    generated = subprocess.run([str(BIN / "compass"), "keys", "generate"], capture_output=True, text=True,
                               timeout=30, check=True).stdout
    kept = [line for line in generated.splitlines() if line.split("=", 1)[0] not in leave_out]
    path = tmp_path / ".env"
    path.write_text("\n".join(kept) + "\n")
    return path


def compose_config(tmp_path, leave_out=()):
    return subprocess.run(
        [str(PY / "compose/bin/docker-compose"), "--env-file", str(env_file(tmp_path, leave_out)),
         "-f", str(ROOT / "docker-compose.yml"), "config"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)


@pytest.fixture(scope="module")
def compose(tmp_path_factory):
    result = compose_config(tmp_path_factory.mktemp("compose"))
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def default_services(compose):
    """The services a plain `docker compose up` starts: those in no profile."""
    return {name: service for name, service in compose["services"].items() if not service.get("profiles")}


def test_compose_is_valid_and_runs_every_service(compose):
    assert set(default_services(compose)) == {"postgres", "db-roles", "legal", "audit", "accounts", "documents", "gateway"}
    # Only the gateway is reachable from outside.
    published = {name for name, service in default_services(compose).items() if service.get("ports")}
    assert published == {"gateway"}


def test_compose_tls_proxy_is_opt_in_and_fronts_the_gateway(compose):
    # Not part of a plain `docker compose up`: only with --profile tls.
    services = compose["services"]
    caddy = services["caddy"]
    assert caddy["profiles"] == ["tls"] and "caddy" not in default_services(compose)
    assert {str(port["target"]) for port in caddy["ports"]} == {"80", "443"}
    assert caddy["depends_on"] == {"gateway": {"condition": "service_healthy"}}
    mounted = {volume.split(":")[1]: volume.split(":") for volume in caddy["volumes"]}
    source, _, mode = mounted["/etc/caddy/Caddyfile"]
    assert pathlib.Path(source) == ROOT / "deploy/Caddyfile" and mode == "ro"
    text = pathlib.Path(source).read_text()
    # It proxies to the port the gateway serves HTTP on, with HSTS of at least a year.
    assert f"reverse_proxy gateway:{services['gateway']['environment']['GATEWAY_HTTP_PORT']}" in text
    hsts = re.search(r'Strict-Transport-Security "max-age=(\d+)', text)
    assert hsts and int(hsts.group(1)) >= 31536000
    assert "{$COMPASS_DOMAIN}" in text and caddy["environment"]["COMPASS_DOMAIN"]


def test_compose_s3_profile_runs_seaweedfs_with_documents_credentials(compose):
    # Not part of a plain `docker compose up`: only with --profile s3 (deploy/compose then keeps
    # DOCUMENTS_STORAGE=s3 and the endpoint in .env).
    services = compose["services"]
    seaweedfs, documents = services["seaweedfs"], services["documents"]["environment"]
    assert seaweedfs["profiles"] == ["s3"] and "seaweedfs" not in default_services(compose)
    assert seaweedfs["image"].split("/")[-1].startswith("seaweedfs:") and "chrislusf/" in seaweedfs["image"]
    assert not seaweedfs.get("ports"), "the object store stays on the compose network"
    # SeaweedFS's admin identity is Documents' own key pair, made by `compass keys generate`.
    assert seaweedfs["environment"]["AWS_ACCESS_KEY_ID"] == documents["DOCUMENTS_S3_ACCESS_KEY_ID"] != ""
    assert seaweedfs["environment"]["AWS_SECRET_ACCESS_KEY"] == documents["DOCUMENTS_S3_SECRET_ACCESS_KEY"] != ""
    assert seaweedfs["environment"]["S3_BUCKET"] == documents["DOCUMENTS_S3_BUCKET"]
    # Without the profile Documents names no endpoint, so it never waits for a store that is not there.
    assert not documents["DOCUMENTS_S3_ENDPOINT"] and not documents["DOCUMENTS_STORAGE"]
    assert any(volume.endswith(":/data:rw") or volume.endswith(":/data") for volume in seaweedfs["volumes"])
    script = next(v.split(":")[0] for v in seaweedfs["volumes"] if v.split(":")[1] == seaweedfs["entrypoint"][-1])
    text = pathlib.Path(script).read_text()
    assert "s3.bucket.create" in text and "compass-bucket-ready" in " ".join(seaweedfs["healthcheck"]["test"])
    compose_script = (ROOT / "deploy/compose").read_text()
    assert "DOCUMENTS_S3_ENDPOINT=http://seaweedfs:8333" in compose_script and "DOCUMENTS_STORAGE=s3" in compose_script


def test_compose_refuses_to_start_without_keys(tmp_path):
    result = compose_config(tmp_path, leave_out=("AUDIT_SIGNING_KEY",))
    assert result.returncode != 0
    assert "AUDIT_SIGNING_KEY" in result.stderr


@pytest.mark.parametrize("name", ["legal", "audit", "accounts", "documents", "gateway"])
def test_compose_service_matches_its_executable(compose, name):
    service = compose["services"][name]
    executable = service["command"][0]
    variables = help_env(executable)
    environment = service["environment"]
    unknown = set(environment) - set(variables)
    assert not unknown, f"{name} sets variables {executable} never reads: {sorted(unknown)}"
    missing = required(variables) - set(environment)
    assert not missing, f"{name} leaves required variables unset: {sorted(missing)}"
    # The healthcheck asks the port the service serves health on.
    health_port = environment.get("HEALTH_PORT")
    assert health_port and f":{health_port}/" in " ".join(service["healthcheck"]["test"])
    # Every dependency waits for health (or, the one-shot db-roles, for its success), not just
    # for a started container.
    for dependency, condition in service["depends_on"].items():
        expected = "service_completed_successfully" if dependency == "db-roles" else "service_healthy"
        assert condition["condition"] == expected, dependency


# What docker-compose.yml sets from its own topology rather than from .env (its header lists them).
COMPOSE_TOPOLOGY = {
    "HEALTH_HOST", "HEALTH_PORT", "RPC_BIND", "EVENTS_BIND", "BUS_ADMITTED_KEYS", "BUS_SECRET_KEY", "DATABASE_URL",
    "DATABASE_MIGRATION_URL", "GATEWAY_HTTP_HOST", "GATEWAY_HTTP_PORT",
} | {f"{peer}_{kind}_ENDPOINTS" for peer in ("LEGAL", "ACCOUNTS", "DOCUMENTS", "AUDIT") for kind in ("RPC", "EVENTS")}
EXECUTABLES = {"legal": "Legal", "audit": "Audit", "accounts": "Accounts", "documents": "Documents", "gateway": "Gateway"}


def test_every_documented_setting_reaches_its_container_from_env(tmp_path):
    """Each variable an executable documents (`--help-env`, the source of deploy/CONFIGURATION.md)
    set in .env under its documented name arrives in that executable's container unchanged; only
    the compose file's topology is its own."""
    documented = {name: help_env(executable) for name, executable in EXECUTABLES.items()}
    path = env_file(tmp_path)
    generated = dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    values = dict(generated)
    for variables in documented.values():
        for variable in variables:
            if variable not in COMPOSE_TOPOLOGY and variable not in generated:
                values[variable] = f"value-of-{variable.lower()}"
    path.write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    result = subprocess.run(
        [str(PY / "compose/bin/docker-compose"), "--env-file", str(path), "-f", str(ROOT / "docker-compose.yml"), "config"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    for name, variables in documented.items():
        environment = services[name]["environment"]
        for variable in variables:
            if variable in COMPOSE_TOPOLOGY:
                assert variable in environment, f"{name}: the compose file does not set {variable}"
            else:
                assert str(environment.get(variable)) == values[variable], f"{name}: {variable} from .env does not reach the container"
    # The old shared name is gone: each executable's bundle id is its documented variable.
    assert "APPLE_BUNDLE_ID" not in (ROOT / "docker-compose.yml").read_text().replace("_APPLE_BUNDLE_ID", "")


def test_compose_services_run_as_their_own_database_roles(compose):
    services = compose["services"]
    roles = services["db-roles"]
    assert roles["command"] == ["compass", "db", "roles"] and roles["depends_on"]["postgres"]["condition"] == "service_healthy"
    admin = roles["environment"]["DATABASE_ADMIN_URL"]
    for name in ["legal", "audit", "accounts", "documents"]:
        environment = services[name]["environment"]
        runtime, owner = environment["DATABASE_URL"], environment["DATABASE_MIGRATION_URL"]
        assert runtime.startswith(f"postgresql://compass_{name}:") and owner.startswith(f"postgresql://compass_{name}_owner:")
        # The passwords db-roles sets are the ones the service connects with; the admin's is not its.
        assert runtime.split(":")[2].split("@")[0] == roles["environment"][f"{name.upper()}_DATABASE_PASSWORD"]
        assert owner.split(":")[2].split("@")[0] == roles["environment"][f"{name.upper()}_DATABASE_OWNER_PASSWORD"]
        assert admin.split(":")[2].split("@")[0] not in (runtime.split(":")[2].split("@")[0], owner.split(":")[2].split("@")[0])
        assert services[name]["depends_on"]["db-roles"]["condition"] == "service_completed_successfully"
    assert "DATABASE_URL" not in services["gateway"]["environment"]
    assert "compass db roles" in subprocess.run([str(BIN / "compass"), "db", "roles", "--help"], capture_output=True, text=True).stdout


def test_compose_bus_endpoints_point_at_bound_ports(compose):
    services = compose["services"]
    for name in ["legal", "audit", "accounts", "documents"]:
        rpc_port = services[name]["environment"]["RPC_BIND"].rsplit(":", 1)[1]
        events_port = services[name]["environment"]["EVENTS_BIND"].rsplit(":", 1)[1]
        for other, service in services.items():
            environment = service.get("environment") or {}
            if f"{name.upper()}_RPC_ENDPOINTS" in environment:
                assert environment[f"{name.upper()}_RPC_ENDPOINTS"] == f"tcp://{name}:{rpc_port}", other
            if f"{name.upper()}_EVENTS_ENDPOINTS" in environment:
                assert environment[f"{name.upper()}_EVENTS_ENDPOINTS"] == f"tcp://{name}:{events_port}", other


def k8s_documents():
    documents = []
    for path in sorted(K8S.glob("*.yaml")):
        documents += [document for document in yaml.safe_load_all(path.read_text()) if document]
    return documents


TOOLBOX = "compass-toolbox"


def service_workloads():
    """The services' Deployments and StatefulSet (not the operator's toolbox)."""
    return [d for d in k8s_documents() if d["kind"] in ("Deployment", "StatefulSet") and d["metadata"]["name"] != TOOLBOX]


def test_k8s_manifests_are_rendered_from_their_source():
    result = subprocess.run(
        [str(PY / "tools/bin/python"), str(K8S / "render.py"), "--check"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_k8s_manifests_validate_strictly():
    files = [str(path) for path in sorted(K8S.glob("*.yaml"))]
    result = subprocess.run(
        [str(PY / "tools/bin/kubernetes-validate"), "--strict", *files], capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "ERROR" not in output
    # Every built-in resource passed; only the custom resources (CloudNativePG's Cluster,
    # cert-manager's ClusterIssuer) have no schema here.
    passed = len(re.findall(r"^INFO .* passed for resource", output, re.MULTILINE))
    assert passed == len([d for d in k8s_documents() if d["kind"] not in CUSTOM_KINDS])


def test_k8s_database_cluster_is_replicated_and_services_have_roles_of_their_own():
    clusters = [d for d in k8s_documents() if d["kind"] == "Cluster"]
    assert len(clusters) == 1
    cluster = clusters[0]
    assert cluster["apiVersion"] == "postgresql.cnpg.io/v1"
    assert cluster["spec"]["instances"] >= 3
    assert cluster["spec"]["bootstrap"]["initdb"] == {"database": "compass", "owner": "compass"}
    # The db-roles Job makes the roles as the superuser CloudNativePG keeps in <cluster>-superuser.
    job = next(d for d in k8s_documents() if d["kind"] == "Job" and d["metadata"]["name"] == "db-roles")
    assert cluster["spec"]["enableSuperuserAccess"] is True
    job_container = job["spec"]["template"]["spec"]["containers"][0]
    assert job_container["command"] == ["compass", "db", "roles"]
    job_env = {item["name"]: item for item in job_container["env"]}
    assert job_env["PGPASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": f"{cluster['metadata']['name']}-superuser", "key": "password"}
    for workload in [d for d in service_workloads() if d["metadata"]["name"] != "gateway"]:
        name = workload["metadata"]["name"]
        pod = workload["spec"]["template"]["spec"]
        serving = {item["name"]: item for item in pod["containers"][0]["env"]}
        # The serving container is the runtime role, and never holds the owner's password.
        assert serving["DATABASE_URL"]["value"].startswith(f"postgresql://compass_{name}:$({name.upper()}_DATABASE_PASSWORD)@")
        assert not {"DATABASE_MIGRATION_URL", f"{name.upper()}_DATABASE_OWNER_PASSWORD", "DATABASE_MIGRATE_ONLY"} & set(serving)
        # The init container migrates as the owner and exits; the Job sets the same passwords.
        (init,) = pod["initContainers"]
        migrating = {item["name"]: item for item in init["env"]}
        assert migrating["DATABASE_MIGRATE_ONLY"]["value"] == "true"
        assert migrating["DATABASE_MIGRATION_URL"]["value"].startswith(
            f"postgresql://compass_{name}_owner:$({name.upper()}_DATABASE_OWNER_PASSWORD)@")
        for variable in (f"{name.upper()}_DATABASE_PASSWORD", f"{name.upper()}_DATABASE_OWNER_PASSWORD"):
            assert migrating[variable]["valueFrom"] == job_env[variable]["valueFrom"]
        assert init["command"] == pod["containers"][0]["command"]
        executable = init["command"][-1].split()[-1]
        unknown = set(migrating) - SHELL_ONLY - set(help_env(executable))
        assert not unknown, f"{name}'s init container sets variables {executable} never reads: {sorted(unknown)}"


def test_k8s_workloads_match_their_executables():
    config = next(d for d in k8s_documents() if d["kind"] == "ConfigMap")["data"]
    workloads = service_workloads()
    assert {w["metadata"]["name"] for w in workloads} == {"legal", "audit", "accounts", "documents", "gateway"}
    for workload in workloads:
        container = workload["spec"]["template"]["spec"]["containers"][0]
        executable = container["command"][-1].split()[-1]
        variables = help_env(executable)
        own = {item["name"] for item in container["env"]} - SHELL_ONLY
        shared = set(config)
        # The shared ConfigMap may hold settings only some services read; each must be read by one.
        assert not own - set(variables), f"{executable}: {sorted(own - set(variables))}"
        if executable == "Audit":
            own.add("AUDIT_CHAIN_OFFSET")
        missing = required(variables) - own - shared
        assert not missing, f"{executable} leaves required variables unset: {sorted(missing)}"
        probes = [container[p]["httpGet"] for p in ("startupProbe", "livenessProbe", "readinessProbe")]
        health = next(p for p in container["ports"] if p["name"] == "health")["containerPort"]
        assert int(config["HEALTH_PORT"]) == health
        assert {p["port"] for p in probes} == {"health"}
    every_read = set().union(*(help_env(w["spec"]["template"]["spec"]["containers"][0]["command"][-1].split()[-1])
                               for w in workloads))
    assert not set(config) - every_read, f"ConfigMap keys nobody reads: {sorted(set(config) - every_read)}"


def test_k8s_every_documented_setting_can_be_set_per_service():
    """Each variable an executable documents can be set for its pods by its documented name: the
    service's own optional ConfigMap and Secret come after the shared ConfigMap (later sources win),
    and the container's explicit `env` pins only the topology and keys the Secret holds under the
    same names."""
    for workload in service_workloads():
        name = workload["metadata"]["name"]
        container = workload["spec"]["template"]["spec"]["containers"][0]
        assert container["envFrom"] == [
            {"configMapRef": {"name": "compass-config"}},
            {"configMapRef": {"name": f"compass-{name}-settings", "optional": True}},
            {"secretRef": {"name": f"compass-{name}-secrets", "optional": True}},
        ], name
        # The chain offset is the StatefulSet ordinal's, computed by the start command.
        topology = COMPOSE_TOPOLOGY | SHELL_ONLY | {"AUDIT_CHAIN_OFFSET"}
        for item in container["env"]:
            key = item.get("valueFrom", {}).get("secretKeyRef", {}).get("key")
            assert item["name"] in topology or key == item["name"], f"{name} pins {item['name']}, which its settings cannot override"


def test_k8s_toolbox_is_the_only_holder_of_the_operator_key_and_compass_reads_its_settings():
    documents = k8s_documents()
    (toolbox,) = [d for d in documents if d["metadata"]["name"] == TOOLBOX]
    assert toolbox["kind"] == "Deployment" and toolbox["spec"]["replicas"] == 0  # scaled up when needed
    holders = {d["metadata"]["name"] for d in documents if "OPERATOR_SECRET_KEY" in yaml.safe_dump(d)}
    assert holders == {TOOLBOX}
    (container,) = toolbox["spec"]["template"]["spec"]["containers"]
    env = {item["name"]: item for item in container["env"]}
    assert env["BUS_SECRET_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "compass-operator", "key": "OPERATOR_SECRET_KEY"}
    unknown = set(env) - {"USER"} - set(help_env("compass"))
    assert not unknown, f"the toolbox sets variables compass never reads: {sorted(unknown)}"
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    # Every service's health port is reachable by its Service name, as `compass status --health` asks.
    for workload in service_workloads():
        name = workload["metadata"]["name"]
        (service,) = [d for d in documents if d["kind"] == "Service" and d["metadata"]["name"] == name]
        assert {"name": "health", "port": 8081, "targetPort": "health"} in service["spec"]["ports"], name


def test_k8s_rollouts_never_go_below_their_replicas_and_stops_fit_the_grace_period():
    documents = k8s_documents()
    for workload in service_workloads():
        name, spec = workload["metadata"]["name"], workload["spec"]
        if workload["kind"] == "Deployment":
            assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}, name
        else:
            assert spec["updateStrategy"]["type"] == "RollingUpdate", name
        pod = spec["template"]["spec"]
        (container,) = pod["containers"]
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        pause = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
        executable = container["command"][-1].split()[-1]
        drain = int(help_env(executable)["SHUTDOWN_TIMEOUT"][0].strip("`s"))
        # The pause before SIGTERM, then the drain SHUTDOWN_TIMEOUT bounds, within the grace period.
        assert 0 < pause and pause + drain < pod["terminationGracePeriodSeconds"], (name, pause, drain)
        assert not any("lifecycle" in init for init in pod.get("initContainers", []))
        budgets = [d for d in documents if d["kind"] == "PodDisruptionBudget" and d["metadata"]["name"] == name]
        assert [b["spec"] for b in budgets] == [{"maxUnavailable": 1, "selector": spec["selector"]}], name


def test_k8s_release_manifests_name_one_build_everywhere():
    script = K8S / "release-manifests"
    image = "registry.example.com/recruiting-compass:1a2b3c4"
    out = subprocess.run([str(script), image], capture_output=True, text=True, timeout=30, check=True).stdout
    released = [d for d in yaml.safe_load_all(out) if d]
    assert len(released) == len(k8s_documents())
    images = set(re.findall(r"^\s*image: (\S+)$", out, re.MULTILINE))
    assert images == {image}
    config = next(d for d in released if d["kind"] == "ConfigMap")["data"]
    assert config["SERVICE_VERSION"] == "1a2b3c4"
    assert [d["kind"] for d in released][:2] == ["Namespace", "ConfigMap"]
    for bad in ("registry.example.com/recruiting-compass:latest", "registry.example.com/recruiting-compass", "a b"):
        refused = subprocess.run([str(script), bad], capture_output=True, text=True, timeout=30)
        assert refused.returncode == 2 and refused.stderr.startswith("release-manifests: ") and not refused.stdout, bad


def test_k8s_ingress_serves_the_gateway_over_tls_with_hsts():
    documents = k8s_documents()
    ingresses = [d for d in documents if d["kind"] == "Ingress"]
    assert len(ingresses) == 1
    ingress = ingresses[0]
    annotations = ingress["metadata"]["annotations"]
    issuers = {d["metadata"]["name"]: d for d in documents if d["kind"] == "ClusterIssuer"}
    # cert-manager issues the certificate through an issuer these manifests define.
    assert annotations["cert-manager.io/cluster-issuer"] in issuers
    issuer = issuers[annotations["cert-manager.io/cluster-issuer"]]
    assert issuer["apiVersion"] == "cert-manager.io/v1" and issuer["spec"]["acme"]["server"].startswith("https://")
    assert issuer["spec"]["acme"]["solvers"][0]["http01"]["ingress"]["ingressClassName"] == ingress["spec"]["ingressClassName"]
    # Every host is served over TLS, plain HTTP redirected.
    hosts = [rule["host"] for rule in ingress["spec"]["rules"]]
    assert hosts and ingress["spec"]["tls"] == [{"hosts": hosts, "secretName": ingress["spec"]["tls"][0]["secretName"]}]
    assert annotations["nginx.ingress.kubernetes.io/force-ssl-redirect"] == "true"
    # Uploads and downloads stream: no body limit at the edge (the gateway has its own).
    assert annotations["nginx.ingress.kubernetes.io/proxy-body-size"] == "0"
    # Everything goes to the gateway's Service, on a port it has.
    gateway_service = next(d for d in documents if d["kind"] == "Service" and d["metadata"]["name"] == "gateway")
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            assert path["path"] == "/" and path["pathType"] == "Prefix"
            backend = path["backend"]["service"]
            assert backend["name"] == "gateway"
            assert backend["port"]["name"] in {port["name"] for port in gateway_service["spec"]["ports"]}
    # The gateway sends HSTS (a year at least) for what the ingress forwards as HTTPS, which it
    # believes from the pod network only.
    config = next(d for d in documents if d["kind"] == "ConfigMap")["data"]
    hsts = re.match(r"max-age=(\d+)", config["GATEWAY_HSTS"])
    assert hsts and int(hsts.group(1)) >= 31536000
    assert config["GATEWAY_TRUSTED_PROXIES"]
    assert "GATEWAY_HSTS" in help_env("Gateway")


def test_audit_instances_write_disjoint_chains():
    audit = next(d for d in k8s_documents() if d["kind"] == "StatefulSet" and d["metadata"]["name"] == "audit")
    container = audit["spec"]["template"]["spec"]["containers"][0]
    script = container["command"][-1]
    env = {item["name"]: item for item in container["env"]}
    # From the shared ConfigMap (an override in compass-audit-settings applies to every instance alike).
    writers = int(next(d for d in k8s_documents() if d["kind"] == "ConfigMap")["data"]["AUDIT_WRITERS"])
    index_path = env["POD_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert "apps.kubernetes.io/pod-index" in index_path
    # Run the start command's arithmetic for three ordinals with a stand-in for the executable.
    offsets = []
    for ordinal in range(3):
        result = subprocess.run(
            ["/bin/sh", "-c", script.replace("exec Audit", 'echo "$AUDIT_CHAIN_OFFSET"')],
            env={"POD_INDEX": str(ordinal), "AUDIT_WRITERS": str(writers), "PATH": "/usr/bin:/bin"},
            capture_output=True, text=True, check=True)
        offsets.append(int(result.stdout))
    assert offsets == [0, writers, 2 * writers]


def test_configuration_reference_is_current():
    result = subprocess.run([str(ROOT / "deploy/config-reference"), "--bin", str(BIN), "--check"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
