#!/usr/bin/env python3
"""Writes the Kubernetes manifests in this folder from one description of the services.

    python3 deploy/k8s/render.py          # rewrite the manifests
    python3 deploy/k8s/render.py --check  # exit 1 when a committed manifest differs (the tests run this)

Every service runs the same image with a different command, reads the same bus settings from the
`compass-config` ConfigMap, and its keys and database passwords from the `compass-secrets` Secret
(made from the `.env` that `compass keys generate` prints: `kubectl -n recruiting-compass create
secret generic compass-secrets --from-env-file=.env`). Each service has database roles of its own
(`compass db roles`, run by the `db-roles` Job with the superuser CloudNativePG keeps in
`compass-db-superuser`): an init container applies the migrations as the schema's owner
(DATABASE_MIGRATE_ONLY), and the serving container connects as the runtime role only, which reaches
that schema's rows and nothing else, without the owner's password. Why each piece is shaped the way
it is: deploy/SCALING.md and deploy/OPERATIONS.md.
"""
import copy
import pathlib
import sys

import yaml

HERE = pathlib.Path(__file__).resolve().parent
NAMESPACE = "recruiting-compass"
IMAGE = "recruiting-compass:latest"
HEALTH_PORT = 8081
PRE_STOP_SECONDS = 5
GRACE_SECONDS = 40
RPC_PORT = 5550
EVENTS_PORT = 5650

# name: (executable, kind, replicas, min, max, memory request, memory limit, extra secret env)
SERVICES = {
    "legal": ("Legal", "Deployment", 2, 2, 4, "64Mi", "256Mi", {}),
    "accounts": ("Accounts", "Deployment", 2, 2, 6, "64Mi", "256Mi", {
        "ACCOUNTS_SESSION_SIGNING_KEY": "ACCOUNTS_SESSION_SIGNING_KEY",
        "ACCOUNTS_CERTIFICATE_SIGNING_KEY": "ACCOUNTS_CERTIFICATE_SIGNING_KEY",
    }),
    # The bucket's keys, when DOCUMENTS_S3_STORAGE below names one (see there).
    "documents": ("Documents", "Deployment", 2, 2, 6, "128Mi", "512Mi", {
        "DOCUMENTS_S3_ACCESS_KEY_ID": "DOCUMENTS_S3_ACCESS_KEY_ID",
        "DOCUMENTS_S3_SECRET_ACCESS_KEY": "DOCUMENTS_S3_SECRET_ACCESS_KEY",
    }),
    # Audit instances each write their own hash chains (AUDIT_CHAIN_OFFSET from the pod's ordinal),
    # so they are a StatefulSet: a stable ordinal per instance.
    "audit": ("Audit", "StatefulSet", 2, 2, 4, "128Mi", "512Mi", {
        "AUDIT_SIGNING_KEY": "AUDIT_SIGNING_KEY",
    }),
    "gateway": ("Gateway", "Deployment", 2, 2, 10, "64Mi", "512Mi", {
        "GATEWAY_JWT_SECRET": "GATEWAY_JWT_SECRET",
        # Every replica must verify the file_url links any other replica signed.
        "GATEWAY_FILE_URL_KEYS": "GATEWAY_FILE_URL_KEYS",
    }),
}
PEERS = ["legal", "accounts", "documents", "audit"]

# Where Documents keeps new documents' bytes. As rendered: PostgreSQL large objects, no bucket (an
# empty endpoint is no S3 at all). To use an external S3-compatible bucket (AWS S3, GCS's XML API,
# MinIO, SeaweedFS…), set here (or `kubectl -n recruiting-compass edit configmap compass-config`):
#   DOCUMENTS_STORAGE: s3, DOCUMENTS_S3_ENDPOINT: https://s3.eu-west-1.amazonaws.com,
#   DOCUMENTS_S3_REGION: eu-west-1, DOCUMENTS_S3_BUCKET: <bucket>, DOCUMENTS_S3_PATH_STYLE: "false" (AWS)
# and put the bucket's keys into the compass-secrets Secret as DOCUMENTS_S3_ACCESS_KEY_ID and
# DOCUMENTS_S3_SECRET_ACCESS_KEY (`compass keys generate` writes placeholders of its own there: replace
# them with the bucket's), then `kubectl -n recruiting-compass rollout restart deployment/documents`.
# Documents checks the bucket before it reports ready, so a wrong key stops the rollout, not an
# upload. Existing documents keep their bytes where they are: deploy/OPERATIONS.md, "S3".
DOCUMENTS_S3_STORAGE = {
    "DOCUMENTS_STORAGE": "postgres",
    "DOCUMENTS_S3_ENDPOINT": "",
    "DOCUMENTS_S3_REGION": "us-east-1",
    "DOCUMENTS_S3_BUCKET": "compass-documents",
    "DOCUMENTS_S3_PATH_STYLE": "true",
}


