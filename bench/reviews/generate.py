#!/usr/bin/env python3
"""Generate the AdmissionReview benchmark corpus in bench/reviews/.

    python3 bench/reviews/generate.py [--out DIR] [--check]

Writes every request twice, as admission.k8s.io/v1 and admission.k8s.io/v1beta1 (the apiVersion
is the only difference), compact JSON as kube-apiserver sends it, and prints a table of sizes.
Standard library only and deterministic: a fixed seed for the filler text, and uids derived
from fixed labels, so running it again gives byte-identical files. --check regenerates into
memory and fails if a committed file differs.

The objects are what a *validating* webhook sees on CREATE (after defaulting, the mutating
admission plugins and name generation: metadata.name, uid and creationTimestamp are set, a pod's
status is Pending), except pod-create-replicaset, which is what a *mutating* webhook sees for
the same kind of request (generateName only, no name anywhere, no uid, empty status).
managedFields are left out, as most webhook configurations never look at them.
"""

import argparse
import hashlib
import json
import os
import random
import sys
import uuid

SEED = 20240514
VERSIONS = ("v1", "v1beta1")
HERE = os.path.dirname(os.path.abspath(__file__))

# Files this script does not own (kept as they are).
FOREIGN = {"pod-create-untolerated.v1.json"}

CREATED = "2024-05-14T09:21:07Z"
STARTED = "2024-05-14T09:21:09Z"
READY = "2024-05-14T09:21:31Z"


# ---------------------------------------------------------------------------------------------
# Deterministic ids
# ---------------------------------------------------------------------------------------------

