"""Federated DaemonSets end to end (docs/federation.md, "Federated
DaemonSets"): apps/v1 DaemonSets created on `flotilla server` with the real
kubectl, run by three `flotilla member` clusters of different sizes whose
DaemonSet controllers put a pod on every node.

Covered: one pod per node in every member (a node selector and a taint
narrow it), the federation's `kubectl get ds` counting every member's
nodes; a template change rolled out one cluster at a time in the update
order with `kubectl rollout status`, then `kubectl rollout history` and
`kubectl rollout undo` on the federation; Kubernetes' 422s.
"""

import json

import pytest

from conftest import table, wait_for
from federation import FED_ARGS, module_federation

NODES = {"a": 1, "b": 2, "c": 3}
SERVER_ARGS = FED_ARGS + ["--member-change-delay", "200ms"]
CLUSTERS = {c: ({}, ["--nodes", str(n), "--pod-startup", "300ms"]) for c, n in NODES.items()}
ORDER = "federation.kubernetes.io/cluster-update-order"
NS = "infra"

fed = module_federation("fed-ds", CLUSTERS, SERVER_ARGS)


@pytest.fixture(scope="module", autouse=True)
def namespace(fed):
    fed.create_namespace(NS)


def daemonset(name, image="fluentd:1", annotations=None, **pod_spec):
    meta = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": dict(pod_spec, terminationGracePeriodSeconds=0,
                                               containers=[
                                      {"name": "agent", "image": image}])}}}


def local(fed, c, name):
    return fed[c].get_json(f"/apis/apps/v1/namespaces/{NS}/daemonsets/{name}")


def image(obj):
    return obj["spec"]["template"]["spec"]["containers"][0]["image"]


def pods_by_node(fed, c, name):
    """Member c's running pods of the DaemonSet, by node."""
    out = {}
    for p in fed[c].pods(NS, f"app={name}"):
        if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp"):
            out.setdefault(p["spec"]["nodeName"], []).append(p)
    return out


def rollout_status(fed, name):
    return fed.kubectl("rollout", "status", f"ds/{name}", "-n", NS, "--timeout=120s")


def test_one_pod_per_node_in_every_member(fed):
    fed.create(daemonset("logs"), NS)
    out = rollout_status(fed, "logs")
    assert "successfully rolled out" in out.stdout
    for c, n in NODES.items():
        by_node = pods_by_node(fed, c, "logs")
        assert sorted(by_node) == sorted(fed[c].nodes())
        assert all(len(pods) == 1 for pods in by_node.values()), by_node
    _, rows = table(fed.kubectl("get", "ds", "logs", "-n", NS).stdout)
    row = rows[0]
    assert row["DESIRED"] == "6" and row["READY"] == "6" and row["UP-TO-DATE"] == "6"
    assert row["NODE SELECTOR"] == "<none>"


def test_a_node_selector_and_a_taint_narrow_the_nodes(fed):
    nodes = sorted(fed["c"].nodes())
    fed["c"].kubectl("label", "node", nodes[0], nodes[1], "role=edge")
    fed["c"].kubectl("taint", "node", nodes[1], "dedicated=db:NoSchedule")
    fed.create(daemonset("edge", nodeSelector={"role": "edge"}), NS)
    rollout_status(fed, "edge")
    wait_for(lambda: sorted(pods_by_node(fed, "c", "edge")) == [nodes[0]], "the edge pod on c")
    assert all(not pods_by_node(fed, c, "edge") for c in ("a", "b"))
    assert local(fed, "a", "edge")["status"]["desiredNumberScheduled"] == 0
    fed.kubectl("patch", "ds", "edge", "-n", NS, "--type=merge", "-p", json.dumps(
        {"spec": {"template": {"spec": {"tolerations": [
            {"key": "dedicated", "operator": "Exists"}]}}}}))
    rollout_status(fed, "edge")
    wait_for(lambda: sorted(pods_by_node(fed, "c", "edge")) == nodes[:2], "both edge nodes")
    ds = json.loads(fed.kubectl("get", "ds", "edge", "-n", NS, "-o", "json").stdout)
    assert ds["status"]["desiredNumberScheduled"] == 2


def test_a_template_rolls_out_cluster_by_cluster_with_history_and_undo(fed):
    fed.create(daemonset("agent", annotations={ORDER: "c,a"}), NS)
    rollout_status(fed, "agent")
    fed.kubectl("set", "image", "ds/agent", "agent=fluentd:2", "-n", NS)
    seen = []

    def images():
        now = tuple(image(local(fed, c, "agent")) for c in NODES)
        if not seen or seen[-1] != now:
            seen.append(now)
        return now == ("fluentd:2",) * 3

    wait_for(images, lambda: f"every cluster on the new image: {seen}, " + json.dumps(
        {c: local(fed, c, "agent")["status"] for c in NODES}), timeout=90)
    out = rollout_status(fed, "agent")
    assert "successfully rolled out" in out.stdout
    # One cluster at a time, c, then a, then b: every state seen has the new
    # template in a prefix of that order, and some had it in only part.
    names = list(NODES)
    for state in seen:
        updated = [state[names.index(c)] == "fluentd:2" for c in ("c", "a", "b")]
        assert updated == sorted(updated, reverse=True), seen
    assert len(seen) > 2, seen
    for c in NODES:
        pods = [p for ps in pods_by_node(fed, c, "agent").values() for p in ps]
        # (c's node tainted by the test above runs none)
        assert len(pods) == local(fed, c, "agent")["status"]["desiredNumberScheduled"] > 0
        assert {p["spec"]["containers"][0]["image"] for p in pods} == {"fluentd:2"}
    history = fed.kubectl("rollout", "history", "ds/agent", "-n", NS).stdout
    assert "1 " in history and "2 " in history, history
    fed.kubectl("rollout", "undo", "ds/agent", "-n", NS)
    wait_for(lambda: all(image(local(fed, c, "agent")) == "fluentd:1" for c in NODES),
             "undone everywhere", timeout=90)
    rollout_status(fed, "agent")


def test_invalid_daemonsets_are_refused_with_kubernetes_errors(fed):
    bad = daemonset("bad", restartPolicy="Never")
    bad["spec"]["updateStrategy"] = {"type": "RollingUpdate",
                                     "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}
    out = fed.create(bad, NS, check=False)
    assert out.returncode != 0
    assert 'spec.template.spec.restartPolicy: Unsupported value: "Never"' in out.stderr
    assert "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 " \
           "when maxSurge is 0" in out.stderr
    fed.create(daemonset("fixed"), NS)
    out = fed.kubectl("patch", "ds", "fixed", "-n", NS, "--type=merge", "-p",
                      json.dumps({"spec": {"selector": {"matchLabels": {"app": "other"}},
                                           "template": {"metadata": {"labels": {"app": "other"}}}}}),
                      check=False)
    assert out.returncode != 0 and "field is immutable" in out.stderr
