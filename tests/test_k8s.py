"""deploy/k8s/: every manifest is valid for a pinned Kubernetes version
(``kubernetes-validate``'s bundled OpenAPI schemas, strict: an unknown field is an
error), and the manifests agree with each other and with the service (labels,
ports, probes, limits)."""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from specdec_service.api.grading import GRADE_MAX_BODY_BYTES
from specdec_service.app import MAX_BODY_BYTES
from specdec_service.gunicorn_conf import graceful_timeout

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
KUBERNETES_VERSION = "1.31.0"
"""The Kubernetes version the manifests are validated against."""


def documents(name: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all((K8S / name).read_text(encoding="utf-8")) if doc]


def manifests() -> dict[tuple[str, str], dict]:
    """Every resource of kustomization.yaml's files, by (kind, name)."""
    found = {}
    for name in documents("kustomization.yaml")[0]["resources"]:
        for doc in documents(name):
            found[(doc["kind"], doc["metadata"]["name"])] = doc
    return found


MANIFEST_FILES = sorted(path.name for path in K8S.glob("*.yaml") if path.name != "kustomization.yaml")


def test_kustomization_lists_every_manifest_but_the_controller_settings():
    listed = documents("kustomization.yaml")[0]["resources"]
    assert sorted(listed) == sorted(set(MANIFEST_FILES) - {"ingress-nginx-configmap.yaml"})
    assert set(manifests()) == {("Deployment", "specdec"), ("Service", "specdec"),
                                ("HorizontalPodAutoscaler", "specdec"), ("PodDisruptionBudget", "specdec"),
                                ("Ingress", "specdec"), ("Ingress", "specdec-grading")}


@pytest.mark.parametrize("name", MANIFEST_FILES)
def test_manifest_is_valid_for_the_pinned_kubernetes(name):
    for doc in documents(name):
        assert kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True) == "1.31"


def test_validation_rejects_a_broken_manifest():
    deployment = documents("deployment.yaml")[0]
    broken = {**deployment, "spec": {**deployment["spec"], "replicas": "three"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)
    unknown = {**deployment, "spec": {**deployment["spec"], "replica": 3}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(unknown, KUBERNETES_VERSION, strict=True)


def test_deployment_scaled_by_the_hpa_probes_resources_non_root_read_only():
    deployment = manifests()[("Deployment", "specdec")]
    spec, pod = deployment["spec"], deployment["spec"]["template"]["spec"]
    assert "replicas" not in spec  # the HPA's (test below): `kubectl apply` would reset its scale
    assert spec["selector"]["matchLabels"] == deployment["spec"]["template"]["metadata"]["labels"]
    assert spec["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    (container,) = pod["containers"]
    assert container["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["SPECDEC_BIND"] == "0.0.0.0:8000"
    assert int(env["SPECDEC_WORKERS"]) == int(container["resources"]["limits"]["cpu"])
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": "http"}
    assert set(container["resources"]) == {"requests", "limits"}
    assert set(container["resources"]["requests"]) == set(container["resources"]["limits"]) == {"cpu", "memory"}
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert [m["mountPath"] for m in container["volumeMounts"]] == ["/tmp"]  # the only writable path
    assert not any(item["name"] == "PROMETHEUS_MULTIPROC_DIR" for item in container["env"])  # gunicorn's own, in /tmp
    # graceful termination: preStop pause + gunicorn's graceful_timeout fit in the grace period
    pause = int(container["lifecycle"]["preStop"]["exec"]["command"][1])
    assert pause + graceful_timeout < pod["terminationGracePeriodSeconds"]


def test_service_hpa_pdb_and_ingresses_point_at_the_deployment():
    found = manifests()
    labels = found[("Deployment", "specdec")]["spec"]["template"]["metadata"]["labels"]
    service = found[("Service", "specdec")]
    assert service["spec"]["selector"] == labels
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    hpa = found[("HorizontalPodAutoscaler", "specdec")]["spec"]
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "specdec"}
    assert hpa["minReplicas"] == 3 and hpa["metrics"][0]["resource"]["name"] == "cpu"
    scaled = {(doc["kind"], doc["metadata"]["name"]) for doc in found.values() if doc["kind"] == "HorizontalPodAutoscaler"}
    for _, name in scaled:  # nothing an HPA scales states its own replicas
        target = found[("HorizontalPodAutoscaler", name)]["spec"]["scaleTargetRef"]
        assert "replicas" not in found[(target["kind"], target["name"])]["spec"], target
    pdb = found[("PodDisruptionBudget", "specdec")]["spec"]
    assert pdb["selector"]["matchLabels"] == labels and pdb["minAvailable"] == 2
    for name in ("specdec", "specdec-grading"):
        ingress = found[("Ingress", name)]
        assert ingress["spec"]["ingressClassName"] == "nginx"
        backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
        assert backend == {"name": "specdec", "port": {"name": "http"}}


def test_prometheus_scrapes_the_pods_metrics():
    """The pod annotations of Prometheus's kubernetes_sd_configs "pod" role (its example
    configuration's relabelling: scrape, port, path) name the container's port and the route."""
    template = manifests()[("Deployment", "specdec")]["spec"]["template"]
    notes = template["metadata"]["annotations"]
    (container,) = template["spec"]["containers"]
    assert notes["prometheus.io/scrape"] == "true" and notes["prometheus.io/path"] == "/metrics"
    assert int(notes["prometheus.io/port"]) == container["ports"][0]["containerPort"]
    from specdec_service import create_app

    assert "/metrics" in {rule.rule for rule in create_app().url_map.iter_rules()}


def size(text: str) -> int:
    units = {"k": 1024, "m": 1024 * 1024}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def test_ingresses_carry_the_edge_limits_and_failover():
    found = manifests()
    for name, limit, path in (("specdec", MAX_BODY_BYTES, "/"), ("specdec-grading", GRADE_MAX_BODY_BYTES, "/v1/grade")):
        ingress = found[("Ingress", name)]
        notes = ingress["metadata"]["annotations"]
        assert size(notes["nginx.ingress.kubernetes.io/proxy-body-size"]) == limit
        assert notes["nginx.ingress.kubernetes.io/proxy-request-buffering"] == "on"
        assert notes["nginx.ingress.kubernetes.io/proxy-next-upstream"] == "error timeout http_502 non_idempotent"
        assert notes["nginx.ingress.kubernetes.io/proxy-read-timeout"] == "60"
        assert ingress["spec"]["rules"][0]["http"]["paths"][0]["path"] == path
    controller = documents("ingress-nginx-configmap.yaml")[0]["data"]
    assert controller["client-header-timeout"] == controller["client-body-timeout"] == "10"
    assert controller["large-client-header-buffers"] == "4 4k"