def labels(name):
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "recruiting-compass"}


def restricted():
    """Every container's securityContext: a non-root user, a read-only root, no privilege."""
    return {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
            "runAsNonRoot": True, "runAsUser": 10001, "capabilities": {"drop": ["ALL"]}}


def secret_env(variable, key, secret="compass-secrets"):
    return {"name": variable, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def config():
    data = {
        "LOG_FORMAT": "json",
        # What /healthz and the logs report; deploy/k8s/release-manifests sets the image's tag.
        "SERVICE_VERSION": "dev",
        "HEALTH_HOST": "0.0.0.0",
        "HEALTH_PORT": str(HEALTH_PORT),
        "RPC_BIND": f"tcp://0.0.0.0:{RPC_PORT}",
        "EVENTS_BIND": f"tcp://0.0.0.0:{EVENTS_PORT}",
        "ACCOUNTS_APPLE_BUNDLE_ID": "com.recruitingcompass.app",
        "GATEWAY_APPLE_BUNDLE_ID": "com.recruitingcompass.app",
        "GATEWAY_HTTP_HOST": "0.0.0.0",
        "GATEWAY_HTTP_PORT": "8080",
        # The ingress controller's pods forward the client's address (X-Forwarded-For) and scheme:
        # the cluster's pod network (adjust to yours).
        "GATEWAY_TRUSTED_PROXIES": "10.0.0.0/8",
        "GATEWAY_HSTS": HSTS,
        **DOCUMENTS_S3_STORAGE,
        # Hash chains each Audit instance writes; its first chain is its ordinal times this.
        "AUDIT_WRITERS": "4",
    }
    for peer in PEERS:
        data[f"{peer.upper()}_RPC_ENDPOINTS"] = f"tcp://{peer}:{RPC_PORT}"
        data[f"{peer.upper()}_EVENTS_ENDPOINTS"] = f"tcp://{peer}:{EVENTS_PORT}"
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "compass-config", "namespace": NAMESPACE, "labels": labels("compass")},
            "data": data}


DATABASE_HOST = "compass-db-rw:5432/compass"


def role_url(variable, role, password_variable):
    """A database URL whose password Kubernetes fills in from a variable defined before it."""
    return {"name": variable, "value": f"postgresql://{role}:$({password_variable})@{DATABASE_HOST}"}


def database_env(name, owner=False):
    """The runtime role's URL; with `owner`, the schema owner's too (the migrating init container)."""
    upper = name.upper()
    env = [secret_env(f"{upper}_DATABASE_PASSWORD", f"{upper}_DATABASE_PASSWORD"),
           role_url("DATABASE_URL", f"compass_{name}", f"{upper}_DATABASE_PASSWORD")]
    if owner:
        env += [secret_env(f"{upper}_DATABASE_OWNER_PASSWORD", f"{upper}_DATABASE_OWNER_PASSWORD"),
                role_url("DATABASE_MIGRATION_URL", f"compass_{name}_owner", f"{upper}_DATABASE_OWNER_PASSWORD"),
                {"name": "DATABASE_MIGRATE_ONLY", "value": "true"}]
    return env


def settings_sources(name):
    """Where a container's settings come from, later ones winning: the shared ConfigMap, then the
    service's own ConfigMap and Secret, which the operator makes (both optional, never rendered
    here, so `kubectl apply` keeps them): any variable deploy/CONFIGURATION.md lists for the
    executable, by its documented name, e.g.
    `kubectl -n recruiting-compass create configmap compass-gateway-settings --from-env-file=gateway.env`.
    Only what `env` sets (the topology, and keys from compass-secrets by their documented names)
    cannot be overridden there."""
    return [{"configMapRef": {"name": "compass-config"}},
            {"configMapRef": {"name": f"compass-{name}-settings", "optional": True}},
            {"secretRef": {"name": f"compass-{name}-secrets", "optional": True}}]


