"""The checks `make lint` runs on deploy/ (deploy/lint.py): the real overlays, compose file
and Dockerfile pass them, and each rule catches the mistake it is there for.

Overlays are rendered by the real kustomize (the kubectl `make lint` installs under
.venv/tools); without it those tests skip and say so.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.servers import ROOT

TOOLS = ROOT / ".venv" / "tools"
KUBECTL = TOOLS / "bin" / "kubectl"


def _load_lint() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deploy_lint", ROOT / "deploy" / "lint.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


lint = _load_lint()

needs_kubectl = pytest.mark.skipif(
    not KUBECTL.exists(), reason="kustomize comes with the kubectl `make lint` installs"
)


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[dict[str, Any]]]:
    if not KUBECTL.exists():
        pytest.skip("kustomize comes with the kubectl `make lint` installs")
    return {name: lint.render(KUBECTL, lint.OVERLAYS / name) for name in ("dev", "production")}


def _one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name)


def _engine(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return _one(docs, "Deployment", "wargame-engine")


def _engine_container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return _engine(docs)["spec"]["template"]["spec"]["containers"][0]


def _drop(kind: str, name: str) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(docs: list[dict[str, Any]]) -> None:
        docs.remove(_one(docs, kind, name))

    return mutate


def _set_replicas(docs: list[dict[str, Any]]) -> None:
    _engine(docs)["spec"]["replicas"] = 3


def _writable_root(docs: list[dict[str, Any]]) -> None:
    _engine_container(docs)["securityContext"]["readOnlyRootFilesystem"] = False


def _escalation(docs: list[dict[str, Any]]) -> None:
    _engine_container(docs)["securityContext"]["allowPrivilegeEscalation"] = True


def _keep_capabilities(docs: list[dict[str, Any]]) -> None:
    del _engine_container(docs)["securityContext"]["capabilities"]


def _named_user(docs: list[dict[str, Any]]) -> None:
    del _engine(docs)["spec"]["template"]["spec"]["securityContext"]["runAsUser"]


def _no_seccomp(docs: list[dict[str, Any]]) -> None:
    del _engine(docs)["spec"]["template"]["spec"]["securityContext"]["seccompProfile"]


def _no_limits(docs: list[dict[str, Any]]) -> None:
    del _engine_container(docs)["resources"]["limits"]


def _tcp_readiness(docs: list[dict[str, Any]]) -> None:
    _engine_container(docs)["readinessProbe"] = {"tcpSocket": {"port": 50061}}


def _probe_on_the_tls_port(docs: list[dict[str, Any]]) -> None:
    _engine_container(docs)["livenessProbe"]["grpc"]["port"] = 50051


def _matchmaker(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return _one(docs, "Deployment", "wargame-matchmaker")


def _matchmaker_container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return _matchmaker(docs)["spec"]["template"]["spec"]["containers"][0]


def _without_env(container: dict[str, Any], *names: str) -> None:
    container["env"] = [e for e in container["env"] if e["name"] not in names]


def _set_env(container: dict[str, Any], name: str, value: str) -> None:
    _without_env(container, name)
    container["env"].append({"name": name, "value": value})


def _two_images(docs: list[dict[str, Any]]) -> None:
    _engine_container(docs)["image"] = "registry.example.com/wargame/wargame:0.0.9"


def _no_registry(docs: list[dict[str, Any]]) -> None:
    for name in ("wargame-engine", "wargame-matchmaker"):
        deployment = _one(docs, "Deployment", name)
        deployment["spec"]["template"]["spec"]["containers"][0]["image"] = "wargame:0.1.0"


def _latest(docs: list[dict[str, Any]]) -> None:
    _engine_container(docs)["image"] = "registry.example.com/wargame/wargame:latest"


def _cluster_ip(docs: list[dict[str, Any]]) -> None:
    del _one(docs, "Service", "wargame-engine")["spec"]["clusterIP"]


def _volume_in_empty_dir(deployment: dict[str, Any], volume: str) -> None:
    """Mount an empty folder where the deployment's `volume` was."""
    volumes = deployment["spec"]["template"]["spec"]["volumes"]
    volumes[:] = [v if v["name"] != volume else {"name": volume, "emptyDir": {}} for v in volumes]


def _ship_secret(docs: list[dict[str, Any]], name: str, **content: dict[str, str]) -> None:
    """Add a Secret `name` to the manifests, with `content` (`data=` or `stringData=`)."""
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": "wargame"},
            **content,
        }
    )


