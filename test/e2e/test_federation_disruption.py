"""Federated PodDisruptionBudgets end to end (docs/federation.md,
"Federated PodDisruptionBudgets"; docs/member.md, "Disruption budgets"):
policy/v1 budgets created on `flotilla server` with the real kubectl,
divided over three `flotilla member` clusters by where the selected pods
run, enforced in each member by its eviction subresource, which
`kubectl drain` uses.

Covered: a Deployment of 9 replicas 3/3/3 and a budget of minAvailable 6
give each member minAvailable 2, and the federation's `kubectl get pdb`
sums what the members allow; a budget that allows nothing refuses the
real `kubectl drain` of a member node (the eviction answers 429), and one
that allows a disruption at a time lets the drain through pod by pod;
kube's 422 for a budget with both minAvailable and maxUnavailable.
"""

import json

import pytest

from conftest import table, wait_for
from federation import FED_ARGS, module_federation, running

CLUSTERS = {c: ({}, ["--nodes", "2", "--pod-startup", "300ms"]) for c in ("a", "b", "c")}
SERVER_ARGS = FED_ARGS + ["--member-change-delay", "200ms"]
PREFERENCES = "federation.kubernetes.io/deployment-preferences"
EVEN = {"rebalance": True, "clusters": {"*": {"weight": 1}}}
NS = "shop"

fed = module_federation("fed-pdb", CLUSTERS, SERVER_ARGS)


@pytest.fixture(scope="module", autouse=True)
def web(fed):
    fed.create_namespace(NS)
    fed.create({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "annotations": {PREFERENCES: json.dumps(EVEN)}},
                "spec": {"replicas": 9, "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"terminationGracePeriodSeconds": 0,
                                               "containers": [{"name": "app",
                                                               "image": "nginx:1.27"}]}}}},
               NS)
    fed.kubectl("rollout", "status", "deploy/web", "-n", NS, "--timeout=120s")
    wait_for(lambda: all(fed[c].running_pods(NS, "app=web") == 3 for c in CLUSTERS),
             "3 running pods of web in every member")


def budget(min_available):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}}}


def local_budget(fed, c):
    """Member c's copy of the budget, {} while the member has none yet."""
    return fed[c].get_json(f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/web") or {}


def local_min_available(fed, c):
    return local_budget(fed, c).get("spec", {}).get("minAvailable")


def fed_budget(fed):
    return json.loads(fed.kubectl("get", "pdb", "web", "-n", NS, "-o", "json").stdout)


def set_min_available(fed, n):
    fed.kubectl("patch", "pdb", "web", "-n", NS, "--type=merge",
                "-p", json.dumps({"spec": {"minAvailable": n}}))


def allowed_everywhere(fed, n):
    """Every member's budget has observed its share and allows n."""
    def check():
        for c in CLUSTERS:
            s = local_budget(fed, c).get("status", {})
            if s.get("disruptionsAllowed") != n or s.get("currentHealthy") != 3:
                return False
        return True
    wait_for(check, lambda: f"every member allowing {n}: " +
             str({c: local_budget(fed, c).get("status") for c in CLUSTERS}))


def web_pods(fed, c):
    return [p for p in fed[c].pods(NS, "app=web") if running(p)]


def node_with_most_pods(fed, c):
    by_node = {}
    for p in web_pods(fed, c):
        by_node.setdefault(p["spec"]["nodeName"], []).append(p["metadata"]["name"])
    return max(by_node.items(), key=lambda kv: len(kv[1]))


def test_budget_divided_by_where_the_pods_run(fed):
    fed.create(budget(6), NS)
    wait_for(lambda: all(local_min_available(fed, c) == 2 for c in CLUSTERS),
             lambda: "minAvailable 2 in every member: " +
             str({c: local_budget(fed, c).get("spec") for c in CLUSTERS}))
    allowed_everywhere(fed, 1)

    def summed():
        s = fed_budget(fed).get("status", {})
        return (s.get("disruptionsAllowed"), s.get("currentHealthy"), s.get("desiredHealthy"),
                s.get("expectedPods")) == (3, 9, 6, 9)
    wait_for(summed, lambda: f"the summed status: {fed_budget(fed).get('status')}")
    _, rows = table(fed.kubectl("get", "pdb", "-n", NS).stdout)
    assert rows[0]["MIN AVAILABLE"] == "6"
    assert rows[0]["MAX UNAVAILABLE"] == "N/A"
    assert rows[0]["ALLOWED DISRUPTIONS"] == "3"


def test_kubectl_drain_of_a_member_node_honours_the_budget(fed):
    # Every pod is needed: the eviction of any is refused.
    set_min_available(fed, 9)
    wait_for(lambda: local_min_available(fed, "a") == 3,
             "minAvailable 3 in member a")
    allowed_everywhere(fed, 0)
    node, pods = node_with_most_pods(fed, "a")
    refused = fed["a"].kubectl("drain", node, "--timeout=12s", check=False)
    assert refused.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget." in (
        refused.stderr + refused.stdout), refused.stderr
    assert sorted(p["metadata"]["name"] for p in web_pods(fed, "a")
                  if p["spec"]["nodeName"] == node) == sorted(pods)
    # The node stays cordoned.
    assert fed["a"].get_json(f"/api/v1/nodes/{node}")["spec"].get("unschedulable") is True

    # One disruption at a time: the drain evicts a pod, waits for its
    # replacement on the other node to be Ready, evicts the next.
    set_min_available(fed, 6)
    allowed_everywhere(fed, 1)
    drained = fed["a"].kubectl("drain", node, "--timeout=120s")
    assert f"node/{node} drained" in drained.stdout
    for name in pods:
        assert f"pod/{name} evicted" in drained.stdout
    # The last pod's replacement runs on the other node.
    wait_for(lambda: len(web_pods(fed, "a")) == 3, "3 running pods of web in member a")
    assert all(p["spec"]["nodeName"] != node for p in web_pods(fed, "a"))
    fed["a"].kubectl("uncordon", node)


def test_both_minimum_and_maximum_are_refused(fed):
    bad = budget(1)
    bad["metadata"]["name"] = "both"
    bad["spec"]["maxUnavailable"] = 1
    out = fed.kubectl("create", "-n", NS, "-f", "-", input=json.dumps(bad), check=False)
    assert out.returncode != 0
    assert "minAvailable and maxUnavailable cannot be both set" in out.stderr
    assert 'The PodDisruptionBudget "both" is invalid' in out.stderr
