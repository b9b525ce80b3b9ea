"""A custom kind that a ResourceInterpreterCustomization explains, federated
over three `flotilla member` clusters (docs/interpreter.md, "In the
federation"): the customization applied with kubectl (and a bad one refused
with the failing script's field), a Workload of 6 replicas divided 2/2/2 by
GetReplicas and ReviseReplica, a copy edited in a member restored, the
members' statuses aggregated by AggregateStatus into the federated object's
status, a replica-preferences annotation honoured, and a member lost: its
share moved to the others."""

import json
import os

import pytest
import yaml

from conftest import wait_for
from federation import FED_ARGS, Federation

TESTDATA = os.path.join(os.path.dirname(__file__), "..", "..", "src", "interpreter", "testdata")
CUSTOMIZATION = os.path.join(TESTDATA, "workload-customization.yaml")
GROUP = "apps.example.com"
CRD_PATH = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workloads.{GROUP}"
CLUSTERS = ("a", "b", "c")


def workload_crd():
    preserve = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "replicas": {"type": "integer", "minimum": 0},
            "paused": {"type": "boolean"},
            "template": preserve}},
        "status": preserve}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"workloads.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": "workloads", "singular": "workload", "kind": "Workload"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": schema},
                               "subresources": {"status": {}, "scale": {
                                   "specReplicasPath": ".spec.replicas",
                                   "statusReplicasPath": ".status.replicas"}}}]}}


def workload(name, replicas, preferences=None):
    meta = {"name": name}
    if preferences is not None:
        meta["annotations"] = {"federation.kubernetes.io/replica-preferences":
                               json.dumps(preferences)}
    return {"apiVersion": f"{GROUP}/v1", "kind": "Workload", "metadata": meta,
            "spec": {"replicas": replicas, "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx",
                                         "resources": {"requests": {"cpu": "100m"}}}]}}}}


def path(name, ns="shop"):
    return f"/apis/{GROUP}/v1/namespaces/{ns}/workloads/{name}"


def established(obj):
    return obj is not None and any(c["type"] == "Established" and c["status"] == "True"
                                   for c in obj.get("status", {}).get("conditions", []))


@pytest.fixture(scope="module")
def fed(tmp_path_factory):
    f = Federation(tmp_path_factory.mktemp("interpreted"), server_args=FED_ARGS).start()
    try:
        for c in CLUSTERS:
            f.add_member(c)
        f.apply(workload_crd(), "default")
        f.kubectl("wait", "--for", "condition=established", "--timeout=60s",
                  f"crd/workloads.{GROUP}")
        for c in CLUSTERS:
            wait_for(lambda c=c: established(f[c].get_json(CRD_PATH)), f"{c}: the CRD")
        f.kubectl("apply", "-f", CUSTOMIZATION)
        f.kubectl("create", "namespace", "shop")
        yield f
    finally:
        f.close()


def layout(fed, name, clusters=CLUSTERS):
    out = {}
    for c in clusters:
        copy = fed[c].get_json(path(name))
        if copy is not None:
            out[c] = copy["spec"]["replicas"]
    return out


def test_the_customization_is_served_and_a_bad_one_refused(fed):
    out = fed.kubectl("get", "ric").stdout
    assert "workloads.apps.example.com" in out and "apps.example.com/v1" in out and \
        "Workload" in out, out
    bad = yaml.safe_load(open(CUSTOMIZATION))
    bad["metadata"]["name"] = "bad"
    bad["spec"]["customizations"]["retention"]["luaScript"] = "function Retain(d, o) return d"
    r = fed.kubectl("apply", "-f", "-", input=json.dumps(bad), check=False)
    assert r.returncode != 0
    assert "spec.customizations.retention.luaScript" in r.stderr, r.stderr
    assert "script:1:" in r.stderr, r.stderr


def test_divided_restored_aggregated_and_moved_when_a_member_is_lost(fed):
    fed.apply(workload("web", 6), "shop")
    wait_for(lambda: layout(fed, "web") == {"a": 2, "b": 2, "c": 2}, "web divided 2/2/2")

    # A copy edited in a member is restored.
    fed["a"].kubectl("patch", "workloads.apps.example.com", "web", "-n", "shop", "--type=merge",
                     "-p", '{"spec":{"replicas":5}}')
    wait_for(lambda: layout(fed, "web")["a"] == 2, "a's copy restored to 2")

    # The members report; the federated object's status is their aggregate.
    for c in CLUSTERS:
        copy = fed[c].get_json(path("web"))
        copy["status"] = {"replicas": 2, "readyReplicas": 2 if c != "c" else 1,
                          "updatedReplicas": 2,
                          "observedGeneration": copy["metadata"]["generation"]}
        r = fed[c].api().put(path("web") + "/status", json=copy, timeout=10)
        assert r.status_code == 200, r.text
    want = {"replicas": 6, "readyReplicas": 5, "updatedReplicas": 6}

    def status():
        obj = json.loads(fed.kubectl("get", "workloads.apps.example.com", "web", "-n", "shop",
                                     "-o", "json").stdout)
        return obj.get("status"), obj["metadata"]["generation"]
    wait_for(lambda: {k: v for k, v in (status()[0] or {}).items() if k in want} == want,
             "the aggregated status")
    current, generation = status()
    assert current["observedGeneration"] == generation

    # A member lost: its share goes to the others.
    fed["c"].kill9()
    fed["c"].stopped = True
    fed.wait_not_ready("c")
    wait_for(lambda: layout(fed, "web", ("a", "b")) == {"a": 3, "b": 3}, "web over a and b",
             timeout=60)


def test_replica_preferences_weight_the_clusters(fed):
    fed.apply(workload("api", 4, {"clusters": {"a": {"weight": 3}, "b": {"weight": 1}}}), "shop")
    wait_for(lambda: layout(fed, "api", ("a", "b")) == {"a": 3, "b": 1}, "api 3/1")
    bad = workload("worse", 2, {"clusters": {"a": {"weight": -1}}})
    r = fed.create(bad, "shop", check=False)
    assert r.returncode != 0 and "replica-preferences" in r.stderr, r.stderr


def test_dependencies_follow_their_workload(fed):
    """GetDependencies (kube.getPodDependencies in the customization): the
    ConfigMap a workload's pods read goes where the workload runs, though
    its own cluster selector admits no cluster, and moves with it."""
    fed.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "settings", "annotations": {
            "federation.alpha.kubernetes.io/cluster-selector": json.dumps(
                [{"key": "region", "operator": "In", "values": ["mars"]}])}},
        "data": {"mode": "fast"}}, "shop")
    job = workload("reader", 1, {"clusters": {"a": {"weight": 1}}})
    job["spec"]["template"]["spec"]["containers"][0]["envFrom"] = [
        {"configMapRef": {"name": "settings"}}]
    fed.apply(job, "shop")
    cm = "/api/v1/namespaces/shop/configmaps/settings"
    wait_for(lambda: layout(fed, "reader", ("a", "b")) == {"a": 1}, "reader in a")
    wait_for(lambda: fed["a"].get_json(cm) is not None, "settings in a")
    assert fed["b"].get_json(cm) is None

    job["metadata"]["annotations"]["federation.kubernetes.io/replica-preferences"] = json.dumps(
        {"clusters": {"b": {"weight": 1}}})
    fed.apply(job, "shop")
    wait_for(lambda: layout(fed, "reader", ("a", "b")) == {"b": 1}, "reader moved to b")
    wait_for(lambda: fed["b"].get_json(cm) is not None, "settings in b")
    wait_for(lambda: fed["a"].get_json(cm) is None, "settings gone from a")