def _seal_key_in_empty_dir(docs: list[dict[str, Any]]) -> None:
    _volume_in_empty_dir(_engine(docs), "seal-key")


def _shipped_seal_key(docs: list[dict[str, Any]]) -> None:
    _ship_secret(docs, "wargame-seal-key", stringData={"seal.key": "x"})


def _matchmaker_key_in_empty_dir(docs: list[dict[str, Any]]) -> None:
    _volume_in_empty_dir(_matchmaker(docs), "secret-key")


def _no_matchmaker_key(docs: list[dict[str, Any]]) -> None:
    _matchmaker_container(docs)["args"] = ["serve"]


def _shipped_matchmaker_key(docs: list[dict[str, Any]]) -> None:
    _ship_secret(docs, "wargame-matchmaker-key", data={"secret.key": "eA=="})


def _plaintext_not_allowed(docs: list[dict[str, Any]]) -> None:
    _without_env(
        _engine_container(docs),
        "WARGAME_ENGINE_INSECURE",
        "WARGAME_ENGINE_TLS_CERT_FILE",
        "WARGAME_ENGINE_TLS_KEY_FILE",
        "WARGAME_ENGINE_TLS_CLIENT_CA_FILE",
    )
    _without_env(_matchmaker_container(docs), "WARGAME_MATCHMAKER_ENGINE_TLS_CA_FILE")
    _without_env(_matchmaker_container(docs), "WARGAME_MATCHMAKER_ENGINE_TLS_CERT_FILE")


def _store_open_to_all_namespaces(docs: list[dict[str, Any]]) -> None:
    policy = _one(docs, "NetworkPolicy", "session-store-from-matchmakers")
    policy["spec"]["ingress"][0]["from"] = [{"namespaceSelector": {}}]


def _store_open_to_engine(docs: list[dict[str, Any]]) -> None:
    policy = _one(docs, "NetworkPolicy", "session-store-from-matchmakers")
    policy["spec"]["ingress"][0]["from"].append(
        {"podSelector": {"matchLabels": {"app.kubernetes.io/component": "engine"}}}
    )
    engine = _one(docs, "NetworkPolicy", "engine-from-matchmakers")
    engine["spec"]["policyTypes"].append("Egress")
    engine["spec"]["egress"] = [{"ports": [{"protocol": "TCP", "port": 6379}]}]


def _no_pre_stop(docs: list[dict[str, Any]]) -> None:
    del _matchmaker_container(docs)["lifecycle"]


