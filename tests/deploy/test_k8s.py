"""deploy/k8s validates against the Kubernetes schemas and matches what the services serve."""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest

from tests.deploy.conftest import DEPLOY, K8S_VERSION, ROOT, exported_metric_names, load_docs

MANIFESTS = sorted(p for p in (DEPLOY / "k8s").glob("*.yaml") if p.name != "nats-values.yaml")
SERVICES = ("extractor", "r42", "content", "quiz", "telemetry", "gateway")


def _all() -> list[tuple[Path, dict]]:
    return [(path, doc) for path in MANIFESTS for doc in load_docs(path)]


def _by_kind(kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for _, d in _all() if d["kind"] == kind}


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_every_resource_passes_the_strict_schema(path: Path) -> None:
    docs = load_docs(path)
    assert docs, f"{path.name} has no resources"
    for doc in docs:
        # strict: unknown fields fail too (a typo'd key would be silently ignored by kubectl)
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_a_typo_fails_the_schema() -> None:
    deployment = dict(_by_kind("Deployment")["r42-telemetry"])
    broken = {**deployment, "spec": {**deployment["spec"], "replica": 2}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_each_service_has_a_deployment_with_probes_and_resources() -> None:
    deployments = _by_kind("Deployment")
    assert set(deployments) == {f"r42-{s}" for s in SERVICES}
    for name, dep in deployments.items():
        (container,) = dep["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        port = next(p for p in container["ports"] if p["name"] == "metrics")
        assert env["R42_METRICS_PORT"] == str(port["containerPort"]), name
        assert env["R42_METRICS_HOST"] == "0.0.0.0", name  # the pod IP, for the kubelet
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
        assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
        for kind in ("requests", "limits"):
            assert {"memory", "cpu"} <= set(container["resources"][kind]), (name, kind)
        svc = name.removeprefix("r42-")
        assert container["args"][:3] == ["python", "-m", f"services.{svc}"]
        assert (ROOT / "services" / svc / "__main__.py").exists()
        annotations = dep["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/port"] == str(port["containerPort"])


def test_every_deployment_has_a_disruption_budget_selecting_it() -> None:
    budgets = _by_kind("PodDisruptionBudget")
    for name, dep in _by_kind("Deployment").items():
        labels = dep["spec"]["template"]["metadata"]["labels"]
        pdb = budgets[name]
        assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert dep["spec"]["replicas"] >= 2, f"{name}: a PDB on one replica blocks node drains"


async def _declared_durables(tmp_path: Path) -> set[str]:
    """The durable consumers the services' own `build` declares (build does no I/O)."""
    import importlib

    from shared.bus import BusTelemetrySink, build_broker
    from shared.config import build_settings
    from shared.runtime.service import ServiceContext
    from shared.store import open_store

    store = await open_store(f"sqlite:///{tmp_path / 'r42.db'}")
    broker = build_broker("nats://127.0.0.1:4222", name="deploy-check")  # never connected
    found: set[str] = set()
    try:
        for svc in ("extractor", "r42", "content", "quiz", "telemetry"):
            ctx = ServiceContext(
                name=svc, settings=build_settings(llm="offline"), broker=broker, store=store,
                nats_url="nats://127.0.0.1:4222", telemetry=BusTelemetrySink(broker, actor=svc),
            )  # fmt: skip
            spec = importlib.import_module(f"services.{svc}.app").build(ctx)
            found |= {sub.durable for sub in spec.subscriptions}
    finally:
        await store.close()
    return found


async def test_autoscalers_use_metrics_we_export_and_consumers_we_declare(tmp_path: Path) -> None:
    deployments = _by_kind("Deployment")
    names = exported_metric_names()
    durables = await _declared_durables(tmp_path)
    assert "telemetry" in durables
    for name, hpa in _by_kind("HorizontalPodAutoscaler").items():
        target = hpa["spec"]["scaleTargetRef"]
        assert target["kind"] == "Deployment" and target["name"] in deployments
        assert hpa["spec"]["minReplicas"] == deployments[target["name"]]["spec"]["replicas"]
        for metric in hpa["spec"]["metrics"]:
            if metric["type"] != "External":
                continue
            ext = metric["external"]["metric"]
            assert ext["name"] in names, f"{name}: {ext['name']} is not exported"
            (expr,) = ext["selector"]["matchExpressions"]
            assert expr["key"] == "consumer"
            assert set(expr["values"]) <= durables, f"{name}: unknown consumer {expr['values']}"