def uid(label):
    """A random-looking (version 4) UUID that only depends on label."""
    digest = hashlib.sha256(("admitd-bench/" + label).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def hexid(label, n):
    return hashlib.sha256(("admitd-bench/" + label).encode()).hexdigest()[:n]


# The alphabet of generated names and pod-template-hash values (k8s.io/apimachinery rand).
SAFE = "bcdfghjklmnpqrstvwxz2456789"


def safe_suffix(label, n):
    digest = hashlib.sha256(("admitd-bench/" + label).encode()).digest()
    return "".join(SAFE[b % len(SAFE)] for b in digest[:n])


# ---------------------------------------------------------------------------------------------
# Who sends requests
# ---------------------------------------------------------------------------------------------

def sa_user(namespace, name, extra=None):
    u = {
        "username": "system:serviceaccount:%s:%s" % (namespace, name),
        "uid": uid("sa/%s/%s" % (namespace, name)),
        "groups": ["system:serviceaccounts", "system:serviceaccounts:" + namespace,
                   "system:authenticated"],
    }
    if extra:
        u["extra"] = extra
    return u


def controller_user(name):
    """kube-controller-manager with --use-service-account-credentials (a TokenRequest token)."""
    return sa_user("kube-system", name, {
        "authentication.kubernetes.io/credential-id": ["JTI=" + uid("jti/" + name)],
    })


def pod_bound_sa_user(namespace, name, pod, node):
    """A service account token projected into a pod (bound to pod and node)."""
    return sa_user(namespace, name, {
        "authentication.kubernetes.io/credential-id": ["JTI=" + uid("jti/" + pod)],
        "authentication.kubernetes.io/node-name": [node],
        "authentication.kubernetes.io/node-uid": [uid("node/" + node)],
        "authentication.kubernetes.io/pod-name": [pod],
        "authentication.kubernetes.io/pod-uid": [uid("pod/" + pod)],
    })


def admin_user():
    """kubeadm's admin.conf client certificate."""
    return {
        "username": "kubernetes-admin",
        "groups": ["kubeadm:cluster-admins", "system:authenticated"],
        "extra": {"authentication.kubernetes.io/credential-id": ["X509SHA256=" + hexid("x509/admin", 64)]},
    }


def oidc_user():
    return {
        "username": "oidc:jane.doe@example.com",
        "groups": ["oidc:platform-team", "oidc:developers", "system:authenticated"],
    }


# ---------------------------------------------------------------------------------------------
# Filler that looks like configuration
# ---------------------------------------------------------------------------------------------

WORDS = (
    "cache checkout payment order invoice ledger account session token search catalog price "
    "stock shipping tax discount coupon customer profile audit report export import queue "
    "retry timeout batch stream event metrics trace region shard replica pool buffer window "
    "limit quota feature flag gateway upstream downstream auth oauth jwt tls cert bucket "
    "archive index snapshot schedule worker consumer producer topic partition"
).split()

HOSTS = ["postgres-primary.db.svc.cluster.local", "redis-master.cache.svc.cluster.local",
         "kafka-0.kafka-headless.streaming.svc.cluster.local", "otel-collector.observability.svc",
         "vault.vault.svc.cluster.local", "payments-api.payments.svc.cluster.local"]


def env_filler(rng, count):
    """count env entries such as a config-heavy service carries (names are unique)."""
    out = []
    seen = set()
    while len(out) < count:
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        kind = rng.randrange(10)
        if kind < 3:
            name = "FEATURE_%s_%s_ENABLED" % (a.upper(), b.upper())
            value = {"value": rng.choice(["true", "false"])}
        elif kind < 5:
            name = "%s_%s_TIMEOUT_MS" % (a.upper(), b.upper())
            value = {"value": str(rng.choice([250, 500, 1000, 2500, 5000, 30000]))}
        elif kind < 7:
            name = "%s_%s_URL" % (a.upper(), b.upper())
            value = {"value": "http://%s:%d/%s/%s" % (rng.choice(HOSTS), rng.choice([80, 8080, 9092, 4317]), a, b)}
        elif kind < 8:
            name = "%s_%s_POOL_SIZE" % (a.upper(), b.upper())
            value = {"value": str(rng.choice([4, 8, 16, 32, 64]))}
        elif kind < 9:
            name = "%s_%s_SECRET" % (a.upper(), b.upper())
            value = {"valueFrom": {"secretKeyRef": {"name": "%s-%s" % (a, b), "key": rng.choice(["password", "token", "api-key"])}}}
        else:
            name = "%s_%s_CONFIG" % (a.upper(), b.upper())
            value = {"valueFrom": {"configMapKeyRef": {"name": "%s-config" % a, "key": b, "optional": True}}}
        if name in seen:
            continue
        seen.add(name)
        e = {"name": name}
        e.update(value)
        out.append(e)
    return out


# ---------------------------------------------------------------------------------------------
# Pod building blocks (field order follows the Go structs, as kube-apiserver serializes them)
# ---------------------------------------------------------------------------------------------

def container(name, image, **fields):
    c = {"name": name, "image": image}
    for key in ("command", "args", "workingDir", "ports", "envFrom", "env"):
        if key in fields:
            c[key] = fields.pop(key)
    c["resources"] = fields.pop("resources", {})
    for key in ("volumeMounts", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle"):
        if key in fields:
            c[key] = fields.pop(key)
    c["terminationMessagePath"] = "/dev/termination-log"
    c["terminationMessagePolicy"] = fields.pop("terminationMessagePolicy", "File")
    c["imagePullPolicy"] = fields.pop("imagePullPolicy", "IfNotPresent")
    if "securityContext" in fields:
        c["securityContext"] = fields.pop("securityContext")
    c.update(fields)  # restartPolicy (native sidecars), stdin, tty
    return c


def field_env(name, path):
    return {"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}}


def resource_env(name, container_name, resource):
    return {"name": name, "valueFrom": {"resourceFieldRef": {"containerName": container_name, "resource": resource, "divisor": "0"}}}


def http_probe(path, port, **timing):
    p = {"httpGet": {"path": path, "port": port, "scheme": "HTTP"}}
    p.update({"initialDelaySeconds": 0, "timeoutSeconds": 1, "periodSeconds": 10,
              "successThreshold": 1, "failureThreshold": 3})
    p.update(timing)
    if p["initialDelaySeconds"] == 0:
        del p["initialDelaySeconds"]
    return p


RESTRICTED = {
    "capabilities": {"drop": ["ALL"]},
    "runAsUser": 10001,
    "runAsNonRoot": True,
    "readOnlyRootFilesystem": True,
    "allowPrivilegeEscalation": False,
    "seccompProfile": {"type": "RuntimeDefault"},
}


def kube_api_access(pod_label):
    name = "kube-api-access-" + safe_suffix("kaa/" + pod_label, 5)
    volume = {"name": name, "projected": {"sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ], "defaultMode": 420}}
    mount = {"name": name, "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
    return volume, mount


DEFAULT_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]

ISTIO_IMAGE = "docker.io/istio/proxyv2:1.22.3"


def istio_init():
    return container(
        "istio-init", ISTIO_IMAGE,
        args=["istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m", "REDIRECT",
              "-i", "*", "-x", "", "-b", "*", "-d", "15090,15021,15020", "--log_output_level=default:info"],
        resources={"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        securityContext={"capabilities": {"add": ["NET_ADMIN", "NET_RAW"], "drop": ["ALL"]},
                         "privileged": False, "runAsUser": 0, "runAsGroup": 0, "runAsNonRoot": False,
                         "readOnlyRootFilesystem": False, "allowPrivilegeEscalation": False},
    )


def istio_proxy(app, namespace, ports, api_mount):
    pod_ports = json.dumps([{"name": p["name"], "containerPort": p["containerPort"], "protocol": "TCP"} for p in ports],
                           indent=4)
    env = [
        {"name": "PILOT_CERT_PROVIDER", "value": "istiod"},
        {"name": "CA_ADDR", "value": "istiod.istio-system.svc:15012"},
        field_env("POD_NAME", "metadata.name"),
        field_env("POD_NAMESPACE", "metadata.namespace"),
        field_env("INSTANCE_IP", "status.podIP"),
        field_env("SERVICE_ACCOUNT", "spec.serviceAccountName"),
        field_env("HOST_IP", "status.hostIP"),
        {"name": "ISTIO_CPU_LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}}},
        {"name": "PROXY_CONFIG", "value": "{}\n"},
        {"name": "ISTIO_META_POD_PORTS", "value": pod_ports},
        {"name": "ISTIO_META_APP_CONTAINERS", "value": app},
        {"name": "GOMEMLIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "0"}}},
        {"name": "GOMAXPROCS", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}}},
        {"name": "ISTIO_META_CLUSTER_ID", "value": "Kubernetes"},
        field_env("ISTIO_META_NODE_NAME", "spec.nodeName"),
        {"name": "ISTIO_META_INTERCEPTION_MODE", "value": "REDIRECT"},
        {"name": "ISTIO_META_WORKLOAD_NAME", "value": app},
        {"name": "ISTIO_META_OWNER", "value": "kubernetes://apis/apps/v1/namespaces/%s/deployments/%s" % (namespace, app)},
        {"name": "ISTIO_META_MESH_ID", "value": "cluster.local"},
        {"name": "TRUST_DOMAIN", "value": "cluster.local"},
    ]
    mounts = [
        {"name": "workload-socket", "mountPath": "/var/run/secrets/workload-spiffe-uds"},
        {"name": "credential-socket", "mountPath": "/var/run/secrets/credential-uds"},
        {"name": "workload-certs", "mountPath": "/var/run/secrets/workload-spiffe-credentials"},
        {"name": "istiod-ca-cert", "mountPath": "/var/run/secrets/istio"},
        {"name": "istio-data", "mountPath": "/var/lib/istio/data"},
        {"name": "istio-envoy", "mountPath": "/etc/istio/proxy"},
        {"name": "istio-token", "mountPath": "/var/run/secrets/tokens"},
        {"name": "istio-podinfo", "mountPath": "/etc/istio/pod"},
        api_mount,
    ]
    return container(
        "istio-proxy", ISTIO_IMAGE,
        args=["proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--proxyLogLevel=warning",
              "--proxyComponentLogLevel=misc:error", "--log_output_level=default:info"],
        ports=[{"name": "http-envoy-prom", "containerPort": 15090, "protocol": "TCP"}],
        env=env,
        resources={"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        volumeMounts=mounts,
        readinessProbe=http_probe("/healthz/ready", 15021, timeoutSeconds=3, periodSeconds=15, failureThreshold=4),
        startupProbe=http_probe("/healthz/ready", 15021, timeoutSeconds=3, periodSeconds=1, failureThreshold=600),
        securityContext={"capabilities": {"drop": ["ALL"]}, "privileged": False, "runAsUser": 1337,
                         "runAsGroup": 1337, "runAsNonRoot": True, "readOnlyRootFilesystem": True,
                         "allowPrivilegeEscalation": False},
    )


def istio_volumes():
    return [
        {"name": "workload-socket", "emptyDir": {}},
        {"name": "credential-socket", "emptyDir": {}},
        {"name": "workload-certs", "emptyDir": {}},
        {"name": "istio-envoy", "emptyDir": {"medium": "Memory"}},
        {"name": "istio-data", "emptyDir": {}},
        {"name": "istio-podinfo", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}},
            {"path": "annotations", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations"}},
        ], "defaultMode": 420}},
        {"name": "istio-token", "projected": {"sources": [
            {"serviceAccountToken": {"audience": "istio-ca", "expirationSeconds": 43200, "path": "istio-token"}},
        ], "defaultMode": 420}},
        {"name": "istiod-ca-cert", "configMap": {"name": "istio-ca-root-cert", "defaultMode": 420}},
    ]


ISTIO_STATUS = json.dumps({
    "initContainers": ["istio-init"], "containers": ["istio-proxy"],
    "volumes": ["workload-socket", "credential-socket", "workload-certs", "istio-envoy", "istio-data",
                "istio-podinfo", "istio-token", "istiod-ca-cert"],
    "imagePullSecrets": None, "revision": "default"}, separators=(",", ":"))


class App:
    """A Deployment-managed application; its pods are what the sized pod requests carry."""

    def __init__(self, name, namespace, version, registry="registry.example.com"):
        self.name = name
        self.namespace = namespace
        self.version = version
        self.image = "%s/%s/%s:%s" % (registry, namespace, name, version)
        self.hash = safe_suffix("rs/%s/%s/%s" % (namespace, name, version), 10)
        self.rs = "%s-%s" % (name, self.hash)
        self.pod = "%s-%s" % (self.rs, safe_suffix("pod/%s/%s" % (self.rs, version), 5))
        self.node = "ip-10-20-%d-%d.eu-west-1.compute.internal" % (
            int(hexid("node/" + self.pod, 2), 16) % 32, int(hexid("nodeb/" + self.pod, 2), 16) % 250 + 2)


def owner_rs(app):
    return [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app.rs,
             "uid": uid("rs-uid/" + app.rs), "controller": True, "blockOwnerDeletion": True}]


def pod_metadata(app, labels, annotations, view, resource_version=None):
    """view: 'mutating' (generateName only), 'validating' (name, uid, creationTimestamp), 'stored'."""
    m = {}
    if view != "mutating":
        m["name"] = app.pod
    m["generateName"] = app.rs + "-"
    m["namespace"] = app.namespace
    if view != "mutating":
        m["uid"] = uid("pod/" + app.pod)
    if resource_version:
        m["resourceVersion"] = resource_version
    if view != "mutating":
        m["creationTimestamp"] = CREATED
    m["labels"] = labels
    if annotations:
        m["annotations"] = annotations
    m["ownerReferences"] = owner_rs(app)
    return m


def pod_spec_tail(spec, sa, security_context=None, affinity=None, tolerations=None, extra=None, node=None):
    spec["restartPolicy"] = "Always"
    spec["terminationGracePeriodSeconds"] = 30
    spec["dnsPolicy"] = "ClusterFirst"
    if extra and "nodeSelector" in extra:
        spec["nodeSelector"] = extra.pop("nodeSelector")
    spec["serviceAccountName"] = sa
    spec["serviceAccount"] = sa
    if node:
        spec["nodeName"] = node
    spec["securityContext"] = security_context or {}
    if extra and "imagePullSecrets" in extra:
        spec["imagePullSecrets"] = extra.pop("imagePullSecrets")
    if affinity:
        spec["affinity"] = affinity
    spec["schedulerName"] = "default-scheduler"
    spec["tolerations"] = (tolerations or []) + DEFAULT_TOLERATIONS
    if extra and "priorityClassName" in extra:
        spec["priorityClassName"] = extra["priorityClassName"]
        spec["priority"] = extra.pop("priority")
        extra.pop("priorityClassName")
    else:
        spec["priority"] = 0
    spec["enableServiceLinks"] = True
    spec["preemptionPolicy"] = "PreemptLowerPriority"
    if extra and "topologySpreadConstraints" in extra:
        spec["topologySpreadConstraints"] = extra.pop("topologySpreadConstraints")
    return spec


def anti_affinity(app):
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]},
                                  {"key": "node.example.com/pool", "operator": "NotIn", "values": ["system", "gpu"]}]}]}},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 100, "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"app.kubernetes.io/name": app.name}},
                "topologyKey": "kubernetes.io/hostname"}}]},
    }