def _short_termination_period(docs: list[dict[str, Any]]) -> None:
    _engine(docs)["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 25


MUTATIONS = [
    (_set_replicas, "Deployment wargame-engine: a fixed replicas count fights its autoscaler"),
    (_drop("HorizontalPodAutoscaler", "wargame-engine"), "wargame-engine: no HorizontalPod"),
    (_drop("PodDisruptionBudget", "wargame-matchmaker"), "matchmaker: no PodDisruptionBudget"),
    (_writable_root, "container engine: the root filesystem is not read-only"),
    (_escalation, "container engine: allowPrivilegeEscalation is not false"),
    (_keep_capabilities, "container engine: capabilities are not dropped"),
    (_named_user, "container engine: no numeric non-root runAsUser"),
    (_no_seccomp, "container engine: seccompProfile is not RuntimeDefault"),
    (_no_limits, "container engine: no limits for cpu, memory"),
    (_tcp_readiness, "container engine: no gRPC readinessProbe on port 50061"),
    (_probe_on_the_tls_port, "container engine: no gRPC livenessProbe on port 50061"),
    (_two_images, "the services run different images"),
    (_no_registry, "image 'wargame:0.1.0' names no registry"),
    (_latest, "has no exact tag"),
    (_cluster_ip, "the engine has no headless Service"),
    (_seal_key_in_empty_dir, "is not a file from a Secret volume"),
    (_shipped_seal_key, "Secret wargame-seal-key ships the seal key"),
    (_matchmaker_key_in_empty_dir, "the matchmaker's secret key /etc/wargame/secret/secret.key"),
    (_no_matchmaker_key, "the matchmaker's secret key is not given (--secret-key-file)"),
    (_shipped_matchmaker_key, "Secret wargame-matchmaker-key ships the matchmaker's secret key"),
    (_plaintext_not_allowed, "the engine serves neither TLS nor --insecure"),
    (_drop("NetworkPolicy", "default-deny"), "no default-deny NetworkPolicy"),
    (_store_open_to_all_namespaces, "NetworkPolicy: ns:x can reach session-store on port 6379"),
    (_store_open_to_engine, "NetworkPolicy: engine can reach session-store on port 6379"),
    (_drop("NetworkPolicy", "matchmaker-to-engine-and-store"), "matchmaker cannot reach engine"),
    (_no_pre_stop, "Deployment wargame-matchmaker: no preStop sleep"),
    (_short_termination_period, "wargame-engine: terminationGracePeriodSeconds 25 does not"),
]


def _engine_tls_from_empty_dir(docs: list[dict[str, Any]]) -> None:
    _volume_in_empty_dir(_engine(docs), "tls")


def _engine_without_client_ca(docs: list[dict[str, Any]]) -> None:
    _without_env(_engine_container(docs), "WARGAME_ENGINE_TLS_CLIENT_CA_FILE")


def _matchmaker_without_client_certificate(docs: list[dict[str, Any]]) -> None:
    _without_env(_matchmaker_container(docs), "WARGAME_MATCHMAKER_ENGINE_TLS_CERT_FILE")


def _matchmaker_calls_in_plaintext(docs: list[dict[str, Any]]) -> None:
    _without_env(
        _matchmaker_container(docs),
        "WARGAME_MATCHMAKER_ENGINE_TLS_CA_FILE",
        "WARGAME_MATCHMAKER_ENGINE_TLS_CERT_FILE",
    )


def _no_trusted_proxies(docs: list[dict[str, Any]]) -> None:
    _without_env(_matchmaker_container(docs), "WARGAME_MATCHMAKER_TRUSTED_PROXIES")


def _dev_matchmaker_calls_over_tls(docs: list[dict[str, Any]]) -> None:
    _set_env(_matchmaker_container(docs), "WARGAME_MATCHMAKER_ENGINE_TLS", "1")


def _redis_args(docs: list[dict[str, Any]]) -> list[str]:
    redis = _one(docs, "StatefulSet", "wargame-redis")
    args: list[str] = redis["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def _redis_arg(name: str, value: str | None) -> Callable[[list[dict[str, Any]]], None]:
    """Set (or, with None, drop) one of the dev Redis's `--name value` arguments."""

    def mutate(docs: list[dict[str, Any]]) -> None:
        args = _redis_args(docs)
        at = args.index(f"--{name}")
        if value is None:
            del args[at : at + 2]
        else:
            args[at + 1] = value

    return mutate


def _redis_config(old: str, new: str) -> Callable[[list[dict[str, Any]]], None]:
    """Replace a line of the production Redis nodes' redis-additional.conf."""

    def mutate(docs: list[dict[str, Any]]) -> None:
        data = _one(docs, "ConfigMap", "wargame-redis-config")["data"]
        assert old in data["redis-additional.conf"]
        data["redis-additional.conf"] = data["redis-additional.conf"].replace(old, new)

    return mutate


def _redis_cluster(docs: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = _one(docs, "RedisCluster", "wargame-redis")["spec"]
    return spec


def _followers_avoid_followers_only(docs: list[dict[str, Any]]) -> None:
    # The old rule: each set kept apart from itself, a leader and its follower on one node.
    term = _redis_cluster(docs)["redisFollower"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ][0]
    term["labelSelector"] = {"matchLabels": {"app": "wargame-redis-follower"}}


def _leaders_without_config(docs: list[dict[str, Any]]) -> None:
    del _redis_cluster(docs)["redisLeader"]["redisConfig"]


def _gateway_presents_no_certificate(docs: list[dict[str, Any]]) -> None:
    del _one(docs, "Gateway", "wargame")["spec"]["tls"]


OVERLAY_MUTATIONS = [
    ("production", _engine_tls_from_empty_dir, "the engine's TLS file /etc/wargame/tls/tls.crt"),
    ("production", _engine_without_client_ca, "the engine does not serve mutual TLS"),
    ("production", _matchmaker_without_client_certificate, "the matchmaker presents none"),
    ("production", _matchmaker_calls_in_plaintext, "engine serves TLS but the matchmaker calls "),
    ("production", _no_trusted_proxies, "the matchmaker behind a gateway trusts no proxies"),
    ("dev", _dev_matchmaker_calls_over_tls, "engine serves plaintext but the matchmaker calls"),
    ("dev", _redis_arg("maxmemory", None), "container redis: no maxmemory"),
    ("dev", _redis_arg("maxmemory", "512mb"), "maxmemory 512mb is 100% of the memory limit"),
    ("dev", _redis_arg("maxmemory-policy", "allkeys-lru"), "maxmemory-policy is not noeviction"),
    ("dev", _redis_arg("appendonly", "no"), "container redis: appendonly is not yes"),
    ("production", _redis_config("maxmemory 768mb", "maxmemory 1gb"), "is 100% of the memory"),
    ("production", _redis_config("noeviction", "volatile-lru"), "followers: maxmemory-policy is"),
    ("production", _redis_config("appendonly yes", "appendonly no"), "leaders: appendonly is not"),
    ("production", _leaders_without_config, "leaders: no redisConfig.additionalRedisConfig"),
    ("production", _followers_avoid_followers_only, "followers: no required podAntiAffinity"),
    ("production", _gateway_presents_no_certificate, "the engine wants a client certificate but"),
    ("production", _drop("BackendTLSPolicy", "wargame-matchmaker"), "matchmaker without a Backend"),
]


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_the_overlays_pass_every_check(rendered: dict[str, list[Any]], overlay: str) -> None:
    assert lint.check_manifests(rendered[overlay], overlay) == []


# Every rule of both overlays, then the transport rules each overlay has of its own.
EVERY_MUTATION = [
    (overlay, mutate, problem) for mutate, problem in MUTATIONS for overlay in ("dev", "production")
] + OVERLAY_MUTATIONS


@pytest.mark.parametrize(
    ("overlay", "mutate", "problem"),
    EVERY_MUTATION,
    ids=[f"{problem}-{overlay}" for overlay, _, problem in EVERY_MUTATION],
)
def test_each_rule_catches_its_mistake(
    rendered: dict[str, list[Any]],
    overlay: str,
    mutate: Callable[[list[dict[str, Any]]], None],
    problem: str,
) -> None:
    docs = copy.deepcopy(rendered[overlay])
    mutate(docs)
    problems = lint.check_manifests(docs, overlay)
    assert any(problem in line for line in problems), problems


def test_production_lets_the_gateway_and_the_operator_in_and_nobody_else(
    rendered: dict[str, list[Any]],
) -> None:
    # The production policies applied to the dev overlay's pods: the same matrix holds.
    docs = copy.deepcopy(rendered["dev"])
    docs += [d for d in rendered["production"] if d["kind"] == "NetworkPolicy"]
    problems = lint.check_manifests(docs, "dev")
    assert "NetworkPolicy: ns:gateway-system can reach matchmaker on port 50052" in problems
    assert "NetworkPolicy: ns:redis-operator can reach session-store on port 6379" in problems
    assert not [p for p in problems if "ns:x" in p or "unlabelled" in p]


@needs_kubectl
@pytest.mark.skipif(not shutil.which("node"), reason="node validates the Gateway API objects")
def test_schemas_catch_a_bad_field_in_a_builtin_kind_and_in_a_gateway_route(
    rendered: dict[str, list[Any]],
) -> None:
    docs = copy.deepcopy(rendered["production"])
    assert lint.validate_schemas(docs, ["1.35.0"], TOOLS) == []
    _engine_container(docs)["readinessProbe"]["grpc"]["port"] = "grpc"  # must be a number
    route = _one(docs, "GRPCRoute", "wargame")
    route["spec"]["rules"][0]["backendRefs"][0]["port"] = "50052"
    problems = lint.validate_schemas(docs, ["1.35.0"], TOOLS)
    assert any(p.startswith("Deployment wargame-engine (Kubernetes 1.35.0)") for p in problems)
    assert any(p.startswith("GRPCRoute wargame: ") and "port" in p for p in problems), problems


# --- compose and Dockerfile ----------------------------------------------------------


def _compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())


def test_the_compose_file_passes() -> None:
    assert lint.check_compose(_compose()) == []


def _engine_unchecked(compose: dict[str, Any]) -> None:
    del compose["services"]["engine"]["healthcheck"]


def _started_not_healthy(compose: dict[str, Any]) -> None:
    compose["services"]["matchmaker"]["depends_on"]["engine"] = {"condition": "service_started"}


def _redis_without_file(compose: dict[str, Any]) -> None:
    compose["services"]["redis"]["command"] = ["redis-server"]


def _seal_key_in_environment(compose: dict[str, Any]) -> None:
    del compose["services"]["engine"]["secrets"]


def _matchmaker_key_in_environment(compose: dict[str, Any]) -> None:
    compose["services"]["matchmaker"]["secrets"].remove("matchmaker_key")


def _published_in_plaintext(compose: dict[str, Any]) -> None:
    del compose["services"]["engine"]["environment"]["WARGAME_ENGINE_TLS_CERT_FILE"]


def _health_check_on_the_tls_port(compose: dict[str, Any]) -> None:
    test = compose["services"]["matchmaker"]["healthcheck"]["test"]
    test[test.index("127.0.0.1:50062")] = "127.0.0.1:50052"


def _redis_without_bound(compose: dict[str, Any]) -> None:
    command = compose["services"]["redis"]["command"]
    del command[command.index("--maxmemory") : command.index("--maxmemory") + 2]


def _redis_evicting(compose: dict[str, Any]) -> None:
    command = compose["services"]["redis"]["command"]
    command[command.index("noeviction")] = "allkeys-lru"


def _redis_unlimited(compose: dict[str, Any]) -> None:
    del compose["services"]["redis"]["mem_limit"]


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (_redis_without_bound, "compose: redis: no maxmemory"),
        (_redis_evicting, "compose: redis: maxmemory-policy is not noeviction"),
        (_redis_unlimited, "compose: redis: no memory limit for Redis"),
        (_engine_unchecked, "compose: engine has no health check"),
        (_started_not_healthy, "compose: matchmaker starts before engine is healthy"),
        (_redis_without_file, "compose: redis keeps no append-only file"),
        (_seal_key_in_environment, "compose: the engine's seal key is not a file secret"),
        (_matchmaker_key_in_environment, "compose: the matchmaker's secret key is not a file"),
        (_published_in_plaintext, "compose: the engine publishes gRPC without TLS"),
        (_health_check_on_the_tls_port, "matchmaker's health check does not use its health port"),
    ],
)
def test_each_compose_rule_catches_its_mistake(
    mutate: Callable[[dict[str, Any]], None], problem: str
) -> None:
    compose = _compose()
    mutate(compose)
    assert any(problem in line for line in lint.check_compose(compose))


