"""A namespace's rules federated (docs/federation.md, "Propagation"):
NetworkPolicies, LimitRanges and ResourceQuotas (and the cluster's
IngressClasses) created on `flotilla server` with the real kubectl reach
every member as plain objects, restored when deleted there; a quota's use
in the members summed on the federation;
a member's LimitRanger fills in and bounds its pods' resources; Kubernetes'
422s for both kinds."""

import json
import re

import pytest

from conftest import table, wait_for
from federation import FED_ARGS, module_federation

CLUSTERS = {c: ({}, []) for c in ["a", "b"]}
NS = "rules"

fed = module_federation("fed-rules", CLUSTERS, FED_ARGS)


@pytest.fixture(scope="module", autouse=True)
def namespace(fed):
    fed.create_namespace(NS)


NETPOL = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
          "metadata": {"name": "db-from-web"},
          "spec": {"podSelector": {"matchLabels": {"app": "db"}},
                   "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}],
                                "ports": [{"port": 5432}]}]}}
LIMITS = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults"},
          "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"},
                               "default": {"cpu": "500m", "memory": "256Mi"},
                               "defaultRequest": {"cpu": "100m"}}]}}


NETPOL_PATH = f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies/db-from-web"
LIMITS_PATH = f"/api/v1/namespaces/{NS}/limitranges/defaults"


def member_object(fed, c, path):
    """The object at `path` in member c, None when there is none."""
    response = fed[c].api().get(path)
    return response.json() if response.status_code == 200 else None


def test_network_policies_and_limit_ranges_reach_every_member(fed):
    fed.create(NETPOL, NS)
    fed.create(LIMITS, NS)
    _, rows = table(fed.kubectl("get", "netpol", "-n", NS).stdout)
    assert rows[0]["NAME"] == "db-from-web" and rows[0]["POD-SELECTOR"] == "app=db"
    for c in CLUSTERS:
        np = wait_for(lambda: member_object(fed, c, NETPOL_PATH), f"the NetworkPolicy in {c}")
        assert np["spec"]["policyTypes"] == ["Ingress"]
        assert np["spec"]["ingress"][0]["ports"][0]["protocol"] == "TCP"
        wait_for(lambda: member_object(fed, c, LIMITS_PATH), f"the LimitRange in {c}")
    # Deleted in a member by hand: the federation puts it back.
    fed["a"].kubectl("delete", "netpol", "db-from-web", "-n", NS)
    wait_for(lambda: member_object(fed, "a", NETPOL_PATH), "the NetworkPolicy restored in a")


def test_ingress_classes_reach_every_member(fed):
    fed.create({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                "metadata": {"name": "edge"},
                "spec": {"controller": "example.com/edge-router",
                         "parameters": {"apiGroup": "example.com", "kind": "EdgeParams",
                                        "name": "default"}}}, NS)
    _, rows = table(fed.kubectl("get", "ingressclass").stdout)
    row = next(r for r in rows if r["NAME"] == "edge")
    assert row["CONTROLLER"] == "example.com/edge-router"
    assert row["PARAMETERS"] == "EdgeParams.example.com/default"
    path = "/apis/networking.k8s.io/v1/ingressclasses/edge"
    for c in CLUSTERS:
        got = wait_for(lambda: member_object(fed, c, path), f"the IngressClass in {c}")
        assert got["spec"]["parameters"]["scope"] == "Cluster"


def test_a_members_pods_get_the_limit_range_defaults_and_bounds(fed):
    wait_for(lambda: member_object(fed, "b", LIMITS_PATH), "the LimitRange in b")
    fed["b"].kubectl("run", "bare", "--image=nginx", "-n", NS)
    pod = json.loads(fed["b"].kubectl("get", "pod", "bare", "-n", NS, "-o", "json").stdout)
    resources = pod["spec"]["containers"][0]["resources"]
    assert resources["limits"] == {"cpu": "500m", "memory": "256Mi"}
    assert resources["requests"] == {"cpu": "100m", "memory": "256Mi"}
    assert "LimitRanger plugin set" in pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"]
    out = fed["b"].kubectl("run", "big", "--image=nginx", "-n", NS, "--overrides", json.dumps(
        {"spec": {"containers": [{"name": "big", "image": "nginx",
                                  "resources": {"limits": {"cpu": "4"}}}]}}), check=False)
    assert out.returncode != 0
    assert "maximum cpu usage per Container is 2, but limit is 4" in out.stderr


def test_invalid_rules_are_refused_with_kubernetes_errors(fed):
    bad = json.loads(json.dumps(NETPOL))
    bad["metadata"]["name"] = "bad"
    bad["spec"]["ingress"][0]["from"] = [{"ipBlock": {"cidr": "10.0.0.0/8",
                                                      "except": ["192.168.0.0/16"]}}]
    bad["spec"]["policyTypes"] = ["Sideways"]
    out = fed.create(bad, NS, check=False)
    assert out.returncode != 0
    assert "must be a strict subset of `cidr`" in out.stderr
    assert 'spec.policyTypes[0]: Unsupported value: "Sideways"' in out.stderr
    limits = json.loads(json.dumps(LIMITS))
    limits["metadata"]["name"] = "bad"
    limits["spec"]["limits"][0]["min"] = {"cpu": "3"}
    out = fed.create(limits, NS, check=False)
    assert out.returncode != 0
    assert "min value 3 is greater than max value 2" in out.stderr


def test_a_resource_quota_reaches_every_member_and_sums_their_use(fed):
    fed.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "team"},
                "spec": {"hard": {"pods": "10", "count/deployments.apps": "1"}}}, NS)
    path = f"/api/v1/namespaces/{NS}/resourcequotas/team"
    for c in CLUSTERS:
        wait_for(lambda: member_object(fed, c, path), f"the ResourceQuota in {c}")
    fed.kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=4", "-n", NS)
    fed.kubectl("rollout", "status", "deploy/web", "-n", NS, "--timeout=120s")

    def summed():
        members = [member_object(fed, c, path).get("status", {}) for c in CLUSTERS]
        if any(m.get("used", {}).get("count/deployments.apps") != "1" for m in members):
            return None
        quota = json.loads(fed.kubectl("get", "quota", "team", "-n", NS, "-o", "json").stdout)
        used = quota.get("status", {}).get("used", {})
        want = sum(int(m["used"]["pods"]) for m in members)
        return want >= 4 and used.get("pods") == str(want) and \
            used.get("count/deployments.apps") == "2" and quota["status"]["hard"]["pods"] == "20"
    wait_for(summed, lambda: "the members' use summed: " + str(
        [fed.kubectl("get", "quota", "team", "-n", NS, "-o", "json").stdout] +
        [member_object(fed, c, path) for c in CLUSTERS]))
    described = fed.kubectl("describe", "quota", "team", "-n", NS).stdout
    assert re.search(r"count/deployments.apps\s+2\s+2", described), described
    # Each member enforces its copy: one Deployment each, web's.
    refused = fed["a"].kubectl("create", "deployment", "api", "--image=nginx:1.27", "-n", NS,
                               check=False)
    assert refused.returncode != 0 and "exceeded quota: team" in refused.stderr, refused.stderr