def running_status(spec, app, qos="Burstable"):
    """status of a pod that has been running for a while (what UPDATE and DELETE carry)."""
    pod_ip = "10.244.%d.%d" % (int(hexid("ip/" + app.pod, 2), 16) % 64, int(hexid("ipb/" + app.pod, 2), 16) % 250 + 2)
    host_ip = "10.20.%s" % ".".join(app.node.split(".")[0].split("-")[3:5])

    def status_of(c, init):
        s = {"name": c["name"]}
        if init:
            s["state"] = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": STARTED,
                                         "finishedAt": STARTED, "containerID": "containerd://" + hexid("cid/" + c["name"] + app.pod, 64)}}
        else:
            s["state"] = {"running": {"startedAt": STARTED}}
        s["lastState"] = {}
        s["ready"] = not init
        s["restartCount"] = 0
        s["image"] = c["image"]
        s["imageID"] = c["image"].rsplit(":", 1)[0] + "@sha256:" + hexid("img/" + c["image"], 64)
        s["containerID"] = "containerd://" + hexid("cid/" + c["name"] + app.pod, 64)
        if not init:
            s["started"] = True
        return s

    st = {"phase": "Running", "conditions": [
        {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": None, "lastTransitionTime": STARTED},
        {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": STARTED},
        {"type": "Ready", "status": "True", "lastProbeTime": None, "lastTransitionTime": READY},
        {"type": "ContainersReady", "status": "True", "lastProbeTime": None, "lastTransitionTime": READY},
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": CREATED},
    ], "hostIP": host_ip, "hostIPs": [{"ip": host_ip}], "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
        "startTime": CREATED}
    if spec.get("initContainers"):
        st["initContainerStatuses"] = [status_of(c, True) for c in spec["initContainers"]]
    st["containerStatuses"] = [status_of(c, False) for c in spec["containers"]]
    st["qosClass"] = qos
    return st


# ---------------------------------------------------------------------------------------------
# The pods
# ---------------------------------------------------------------------------------------------

def pod_small():
    """`kubectl run debug --image=busybox` as a mutating webhook sees it, trimmed to 1 KB.

    A fully defaulted pod request is at least ~1.7 KB (the service account volume and the two
    DefaultTolerationSeconds tolerations alone are ~750 bytes), so this one leaves out the
    service account token (automountServiceAccountToken: false), the tolerations and the
    defaulted scheduling fields: it is the 1 KB point of the size sweep, not a captured request.
    """
    spec = {
        "containers": [container("debug", "busybox:1.36.1", args=["sleep", "3600"])],
        "restartPolicy": "Always",
        "automountServiceAccountToken": False,
        "securityContext": {},
    }
    meta = {"name": "debug", "namespace": "default", "labels": {"run": "debug"}}
    return {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": {}}


def pod_app(app, tier, filler, view="validating", extra_labels=None, status=None, resource_version=None):
    """A Deployment's pod. tier: '4k' (app + log shipper), '16k' (+ istio, init containers),
    '64k' (+ more sidecars, volumes, spread). filler: extra env vars on the app container."""
    rng = random.Random("%d/%s/%s" % (SEED, app.name, tier))
    vol, api_mount = kube_api_access(app.pod)
    ports = [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
             {"name": "metrics", "containerPort": 9102, "protocol": "TCP"}]
    if tier != "4k":
        ports.append({"name": "grpc", "containerPort": 9090, "protocol": "TCP"})

    labels = {"app.kubernetes.io/name": app.name, "app.kubernetes.io/version": app.version,
              "pod-template-hash": app.hash}
    annotations = {"prometheus.io/scrape": "true", "prometheus.io/port": "9102"}
    if tier != "4k":
        labels.update({"security.istio.io/tlsMode": "istio", "service.istio.io/canonical-name": app.name,
                       "service.istio.io/canonical-revision": app.version, "team": "payments",
                       "cost-center": "cc-4711"})
        annotations = {"istio.io/rev": "default",
                       "kubectl.kubernetes.io/default-container": app.name,
                       "kubectl.kubernetes.io/default-logs-container": app.name,
                       "kubectl.kubernetes.io/restartedAt": "2024-05-02T16:40:12Z",
                       "prometheus.io/path": "/stats/prometheus", "prometheus.io/port": "15020",
                       "prometheus.io/scrape": "true",
                       "sidecar.istio.io/status": ISTIO_STATUS,
                       "vault.hashicorp.com/agent-inject": "false",
                       "checksum/config": hexid("cfg/" + app.name, 64),
                       "checksum/secrets": hexid("sec/" + app.name, 64)}
    if tier == "64k":
        labels.update({"environment": "production", "region": "eu-west-1", "compliance.example.com/pci": "true",
                       "owner": "team-ledger", "tier": "backend", "release": "2024-19"})
        annotations.update({"fluentbit.io/parser": "json", "cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
                            "linkerd.io/inject": "disabled",
                            "example.com/runbook": "https://runbooks.example.com/%s/%s" % (app.namespace, app.name),
                            "example.com/oncall": "ledger-oncall@example.com"})
    if extra_labels:
        labels.update(extra_labels)

    small = tier == "4k"
    env = [field_env("POD_NAME", "metadata.name"), field_env("POD_NAMESPACE", "metadata.namespace"),
           {"name": "LOG_LEVEL", "value": "info"},
           {"name": "DATABASE_URL", "valueFrom": {"secretKeyRef": {"name": app.name + "-db", "key": "url"}}}]
    if not small:
        env[2:2] = [field_env("POD_IP", "status.podIP"), field_env("NODE_NAME", "spec.nodeName"),
                    resource_env("GOMAXPROCS", app.name, "limits.cpu"),
                    resource_env("GOMEMLIMIT", app.name, "limits.memory"), {"name": "LOG_FORMAT", "value": "json"},
                    {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": "http://otel-collector.observability.svc:4317"},
                    {"name": "OTEL_SERVICE_NAME", "value": app.name}]
    env += env_filler(rng, filler)
    mounts = [{"name": "config", "readOnly": True, "mountPath": "/etc/" + app.name},
              {"name": "tmp", "mountPath": "/tmp"}]
    if not small:
        mounts.append({"name": "tls", "readOnly": True, "mountPath": "/etc/tls"})
    mounts.append(api_mount)
    extra_fields = {}
    if not small:
        extra_fields = {
            "envFrom": [{"configMapRef": {"name": app.name + "-env"}}],
            "startupProbe": http_probe("/healthz", 8080, periodSeconds=2, failureThreshold=30),
            "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 5"]}}},
        }
    app_container = container(
        app.name, app.image,
        args=["--config=/etc/%s/config.yaml" % app.name, "--listen=:8080", "--metrics-listen=:9102"]
        + ([] if small else ["--grpc-listen=:9090"]),
        ports=ports,
        env=env,
        resources={"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "512Mi"}},
        volumeMounts=mounts,
        livenessProbe=http_probe("/healthz", 8080, initialDelaySeconds=10, periodSeconds=10),
        readinessProbe=http_probe("/readyz", 8080, periodSeconds=5),
        securityContext=RESTRICTED,
        **extra_fields
    )
    shipper = None
    volumes = [{"name": "config", "configMap": {"name": app.name + "-config", "defaultMode": 420}},
               {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}}]
    if not small:
        shipper = container(
            "log-shipper", "registry.example.com/infra/fluent-bit:3.0.4",
            args=["--config=/fluent-bit/etc/fluent-bit.yaml"],
            env=[field_env("POD_NAME", "metadata.name"), field_env("POD_NAMESPACE", "metadata.namespace")],
            resources={"limits": {"memory": "64Mi"}, "requests": {"cpu": "10m", "memory": "32Mi"}},
            volumeMounts=[{"name": "tmp", "readOnly": True, "mountPath": "/var/log/app"},
                          {"name": "fluent-bit-config", "mountPath": "/fluent-bit/etc"}, api_mount],
            securityContext={"capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True, "readOnlyRootFilesystem": True,
                             "allowPrivilegeEscalation": False},
        )
        volumes += [{"name": "tls", "secret": {"secretName": app.name + "-tls", "defaultMode": 256}},
                    {"name": "fluent-bit-config", "configMap": {"name": "fluent-bit-sidecar", "defaultMode": 420}}]
    volumes.append(vol)
    init = []
    containers = [app_container] if small else [app_container, shipper]
    tolerations = None
    affinity = None
    extra = {}
    if tier != "4k":
        init = [istio_init(), container(
            "migrate", app.image.replace("/" + app.name + ":", "/" + app.name + "-migrate:"),
            command=["/bin/migrate"], args=["--database-url=$(DATABASE_URL)", "--timeout=120s", "up"],
            env=[{"name": "DATABASE_URL", "valueFrom": {"secretKeyRef": {"name": app.name + "-db", "key": "url"}}}],
            resources={"limits": {"cpu": "200m", "memory": "128Mi"}, "requests": {"cpu": "50m", "memory": "64Mi"}},
            volumeMounts=[api_mount], securityContext=RESTRICTED)]
        containers.append(istio_proxy(app.name, app.namespace, ports, api_mount))
        volumes = istio_volumes() + volumes
        tolerations = [{"key": "workload", "operator": "Equal", "value": "payments", "effect": "NoSchedule"}]
        affinity = anti_affinity(app)
        extra = {"priorityClassName": "business-critical", "priority": 100000,
                 "imagePullSecrets": [{"name": "registry-example-com"}]}
    if tier == "64k":
        init.append(container(
            "wait-for-kafka", "registry.example.com/infra/wait-for:2.2.4",
            args=["kafka-0.kafka-headless.streaming.svc.cluster.local:9092", "--timeout=300"],
            resources={"limits": {"cpu": "50m", "memory": "32Mi"}, "requests": {"cpu": "10m", "memory": "16Mi"}},
            securityContext=RESTRICTED))
        containers.insert(2, container(
            "vault-agent", "hashicorp/vault:1.16.2",
            args=["agent", "-config=/vault/config/agent.hcl"],
            env=[{"name": "VAULT_ADDR", "value": "https://vault.vault.svc.cluster.local:8200"},
                 {"name": "VAULT_LOG_LEVEL", "value": "info"}, {"name": "VAULT_LOG_FORMAT", "value": "standard"}],
            resources={"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "50m", "memory": "64Mi"}},
            volumeMounts=[{"name": "vault-config", "mountPath": "/vault/config"},
                          {"name": "vault-secrets", "mountPath": "/vault/secrets"}, api_mount],
            securityContext=RESTRICTED))
        containers.insert(3, container(
            "cloud-sql-proxy", "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0",
            args=["--structured-logs", "--port=5432", "--max-sigterm-delay=30s", "example-prod:europe-west1:ledger-db"],
            ports=[{"name": "postgres", "containerPort": 5432, "protocol": "TCP"}],
            resources={"limits": {"cpu": "1", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
            securityContext=RESTRICTED))
        # The chart's queue worker runs from the same image with the same configuration.
        containers.insert(1, container(
            app.name + "-worker", app.image,
            args=["worker", "--config=/etc/%s/config.yaml" % app.name, "--concurrency=8"],
            envFrom=app_container["envFrom"], env=env,
            resources={"limits": {"cpu": "1", "memory": "768Mi"}, "requests": {"cpu": "250m", "memory": "384Mi"}},
            volumeMounts=mounts,
            livenessProbe=http_probe("/healthz", 8081, initialDelaySeconds=10, periodSeconds=10),
            lifecycle={"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 5"]}}},
            securityContext=RESTRICTED))
        mounts.insert(3, {"name": "vault-secrets", "readOnly": True, "mountPath": "/vault/secrets"})
        for i in range(6):
            volumes.append({"name": "feature-config-%d" % i, "configMap": {"name": "%s-features-%d" % (app.name, i),
                            "items": [{"key": "features.json", "path": "features-%d.json" % i}], "defaultMode": 420,
                            "optional": True}})
            mounts.append({"name": "feature-config-%d" % i, "readOnly": True,
                           "mountPath": "/etc/%s/features.d/%d" % (app.name, i)})
        volumes += [{"name": "vault-config", "configMap": {"name": "vault-agent-config", "defaultMode": 420}},
                    {"name": "vault-secrets", "emptyDir": {"medium": "Memory"}},
                    {"name": "client-certs", "projected": {"sources": [
                        {"secret": {"name": app.name + "-client-cert", "items": [{"key": "tls.crt", "path": "client.crt"},
                                                                                 {"key": "tls.key", "path": "client.key"}]}},
                        {"configMap": {"name": "internal-ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    ], "defaultMode": 292}}]
        tolerations.append({"key": "dedicated", "operator": "Equal", "value": "ledger", "effect": "NoSchedule"})
        extra["nodeSelector"] = {"kubernetes.io/os": "linux", "node.example.com/pool": "general"}
        extra["topologySpreadConstraints"] = [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"app.kubernetes.io/name": app.name}}},
            {"maxSkew": 2, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app.kubernetes.io/name": app.name}}}]
    spec = {"volumes": volumes}
    if init:
        spec["initContainers"] = init
    spec["containers"] = containers
    pod_spec_tail(spec, app.name, {"runAsUser": 10001, "runAsGroup": 10001, "runAsNonRoot": True, "fsGroup": 10001,
                                   "seccompProfile": {"type": "RuntimeDefault"}},
                  affinity=affinity, tolerations=tolerations, extra=extra,
                  node=app.node if status == "running" else None)
    if view == "mutating":
        st = {}
    elif status == "running":
        st = running_status(spec, app)
    else:
        st = {"phase": "Pending", "qosClass": "Burstable"}
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": pod_metadata(app, labels, annotations, view, resource_version),
            "spec": spec, "status": st}


# ---------------------------------------------------------------------------------------------
# AdmissionReview envelopes
# ---------------------------------------------------------------------------------------------

CORE = {"pods": ("", "v1", "Pod"), "configmaps": ("", "v1", "ConfigMap"), "namespaces": ("", "v1", "Namespace"),
        "services": ("", "v1", "Service"), "deployments": ("apps", "v1", "Deployment")}


def review(label, resource, operation, user, obj=None, old=None, name=None, namespace=None, options=None):
    group, version, kind = CORE[resource]
    gvk = {"group": group, "version": version, "kind": kind}
    gvr = {"group": group, "version": version, "resource": resource}
    req = {"uid": uid("request/" + label), "kind": gvk, "resource": gvr, "requestKind": dict(gvk),
           "requestResource": dict(gvr)}
    if name:
        req["name"] = name
    if namespace:
        req["namespace"] = namespace
    req["operation"] = operation
    req["userInfo"] = user
    req["object"] = obj
    req["oldObject"] = old
    req["dryRun"] = False
    opt_kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}[operation]
    req["options"] = {"kind": opt_kind, "apiVersion": "meta.k8s.io/v1"}
    req["options"].update(options or {})
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": req}


# Fields that are Go maps: encoding/json writes their keys sorted (struct fields keep their order).
MAP_FIELDS = {"selector", "labels", "annotations", "data", "binaryData", "nodeSelector", "matchLabels", "extra",
              "limits", "requests"}


def sort_maps(value, key=None):
    if isinstance(value, dict):
        items = sorted(value.items()) if key in MAP_FIELDS else value.items()
        return {k: sort_maps(v, k) for k, v in items}
    if isinstance(value, list):
        return [sort_maps(v) for v in value]
    return value


def dumps(doc):
    """Compact JSON as Go's encoding/json writes it (HTML characters escaped, map keys sorted)."""
    text = json.dumps(sort_maps(doc), separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def fit(target, build):
    """The smallest filler count n for which build(n) serializes closest to target bytes."""
    lo, hi = 0, 1
    while len(dumps(build(hi))) < target:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if len(dumps(build(mid))) < target:
            lo = mid
        else:
            hi = mid
    return min((lo, hi), key=lambda n: abs(len(dumps(build(n))) - target))


# ---------------------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------------------

def sized_pod_review(label, app, tier, target):
    user = controller_user("replicaset-controller")

    def build(n):
        obj = pod_app(app, tier, n)
        return review(label, "pods", "CREATE", user, obj=obj, name=app.pod, namespace=app.namespace)
    return build(fit(target, build))


def deployment_manifest(app, image):
    """What the user applied (kubectl apply -f deploy.yaml)."""
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": app.name, "namespace": app.namespace,
                     "labels": {"app.kubernetes.io/name": app.name, "app.kubernetes.io/part-of": "shop"},
                     "annotations": {"example.com/owner": "team-search"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app.kubernetes.io/name": app.name}},
                 "template": {"metadata": {"labels": {"app.kubernetes.io/name": app.name, "app.kubernetes.io/part-of": "shop"},
                                           "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9102"}},
                              "spec": {"serviceAccountName": app.name, "containers": [{
                                  "name": app.name, "image": image, "args": ["--listen=:8080"],
                                  "ports": [{"name": "http", "containerPort": 8080}],
                                  "env": [{"name": "LOG_LEVEL", "value": "info"},
                                          {"name": "ELASTICSEARCH_URL", "value": "http://es-http.search.svc:9200"}],
                                  "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
                                  "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}, "periodSeconds": 5},
                                  "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False,
                                                      "capabilities": {"drop": ["ALL"]}}}]}}}}


def deployment_object(app, image, generation, resource_version, annotations_extra=None, status=None,
                      applied_image=None):
    """applied_image: the image in the last kubectl apply (a later client-go Update keeps it)."""
    manifest = deployment_manifest(app, image)
    applied = json.dumps(deployment_manifest(app, applied_image or image), sort_keys=True,
                         separators=(",", ":")) + "\n"
    annotations = dict(annotations_extra or {})
    annotations["example.com/owner"] = "team-search"
    annotations["kubectl.kubernetes.io/last-applied-configuration"] = applied
    meta = {"name": app.name, "namespace": app.namespace, "uid": uid("deploy/" + app.name)}
    if resource_version:
        meta["resourceVersion"] = resource_version
    meta["generation"] = generation
    meta["creationTimestamp"] = CREATED
    meta["labels"] = manifest["metadata"]["labels"]
    meta["annotations"] = dict(sorted(annotations.items()))
    c = container(app.name, image, args=["--listen=:8080"],
                  ports=[{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                  env=manifest["spec"]["template"]["spec"]["containers"][0]["env"],
                  resources={"limits": {"memory": "512Mi"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
                  readinessProbe={"httpGet": {"path": "/readyz", "port": "http", "scheme": "HTTP"}, "timeoutSeconds": 1,
                                  "periodSeconds": 5, "successThreshold": 1, "failureThreshold": 3},
                  securityContext={"capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True, "allowPrivilegeEscalation": False})
    template_spec = {"containers": [c], "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
                     "dnsPolicy": "ClusterFirst", "serviceAccountName": app.name, "serviceAccount": app.name,
                     "securityContext": {}, "schedulerName": "default-scheduler"}
    spec = {"replicas": 3, "selector": manifest["spec"]["selector"],
            "template": {"metadata": {"creationTimestamp": None,
                                      "labels": manifest["spec"]["template"]["metadata"]["labels"],
                                      "annotations": manifest["spec"]["template"]["metadata"]["annotations"]},
                         "spec": template_spec},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600}
    return {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": meta, "spec": spec, "status": status or {}}


def deployment_status(app, generation):
    rs = "%s-%s" % (app.name, safe_suffix("rs/%s/gen%d" % (app.name, generation), 10))
    return {"observedGeneration": generation, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
            "availableReplicas": 3, "conditions": [
                {"type": "Available", "status": "True", "lastUpdateTime": READY, "lastTransitionTime": READY,
                 "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
                {"type": "Progressing", "status": "True", "lastUpdateTime": READY, "lastTransitionTime": CREATED,
                 "reason": "NewReplicaSetAvailable",
                 "message": "ReplicaSet \"%s\" has successfully progressed." % rs}]}


def configmap_data(rng, target):
    """~target bytes of configuration text: an application.yaml, a logback.xml and a few keys."""
    data = {
        "LOG_LEVEL": "info",
        "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=75 -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Dfile.encoding=UTF-8",
        "logback.xml": (
            "<configuration>\n  <appender name=\"STDOUT\" class=\"ch.qos.logback.core.ConsoleAppender\">\n"
            "    <encoder class=\"net.logstash.logback.encoder.LogstashEncoder\"/>\n  </appender>\n"
            "  <logger name=\"org.apache.kafka\" level=\"WARN\"/>\n  <logger name=\"com.zaxxer.hikari\" level=\"INFO\"/>\n"
            "  <root level=\"${LOG_LEVEL:-INFO}\">\n    <appender-ref ref=\"STDOUT\"/>\n  </root>\n</configuration>\n"),
    }
    used = sum(len(k) + len(v) for k, v in data.items()) + len("application.yaml")
    lines = ["server:", "  port: 8080", "  shutdown: graceful", "management:", "  endpoints:",
             "    web:", "      exposure:", "        include: health,info,prometheus"]
    size = sum(len(line) + 1 for line in lines)
    while used + size < target:
        section = "%s-%s" % (rng.choice(WORDS), rng.choice(WORDS))
        block = ["%s:" % section, "  enabled: %s" % rng.choice(["true", "false"]),
                 "  endpoint: http://%s:%d/%s" % (rng.choice(HOSTS), rng.choice([80, 8080, 9092]), section),
                 "  timeout: %dms" % rng.choice([250, 500, 1000, 5000]),
                 "  retries: %d" % rng.randrange(1, 6),
                 "  tags: [%s]" % ", ".join(rng.sample(WORDS, 3))]
        block_size = sum(len(line) + 1 for line in block)
        if used + size + block_size > target + 120:
            break
        lines += block
        size += block_size
    data["application.yaml"] = "\n".join(lines) + "\n"
    return dict(sorted(data.items()))


def corpus():
    files = {}

    # Pods of about 1, 4, 16 and 64 KB, created by the ReplicaSet controller (kubectl run for 1 KB).
    files["pod-1k"] = review("pod-1k", "pods", "CREATE", oidc_user(), obj=pod_small(), name="debug",
                             namespace="default", options={"fieldManager": "kubectl-run"})
    files["pod-4k"] = sized_pod_review("pod-4k", App("checkout", "shop", "v3.2.0"), "4k", 4096)
    files["pod-16k"] = sized_pod_review("pod-16k", App("payments-api", "payments", "v2.14.1"), "16k", 16384)
    files["pod-64k"] = sized_pod_review("pod-64k", App("ledger", "ledger", "v5.0.3"), "64k", 65536)

    # A pod CREATE from a ReplicaSet as the mutating phase sees it: generateName, no name yet.
    rs_app = App("cart", "shop", "v1.30.2")
    files["pod-create-replicaset"] = review(
        "pod-create-replicaset", "pods", "CREATE", controller_user("replicaset-controller"),
        obj=pod_app(rs_app, "16k", 0, view="mutating"), namespace=rs_app.namespace)

    # A pod UPDATE: an operator adds a label to a running pod (client-go Update, so UpdateOptions).
    up_app = App("checkout", "shop", "v3.1.9")
    old = pod_app(up_app, "4k", 0, view="stored", status="running", resource_version="48201733")
    new = pod_app(up_app, "4k", 0, view="stored", status="running", resource_version="48201733",
                  extra_labels={"topology.example.com/zone": "eu-west-1b"})
    files["pod-update"] = review(
        "pod-update", "pods", "UPDATE",
        pod_bound_sa_user("platform", "pod-labeler", "pod-labeler-6c8f9d7b54-qz7wm", up_app.node),
        obj=new, old=old, name=up_app.pod, namespace=up_app.namespace, options={"fieldManager": "pod-labeler"})

    # A pod DELETE: kubectl delete pod by a developer (OIDC); object is null.
    del_app = App("checkout", "shop", "v3.1.8")
    gone = pod_app(del_app, "4k", 0, view="stored", status="running", resource_version="48199420")
    files["pod-delete"] = review(
        "pod-delete", "pods", "DELETE", oidc_user(), obj=None, old=gone, name=del_app.pod,
        namespace=del_app.namespace, options={"propagationPolicy": "Background"})

    # A Deployment CREATE (kubectl apply by the admin) and UPDATE (a CI job bumps the image).
    dep = App("search", "shop", "v1.8.2")
    files["deployment-create"] = review(
        "deployment-create", "deployments", "CREATE", admin_user(),
        obj=deployment_object(dep, dep.image, 1, None), name=dep.name, namespace=dep.namespace,
        options={"fieldManager": "kubectl-client-side-apply"})
    old_image, new_image = dep.image, dep.image.replace("v1.8.2", "v1.8.3")
    files["deployment-update"] = review(
        "deployment-update", "deployments", "UPDATE",
        pod_bound_sa_user("ci", "deployer", "deploy-search-28591432-7xk2p", "ip-10-20-7-41.eu-west-1.compute.internal"),
        obj=deployment_object(dep, new_image, 5, "48213377", {"deployment.kubernetes.io/revision": "4"},
                              deployment_status(dep, 4), applied_image=old_image),
        old=deployment_object(dep, old_image, 4, "48213377", {"deployment.kubernetes.io/revision": "4"},
                              deployment_status(dep, 4)),
        name=dep.name, namespace=dep.namespace, options={"fieldManager": "deployer"})

    # A ConfigMap CREATE with ~8 KB of data (helm install).
    rng = random.Random("%d/configmap" % SEED)
    cm = {"kind": "ConfigMap", "apiVersion": "v1",
          "metadata": {"name": "payments-api-config", "namespace": "payments", "uid": uid("cm/payments-api-config"),
                       "creationTimestamp": CREATED,
                       "labels": {"app.kubernetes.io/name": "payments-api", "app.kubernetes.io/instance": "payments-api",
                                  "app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "payments-api-2.14.1"},
                       "annotations": {"meta.helm.sh/release-name": "payments-api",
                                       "meta.helm.sh/release-namespace": "payments"}},
          "data": configmap_data(rng, 8192)}
    files["configmap-create"] = review(
        "configmap-create", "configmaps", "CREATE", admin_user(), obj=cm, name=cm["metadata"]["name"],
        namespace="payments", options={"fieldManager": "helm"})

    # A Namespace CREATE (kubectl create namespace). kube-apiserver sets request.namespace to the
    # name for namespaces (apiserver handlers/create.go).
    ns = {"kind": "Namespace", "apiVersion": "v1",
          "metadata": {"name": "team-payments", "uid": uid("ns/team-payments"), "creationTimestamp": CREATED,
                       "labels": {"kubernetes.io/metadata.name": "team-payments",
                                  "pod-security.kubernetes.io/enforce": "restricted",
                                  "pod-security.kubernetes.io/warn": "restricted",
                                  "istio-injection": "enabled", "team": "payments"},
                       "annotations": {"scheduler.alpha.kubernetes.io/node-selector": "node.example.com/pool=general"}},
          "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    files["namespace-create"] = review(
        "namespace-create", "namespaces", "CREATE", admin_user(), obj=ns, name="team-payments",
        namespace="team-payments", options={"fieldManager": "kubectl-create"})

    # A Service CREATE (helm install); the cluster IP is already allocated when validating webhooks run.
    svc = {"kind": "Service", "apiVersion": "v1",
           "metadata": {"name": "payments-api", "namespace": "payments", "uid": uid("svc/payments-api"),
                        "creationTimestamp": CREATED,
                        "labels": {"app.kubernetes.io/name": "payments-api", "app.kubernetes.io/instance": "payments-api",
                                   "app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "payments-api-2.14.1"},
                        "annotations": {"meta.helm.sh/release-name": "payments-api",
                                        "meta.helm.sh/release-namespace": "payments",
                                        "prometheus.io/probe": "true"}},
           "spec": {"ports": [{"name": "http", "protocol": "TCP", "appProtocol": "http", "port": 80, "targetPort": "http"},
                              {"name": "grpc", "protocol": "TCP", "appProtocol": "grpc", "port": 9090, "targetPort": 9090}],
                    "selector": {"app.kubernetes.io/name": "payments-api", "app.kubernetes.io/instance": "payments-api"},
                    "clusterIP": "10.96.143.27", "clusterIPs": ["10.96.143.27"], "type": "ClusterIP",
                    "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                    "internalTrafficPolicy": "Cluster"},
           "status": {"loadBalancer": {}}}
    files["service-create"] = review(
        "service-create", "services", "CREATE", admin_user(), obj=svc, name="payments-api", namespace="payments",
        options={"fieldManager": "helm"})
    return files


DESCRIPTIONS = {
    "pod-1k": "`kubectl run` pod trimmed to 1 KB (no token volume, no tolerations)",
    "pod-4k": "ReplicaSet pod: one container, env, probes, resources, volumes",
    "pod-16k": "ReplicaSet pod: + istio-proxy, istio-init, migrate, log shipper, affinity",
    "pod-64k": "ReplicaSet pod: + worker, vault-agent, cloud-sql-proxy, wait-for-kafka",
    "pod-create-replicaset": "ReplicaSet pod as mutating webhooks see it: generateName, no name/uid",
    "pod-update": "running pod UPDATE (operator adds a label), object and oldObject with status",
    "pod-delete": "pod DELETE by a developer: object null, oldObject a running pod",
    "deployment-create": "Deployment CREATE by kubectl apply (last-applied-configuration)",
    "deployment-update": "Deployment UPDATE by a CI service account (image bump), with status",
    "configmap-create": "ConfigMap CREATE by helm with ~8 KB of data",
    "namespace-create": "Namespace CREATE by kubectl (request.namespace = name)",
    "service-create": "ClusterIP Service CREATE by helm",
}


def render(files):
    out = {}
    for stem, doc in files.items():
        for version in VERSIONS:
            d = json.loads(dumps(doc))
            d["apiVersion"] = "admission.k8s.io/" + version
            out["%s.%s.json" % (stem, version)] = dumps(d)
    return out


def validate(name, text):
    doc = json.loads(text)
    req = doc["request"]
    u = req["uid"]
    assert isinstance(u, str) and len(u) == 36 and str(uuid.UUID(u)) == u, (name, u)
    assert doc["kind"] == "AdmissionReview" and doc["apiVersion"] in ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
    assert req["options"]["apiVersion"] == "meta.k8s.io/v1"
    if req["operation"] == "DELETE":
        assert req["object"] is None and req["oldObject"] is not None, name
    if req["operation"] == "UPDATE":
        assert req["object"] is not None and req["oldObject"] is not None, name
    if req["operation"] == "CREATE":
        assert req["object"] is not None and req["oldObject"] is None, name


TARGETS = {"pod-1k": 1024, "pod-4k": 4096, "pod-16k": 16384, "pod-64k": 65536}


def pod_counts(pod):
    spec = pod["spec"]
    cs = spec.get("initContainers", []) + spec["containers"]
    return "%d+%d containers, %d env, %d volumes" % (
        len(spec.get("initContainers", [])), len(spec["containers"]),
        sum(len(c.get("env", [])) for c in cs), len(spec.get("volumes", [])))


def print_table(files, rendered):
    print("%-42s %8s %8s  %-9s %s" % ("file", "bytes", "v1beta1", "operation", "what"))
    for stem in files:
        v1 = len(rendered[stem + ".v1.json"].encode())
        v1b = len(rendered[stem + ".v1beta1.json"].encode())
        req = files[stem]["request"]
        what = DESCRIPTIONS[stem]
        if stem in TARGETS:
            what += "; %s; %+.1f%% of %d" % (pod_counts(req["object"]), 100.0 * (v1 - TARGETS[stem]) / TARGETS[stem],
                                             TARGETS[stem])
        print("%-42s %8d %8d  %-9s %s" % (stem + ".v1.json", v1, v1b, req["operation"], what))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=HERE, help="output folder (default: this script's folder)")
    ap.add_argument("--check", action="store_true", help="fail if the files on disk differ from the generated ones")
    args = ap.parse_args()

    files = corpus()
    rendered = render(files)
    uids = set()
    for name, text in rendered.items():
        validate(name, text)
        if name.endswith(".v1.json"):
            u = json.loads(text)["request"]["uid"]
            assert u not in uids, name
            uids.add(u)
    print_table(files, rendered)
    off = []
    for stem, target in TARGETS.items():
        size = len(rendered[stem + ".v1.json"].encode())
        if abs(size - target) > 0.15 * target:
            off.append("%s is %d bytes, more than 15%% off %d" % (stem, size, target))
    if off:
        sys.exit("generate.py: " + "; ".join(off))

    stale = []
    for name, text in sorted(rendered.items()):
        path = os.path.join(args.out, name)
        data = text.encode()
        if args.check:
            try:
                with open(path, "rb") as f:
                    if f.read() != data:
                        stale.append(name)
            except FileNotFoundError:
                stale.append(name)
            continue
        with open(path, "wb") as f:
            f.write(data)
    if args.check and stale:
        sys.exit("generate.py: out of date: %s (run python3 bench/reviews/generate.py)" % " ".join(stale))

    if args.check:
        print("generate.py: all %d files up to date" % len(rendered))


if __name__ == "__main__":
    main()