def test_the_dockerfile_runs_as_a_numeric_user_on_pinned_images() -> None:
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    assert lint.check_dockerfile(text) == []
    named = text.replace("USER 10001:10001", "USER wargame")
    assert any("numeric non-root" in p for p in lint.check_dockerfile(named))
    root = text.replace("USER 10001:10001", "USER 0")
    assert any("numeric non-root" in p for p in lint.check_dockerfile(root))
    floating = text.replace("python:3.11.13-slim-bookworm", "python:3.11-slim", 1)
    assert lint.check_dockerfile(floating) == [
        "Dockerfile: base image python:3.11-slim is not pinned to an exact version"
    ]


def test_the_image_gets_only_what_it_needs() -> None:
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert ignored[1] == "*"  # everything is left out but what is named
    allowed = {line[1:].rstrip("/") for line in ignored if line.startswith("!")}
    sources = {
        word
        for line in (ROOT / "deploy" / "Dockerfile").read_text().splitlines()
        if line.startswith("COPY ") and "--from" not in line
        for word in line.split()[1:-1]
    }
    assert sources and sources <= allowed
    assert not {".venv", "tests", ".git", "run", "deploy"} & allowed


# --- monitoring: alert rules and the dashboard ---------------------------------------

PROMTOOL = TOOLS / "bin" / "promtool"
MONITORING = ROOT / "deploy" / "monitoring"