def container(name, executable, memory_request, memory_limit, extra):
    env = [secret_env("BUS_SECRET_KEY", f"{name.upper()}_SECRET_KEY")]
    if name != "gateway":  # the gateway only calls: no database, no socket of its own to admit clients to
        env += database_env(name) + [secret_env("BUS_ADMITTED_KEYS", "BUS_ADMITTED_KEYS")]
    env += [secret_env(f"{peer.upper()}_PUBLIC_KEY", f"{peer.upper()}_PUBLIC_KEY") for peer in PEERS]
    env += [secret_env(variable, key) for variable, key in extra.items()]
    command = [executable]
    if name == "audit":
        # The ordinal picks this instance's chains: ordinal × writers onwards.
        env.append({"name": "POD_INDEX",
                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['apps.kubernetes.io/pod-index']"}}})
        command = ["/bin/sh", "-c", 'export AUDIT_CHAIN_OFFSET=$((POD_INDEX * AUDIT_WRITERS)); exec Audit']
    ports = [{"name": "health", "containerPort": HEALTH_PORT}]
    if name == "gateway":
        ports.insert(0, {"name": "http", "containerPort": 8080})
    else:
        ports += [{"name": "rpc", "containerPort": RPC_PORT}, {"name": "events", "containerPort": EVENTS_PORT}]
    probe = lambda path, period, failures: {  # noqa: E731
        "httpGet": {"path": path, "port": "health"}, "periodSeconds": period, "timeoutSeconds": 3,
        "failureThreshold": failures}
    return {
        "name": name, "image": IMAGE, "imagePullPolicy": "IfNotPresent", "command": command,
        "envFrom": settings_sources(name), "env": env, "ports": ports,
        # Before SIGTERM: the pod is already out of its Service's endpoints and the ingress's
        # upstreams by the time it stops accepting (their controllers take a few seconds to see
        # it go), so no new connection meets a closed listener. Then SHUTDOWN_TIMEOUT (30 s)
        # bounds the drain; terminationGracePeriodSeconds (40) covers both.
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", str(PRE_STOP_SECONDS)]}}},
        "startupProbe": probe("/healthz", 2, 60),
        "livenessProbe": probe("/healthz", 10, 3),
        "readinessProbe": probe("/readyz", 5, 2),
        "resources": {"requests": {"cpu": "100m", "memory": memory_request},
                      "limits": {"cpu": "2", "memory": memory_limit}},
        "securityContext": restricted(),
    }


def migrations(serving):
    """The init container that applies the service's migrations as its schema's owner and exits:
    the serving container's settings (it reads them all at start) plus the owner's URL."""
    init = {key: copy.deepcopy(value) for key, value in serving.items()
            if key not in ("ports", "startupProbe", "livenessProbe", "readinessProbe", "lifecycle")}
    init["name"] = "migrations"
    database = {"DATABASE_URL", serving["name"].upper() + "_DATABASE_PASSWORD"}
    init["env"] = [item for item in init["env"] if item["name"] not in database] + database_env(serving["name"], owner=True)
    return init


def workload(name):
    executable, kind, replicas, low, high, memory_request, memory_limit, extra = SERVICES[name]
    serving = container(name, executable, memory_request, memory_limit, extra)
    pod = {
        "terminationGracePeriodSeconds": GRACE_SECONDS,
        "securityContext": {"runAsNonRoot": True, "fsGroup": 10001},
        "containers": [serving],
    }
    if name != "gateway":
        pod["initContainers"] = [migrations(serving)]
    spec = {
        "replicas": replicas,
        "selector": {"matchLabels": labels(name)},
        "template": {
            "metadata": {"labels": labels(name)},
            "spec": pod,
        },
    }
    if kind == "StatefulSet":
        spec["serviceName"] = name
        spec["podManagementPolicy"] = "Parallel"
        # One instance at a time, the next only once the new one is ready.
        spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    else:
        # A rolling update never goes below the replicas it has: a new pod is made and ready
        # (readiness on /readyz, then minReadySeconds) before an old one is told to stop.
        spec["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
        spec["minReadySeconds"] = 5
    documents = [{"apiVersion": "apps/v1", "kind": kind,
                  "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels(name)}, "spec": spec}]
    if name == "gateway":
        ports = [{"name": "http", "port": 80, "targetPort": "http"}]
    else:
        ports = [{"name": "rpc", "port": RPC_PORT, "targetPort": "rpc"},
                 {"name": "events", "port": EVENTS_PORT, "targetPort": "events"}]
    # /healthz, /readyz and /metrics of one ready pod, for `compass status --health legal=http://legal:8081`
    # from the toolbox (a Prometheus scrapes every pod by its own address instead).
    ports.append({"name": "health", "port": HEALTH_PORT, "targetPort": "health"})
    documents.append({"apiVersion": "v1", "kind": "Service",
                      "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels(name)},
                      "spec": {"selector": labels(name), "ports": ports}})
    # A node drain or a cluster upgrade takes at most one pod of each service at a time.
    documents.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                      "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels(name)},
                      "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels(name)}}})
    documents.append({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                      "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels(name)},
                      "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": kind, "name": name},
                               "minReplicas": low, "maxReplicas": high,
                               "metrics": [{"type": "Resource", "resource": {
                                   "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}})
    return documents


def toolbox():
    """The operator's place in the cluster: a pod with `compass`, the bus settings and every peer's
    public key, and the only pod that holds the operator's secret key (from the `compass-operator`
    Secret, which nothing else references). Scaled to zero until needed:
        kubectl -n recruiting-compass scale deployment/compass-toolbox --replicas=1
        kubectl -n recruiting-compass exec deploy/compass-toolbox -- compass audit verify
        kubectl -n recruiting-compass exec -i deploy/compass-toolbox -- compass legal publish … --file - < terms.md
        kubectl -n recruiting-compass scale deployment/compass-toolbox --replicas=0
    Its command only waits (and ends at once on SIGTERM); every act is a `kubectl exec`."""
    env = [secret_env("BUS_SECRET_KEY", "OPERATOR_SECRET_KEY", secret="compass-operator"),
           {"name": "USER", "value": "toolbox"}]
    env += [secret_env(f"{peer.upper()}_PUBLIC_KEY", f"{peer.upper()}_PUBLIC_KEY") for peer in PEERS]
    container = {
        "name": "compass", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"],
        "envFrom": [{"configMapRef": {"name": "compass-config"}}], "env": env,
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"cpu": "1", "memory": "256Mi"}},
        "securityContext": restricted(),
    }
    name = "compass-toolbox"
    spec = {"replicas": 0, "selector": {"matchLabels": labels(name)},
            "template": {"metadata": {"labels": labels(name)},
                         "spec": {"terminationGracePeriodSeconds": 5, "securityContext": {"runAsNonRoot": True},
                                  "containers": [container]}}}
    return [{"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels(name)}, "spec": spec}]


def database():
    cluster = {"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
               "metadata": {"name": "compass-db", "namespace": NAMESPACE, "labels": labels("compass-db")},
               "spec": {"instances": 3, "imageName": "ghcr.io/cloudnative-pg/postgresql:15",
                        # The `db-roles` Job creates the services' roles as the superuser, whose
                        # password CloudNativePG keeps in the `compass-db-superuser` Secret.
                        "enableSuperuserAccess": True,
                        "bootstrap": {"initdb": {"database": "compass", "owner": "compass"}},
                        "storage": {"size": "50Gi"},
                        "postgresql": {"parameters": {"max_connections": "400", "synchronous_commit": "on"}},
                        "minSyncReplicas": 1, "maxSyncReplicas": 1}}
    return [cluster, roles_job()]


def roles_job():
    """`compass db roles` once per deploy (delete the finished Job and apply again after changing
    a password): each service's owner and runtime roles, the owners given their schemas. The
    superuser's password reaches libpq as PGPASSWORD, so no URL has to quote it."""
    env = [secret_env("PGPASSWORD", "password", secret="compass-db-superuser"),
           {"name": "DATABASE_ADMIN_URL", "value": "host=compass-db-rw port=5432 dbname=compass user=postgres"}]
    for peer in PEERS:
        for variable in (f"{peer.upper()}_DATABASE_OWNER_PASSWORD", f"{peer.upper()}_DATABASE_PASSWORD"):
            env.append(secret_env(variable, variable))
    container = {"name": "db-roles", "image": IMAGE, "imagePullPolicy": "IfNotPresent", "command": ["compass", "db", "roles"],
                 "env": env, "securityContext": restricted()}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "db-roles", "namespace": NAMESPACE, "labels": labels("db-roles")},
            "spec": {"backoffLimit": 10, "template": {
                "metadata": {"labels": labels("db-roles")},
                "spec": {"restartPolicy": "OnFailure", "securityContext": {"runAsNonRoot": True},
                         "containers": [container]}}}}


# The public name of the gateway: replace it with your domain before applying (its DNS record
# points at the ingress controller). HTTPS only: the privacy policy URL App Store Connect asks for
# is https://<domain>/legal/privacy.
DOMAIN = "api.recruitingcompass.example"
ISSUER = "letsencrypt"
TLS_SECRET = "gateway-tls"
# Strict-Transport-Security on every answer: browsers then refuse plain HTTP to the domain for a year.
HSTS = "max-age=31536000; includeSubDomains"


def ingress():
    """The gateway behind an ingress-nginx Ingress with TLS from cert-manager (an ACME ClusterIssuer,
    HTTP-01 through the same ingress class), HTTP redirected to HTTPS, and HSTS."""
    issuer = {"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer",
              "metadata": {"name": ISSUER, "labels": labels("compass")},
              "spec": {"acme": {"server": "https://acme-v02.api.letsencrypt.org/directory",
                                "email": f"hostmaster@{DOMAIN}",
                                "privateKeySecretRef": {"name": f"{ISSUER}-account-key"},
                                "solvers": [{"http01": {"ingress": {"ingressClassName": "nginx"}}}]}}}
    annotations = {
        # cert-manager obtains and renews the certificate into the TLS secret below.
        "cert-manager.io/cluster-issuer": ISSUER,
        "nginx.ingress.kubernetes.io/ssl-redirect": "true",
        "nginx.ingress.kubernetes.io/force-ssl-redirect": "true",
        # Tus uploads and document downloads stream through: no body limit or buffering at the edge
        # (the gateway enforces its own limits), and long transfers are not cut off.
        "nginx.ingress.kubernetes.io/proxy-body-size": "0",
        "nginx.ingress.kubernetes.io/proxy-request-buffering": "off",
        "nginx.ingress.kubernetes.io/proxy-buffering": "off",
        "nginx.ingress.kubernetes.io/proxy-read-timeout": "300",
        "nginx.ingress.kubernetes.io/proxy-send-timeout": "300",
    }
    gateway = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "gateway", "namespace": NAMESPACE, "labels": labels("gateway"),
                            "annotations": annotations},
               "spec": {"ingressClassName": "nginx",
                        "tls": [{"hosts": [DOMAIN], "secretName": TLS_SECRET}],
                        "rules": [{"host": DOMAIN, "http": {"paths": [{
                            "path": "/", "pathType": "Prefix",
                            "backend": {"service": {"name": "gateway", "port": {"name": "http"}}}}]}}]}}
    return [issuer, gateway]


def namespace():
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE, "labels": labels("compass")}}]


HEADER = "# Generated by deploy/k8s/render.py: edit that, then run it.\n"


def to_yaml(documents):
    return HEADER + "".join(
        "---\n" + yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=120)
        for document in documents)


def manifests():
    files = {"00-namespace.yaml": namespace(), "01-config.yaml": [config()], "02-database.yaml": database()}
    for name in SERVICES:
        files[f"{name}.yaml"] = workload(name)
    files["ingress.yaml"] = ingress()
    files["toolbox.yaml"] = toolbox()
    return {file: to_yaml(documents) for file, documents in files.items()}


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for file, text in manifests().items():
        path = HERE / file
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(file)
        else:
            path.write_text(text)
    if stale:
        print("deploy/k8s: out of date, run deploy/k8s/render.py: " + ", ".join(stale))
        sys.exit(1)


if __name__ == "__main__":
    main()