def _known() -> set[str]:
    published: set[str] = lint.published_metrics([ROOT / "engine_service", ROOT / "matchmaker"])
    return published | lint.REDIS_EXPORTER_METRICS


def _rules() -> dict[str, Any]:
    rules: dict[str, Any] = yaml.safe_load((MONITORING / "alerts.yaml").read_text())
    return rules


def _alert(rules: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for g in rules["groups"] for r in g["rules"] if r.get("alert") == name)


def _dashboard() -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads((MONITORING / "dashboard.json").read_text())
    return dashboard


def _operations() -> str:
    return (ROOT / "docs" / "operations.md").read_text()


def test_the_services_declare_the_metrics_the_objectives_read() -> None:
    assert {
        "wargame_matchmaker_rpc_seconds_bucket",
        "wargame_matchmaker_rpcs_total",
        "wargame_matchmaker_sweeps_total",
        "wargame_engine_rpc_seconds_bucket",
    } <= _known()
    assert "wargame_matchmaker_rpc_seconds" not in _known()  # a histogram's series only


def test_the_alerts_and_the_dashboard_pass() -> None:
    assert lint.check_alerts(_rules(), _known(), _operations()) == []
    assert lint.check_dashboard(_dashboard(), _known()) == []


def _misspelt_metric(rules: dict[str, Any]) -> None:
    _alert(rules, "MovesRefused")["expr"] = (
        'rate(wargame_matchmaker_rpc_total{code="INTERNAL"}[5m])'
    )


def _no_objective(rules: dict[str, Any]) -> None:
    del _alert(rules, "EngineInternalErrors")["labels"]["slo"]


def _no_severity(rules: dict[str, Any]) -> None:
    _alert(rules, "WatchersSlow")["labels"]["severity"] = "critical"


def _runbook_nowhere(rules: dict[str, Any]) -> None:
    _alert(rules, "BotThinkingSlow")["annotations"]["runbook"] = "docs/operations.md#bots"


def _bots_unguarded(rules: dict[str, Any]) -> None:
    for group in rules["groups"]:
        group["rules"] = [
            r for r in group["rules"] if r.get("labels", {}).get("slo") != "bot-reply"
        ]


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (_misspelt_metric, "MovesRefused reads wargame_matchmaker_rpc_total, which nothing"),
        (_no_objective, "EngineInternalErrors guards no objective"),
        (_no_severity, "WatchersSlow has no severity"),
        (_runbook_nowhere, "BotThinkingSlow's runbook 'docs/operations.md#bots' is no heading"),
        (_bots_unguarded, "no alert guards the objective bot-reply"),
    ],
)
def test_each_alert_rule_catches_its_mistake(
    mutate: Callable[[dict[str, Any]], None], problem: str
) -> None:
    rules = _rules()
    mutate(rules)
    problems = lint.check_alerts(rules, _known(), _operations())
    assert any(problem in line for line in problems), problems


def _panel(dashboard: dict[str, Any], title: str) -> dict[str, Any]:
    return next(p for p in dashboard["panels"] if p["title"] == title)


def _unknown_metric_in_panel(dashboard: dict[str, Any]) -> None:
    _panel(dashboard, "Sweeper work by result")["targets"][0]["expr"] = (
        "sum(rate(wargame_matchmaker_sweeps[5m]))"
    )


def _replicas_not_shown(dashboard: dict[str, Any]) -> None:
    dashboard["panels"].remove(_panel(dashboard, "Replicas per Redis primary"))


def _empty_panel(dashboard: dict[str, Any]) -> None:
    _panel(dashboard, "Engine refusals by reason")["targets"] = []


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (_unknown_metric_in_panel, "'Sweeper work by result' reads wargame_matchmaker_sweeps,"),
        (_replicas_not_shown, "no panel shows redis_connected_slaves"),
        (_empty_panel, "panel 'Engine refusals by reason' queries nothing"),
    ],
)
def test_each_dashboard_rule_catches_its_mistake(
    mutate: Callable[[dict[str, Any]], None], problem: str
) -> None:
    dashboard = _dashboard()
    mutate(dashboard)
    assert any(problem in line for line in lint.check_dashboard(dashboard, _known()))


@pytest.mark.skipif(not PROMTOOL.exists(), reason="promtool comes with `make lint`")
def test_promtool_passes_the_rules_and_their_tests_catch_a_changed_threshold(
    tmp_path: Path,
) -> None:
    assert lint.check_monitoring(TOOLS) == []
    for name in ("alerts.yaml", "alerts.test.yaml"):
        shutil.copy(MONITORING / name, tmp_path / name)
    rules = tmp_path / "alerts.yaml"
    text = rules.read_text()
    assert "wargame:submit_actions_seconds:p99_5m > 0.25" in text
    rules.write_text(text.replace("p99_5m > 0.25", "p99_5m > 0.5"))
    done = subprocess.run(
        [str(PROMTOOL), "test", "rules", "alerts.test.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "alertname: MoveAcknowledgementSlow" in done.stdout + done.stderr
