"""Federated HPAs end to end (seed 004, docs/federation.md): a `flotilla
server` with three `flotilla member` clusters a, b and c, the real kubectl,
and load simulated in one member with `flotilla member ctl demand`.

An HPA created on the federation becomes a local HPA in each chosen member
with its share of minReplicas and maxReplicas; the local HPAs scale their
own clusters; the federation moves max to the cluster whose HPA is at its
ceiling, and gives it back when the load is gone. The members run their
HPAs every second and scale down at once (no stabilization window), and
the federation leaves a cluster whose share changed alone for 3 s, so
that the suite takes a minute or two, not a quarter of an hour.

What the members do is read from the members themselves: their local HPAs
(spec and status) and local Deployments. One federation serves the module;
each test has its own namespace.
"""

import json
import re

import pytest

from conftest import namespace_name, table, wait_for
from federation import FED_ARGS, module_federation

CLUSTERS = ["a", "b", "c"]
MEMBER_ARGS = ["--nodes", "1", "--node-cpu", "100", "--node-pods", "200",
               "--pod-startup", "200ms", "--hpa-sync-period", "1s",
               "--hpa-downscale-stabilization", "0s"]
SERVER_ARGS = FED_ARGS + ["--cluster-failure-threshold", "2", "--recheck-delay", "2s",
                          "--member-change-delay", "200ms", "--unschedulable-threshold", "3s",
                          "--hpa-freeze-window", "3s"]
TARGET_LIST = "federation.kubernetes.io/hpa-target-cluster-list"
HPA_STATUS = "federation.kubernetes.io/hpa-status"
DEPLOY_PATH = "/apis/apps/v1/namespaces/{ns}/deployments"
HPA_PATH = "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers"
TIMEOUT = 90
WRITES = re.compile(
    r'^flotilla_federation_replica_count_writes_total\{kind="Deployment",[^}]*\} (\S+)$', re.M)


fed = module_federation("fed-hpa", {name: ({}, MEMBER_ARGS) for name in CLUSTERS}, SERVER_ARGS)


@pytest.fixture
def ns(request, fed):
    name = namespace_name(request.node.name)
    fed.create_namespace(name)
    yield name
    for c in CLUSTERS:
        fed[c].sigcont()
    if not fed.server.running():
        fed.restart_server()
    for c in CLUSTERS:
        fed.wait_ready(c)
    fed.kubectl("delete", "hpa,deploy", "--all", "-n", name, "--wait=false", check=False)
    for c in CLUSTERS:
        fed[c].kubectl("delete", "hpa,deploy,rs,pods", "--all", "-n", name, "--grace-period=0",
                       "--force", "--wait=false", check=False)


def deployment(name, replicas):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"terminationGracePeriodSeconds": 0,
                                           "containers": [{"name": "app", "image": "nginx",
                                                           "resources": {"requests":
                                                                         {"cpu": "100m"}}}]}}}}


def autoscale(fed, ns, minimum, maximum, name="web"):
    fed.kubectl("autoscale", "deployment", name, "-n", ns, "--cpu-percent=50",
                f"--min={minimum}", f"--max={maximum}")


def local_hpa(fed, cluster, ns, name="web"):
    return fed[cluster].get_json(HPA_PATH.format(ns=ns) + "/" + name)


def local_deployment(fed, cluster, ns, name="web"):
    return fed[cluster].get_json(DEPLOY_PATH.format(ns=ns) + "/" + name)


def shares(fed, ns, clusters=CLUSTERS, name="web"):
    """{cluster: (min, max)} of the local HPAs; None where there is none."""
    out = {}
    for c in clusters:
        h = local_hpa(fed, c, ns, name)
        out[c] = None if h is None else (h["spec"].get("minReplicas", 1), h["spec"]["maxReplicas"])
    return out


def settled_shares(fed, ns, attempts=100):
    """shares() read until two reads in a row agree. The local HPAs are read
    one cluster after another, so a read that overlaps the federation's
    writes can mix one cluster's old share with another's new one: a state
    that never existed, which would break the sums below by timing alone."""
    last = shares(fed, ns)
    for _ in range(attempts):
        now = shares(fed, ns)
        if now == last:
            return now
        last = now
    return last


def local_replicas(fed, ns, clusters=CLUSTERS, name="web"):
    """{cluster: (spec.replicas, readyReplicas)} of the local Deployments."""
    out = {}
    for c in clusters:
        d = local_deployment(fed, c, ns, name)
        out[c] = None if d is None else (d["spec"]["replicas"],
                                         d.get("status", {}).get("readyReplicas", 0))
    return out


def federated(fed, path):
    response = fed.api().get(path, timeout=10)
    return response.json() if response.status_code == 200 else None


def fed_deployment(fed, ns, name="web"):
    return federated(fed, DEPLOY_PATH.format(ns=ns) + "/" + name)


def fed_hpa(fed, ns, name="web"):
    return federated(fed, HPA_PATH.format(ns=ns) + "/" + name)


def target_list(fed, ns, name="web"):
    d = fed_deployment(fed, ns, name) or {}
    text = d.get("metadata", {}).get("annotations", {}).get(TARGET_LIST)
    return json.loads(text) if text else None


def replica_writes(fed):
    """What the federation wrote to local Deployments' spec.replicas, in all."""
    return sum(float(v) for v in WRITES.findall(fed.api().get("/metrics", timeout=10).text))


def events(fed, ns, reason, kind="HorizontalPodAutoscaler"):
    out = fed.kubectl("get", "events", "-n", ns, "-o", "json")
    return [e["message"] for e in json.loads(out.stdout)["items"]
            if e["reason"] == reason and e["involvedObject"]["kind"] == kind]


def sums_hold(s, minimum, maximum):
    """The local shares add up to the federated ones and none has max < min."""
    held = [v for v in s.values() if v is not None]
    return (sum(v[0] for v in held) == minimum and sum(v[1] for v in held) == maximum
            and all(v[1] >= v[0] >= 1 for v in held))


def start(fed, ns, replicas, minimum, maximum):
    fed.apply(deployment("web", replicas), ns)
    wait_for(lambda: all(v is not None and v[1] >= 1 for v in local_replicas(fed, ns).values()),
             "a ready pod in every cluster", TIMEOUT)
    autoscale(fed, ns, minimum, maximum)
    wait_for(lambda: target_list(fed, ns) is not None, "the HPA's clusters on the Deployment",
             TIMEOUT)


def test_min_and_max_are_shared_and_kubectl_shows_the_federated_hpa(fed, ns):
    start(fed, ns, 3, 3, 12)
    wait_for(lambda: shares(fed, ns) == {"a": (1, 4), "b": (1, 4), "c": (1, 4)},
             "1/4 in every cluster", TIMEOUT)
    local = local_hpa(fed, "a", ns)
    assert local["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                               "name": "web"}
    assert local["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 50
    wait_for(lambda: target_list(fed, ns) == {"hpa": "web", "clusters": CLUSTERS},
             "the three clusters on the Deployment", TIMEOUT)

    def row():
        headers, rows = table(fed.kubectl("get", "hpa", "-n", ns).stdout)
        assert headers == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
        return rows[0]
    # No load: 0% of the requests, 3 replicas (each local HPA's min).
    got = wait_for(lambda: (lambda r: r if r["TARGETS"] == "cpu: 0%/50%" and r["REPLICAS"] == "3"
                            else None)(row()), "the federated status in kubectl get hpa", TIMEOUT)
    assert (got["REFERENCE"], got["MINPODS"], got["MAXPODS"]) == ("Deployment/web", "3", "12")
    breakdown = json.loads(fed_hpa(fed, ns)["metadata"]["annotations"][HPA_STATUS])
    assert sorted(breakdown["clusters"]) == CLUSTERS
    # Events are written in the background.
    wait_for(lambda: "SharesChanged" in fed.kubectl("describe", "hpa", "web", "-n", ns).stdout,
             "the SharesChanged event in kubectl describe hpa", TIMEOUT)
    wait_for(lambda: events(fed, ns, "PlacementByHPA", kind="Deployment"),
             "the PlacementByHPA event on the Deployment", TIMEOUT)


def test_a_small_min_places_the_hpa_and_the_target_in_that_many_clusters(fed, ns):
    start(fed, ns, 3, 2, 9)
    wait_for(lambda: sorted(v for v in shares(fed, ns).values() if v) == [(1, 4), (1, 5)],
             "HPAs in exactly two clusters", TIMEOUT)
    chosen = sorted(c for c, v in shares(fed, ns).items() if v)
    wait_for(lambda: target_list(fed, ns)["clusters"] == chosen,
             "the HPA's two clusters on the Deployment", TIMEOUT)
    # The target runs there and nowhere else.
    wait_for(lambda: sorted(c for c, v in local_replicas(fed, ns).items() if v) == chosen,
             "the Deployment only in the HPA's clusters", TIMEOUT)


def test_load_in_one_cluster_moves_max_there_and_back(fed, ns):
    start(fed, ns, 3, 3, 12)
    wait_for(lambda: shares(fed, ns) == {"a": (1, 4), "b": (1, 4), "c": (1, 4)},
             "1/4 in every cluster", TIMEOUT)
    writes = replica_writes(fed)
    # 2 CPUs of demand in a: 2000% of 100m requests against a 50% target.
    fed["a"].ctl("demand", "deployment/web", "-n", ns, "2000m")
    seen = []

    def a_past_its_first_share():
        s = settled_shares(fed, ns)
        seen.append(s)
        assert sums_hold(s, 3, 12), s
        r = local_replicas(fed, ns)
        return r["a"] is not None and r["a"][0] > 4 and r["a"][1] > 4
    wait_for(a_past_its_first_share, "a to run more than its first share of 4", TIMEOUT)
    # Moved in one step, from both others, as far as they could give.
    wait_for(lambda: shares(fed, ns) == {"a": (1, 10), "b": (1, 1), "c": (1, 1)},
             "max 10 in a", TIMEOUT)
    wait_for(lambda: local_replicas(fed, ns)["a"] == (10, 10), "10 ready pods in a", TIMEOUT)
    assert all(sums_hold(s, 3, 12) for s in seen), seen
    wait_for(lambda: any("to cluster a" in m for m in events(fed, ns, "MaxReplicasMoved")),
             "the MaxReplicasMoved event", TIMEOUT)
    # The federated Deployment follows the sum; the federation never wrote
    # a local replica count.
    wait_for(lambda: fed_deployment(fed, ns)["spec"]["replicas"] == 12,
             "the federated Deployment's replicas to follow the sum", TIMEOUT)
    assert replica_writes(fed) == writes

    def limited():
        status = fed_hpa(fed, ns).get("status", {})
        cond = [c for c in status.get("conditions", []) if c["type"] == "ScalingLimited"]
        return (status.get("desiredReplicas") == 12 and cond and
                (cond[0]["status"], cond[0]["reason"]) == ("True", "TooManyReplicas"))
    wait_for(limited, "the federated HPA's status: 12 desired, ScalingLimited", TIMEOUT)

    # The load is gone: a scales in, and the shares go back.
    fed["a"].ctl("demand", "deployment/web", "-n", ns, "0")
    wait_for(lambda: shares(fed, ns) == {"a": (1, 4), "b": (1, 4), "c": (1, 4)},
             "the shares back to 1/4", TIMEOUT)
    assert replica_writes(fed) == writes


def test_a_stopped_members_share_goes_to_the_others_and_comes_back(fed, ns):
    start(fed, ns, 3, 3, 12)
    wait_for(lambda: shares(fed, ns) == {"a": (1, 4), "b": (1, 4), "c": (1, 4)},
             "1/4 in every cluster", TIMEOUT)
    fed["c"].sigstop()
    fed.wait_not_ready("c")
    s = wait_for(lambda: (lambda s: s if sums_hold(s, 3, 12) else None)(
        shares(fed, ns, ["a", "b"])), "a and b to hold the federated min and max", TIMEOUT)
    assert sorted(s.values()) == [(1, 6), (2, 6)], s
    fed["c"].sigcont()
    fed.wait_ready("c")
    wait_for(lambda: shares(fed, ns) == {"a": (1, 4), "b": (1, 4), "c": (1, 4)},
             "c's share back", TIMEOUT)


def test_the_local_hpas_scale_while_the_federation_is_down(fed, ns):
    start(fed, ns, 3, 3, 12)
    wait_for(lambda: shares(fed, ns) == {"a": (1, 4), "b": (1, 4), "c": (1, 4)},
             "1/4 in every cluster", TIMEOUT)
    fed.kill_server()
    fed["b"].ctl("demand", "deployment/web", "-n", ns, "2000m")
    wait_for(lambda: local_replicas(fed, ns)["b"] == (4, 4), "b's HPA to scale to its max of 4",
             TIMEOUT)
    fed.restart_server()
    for c in CLUSTERS:
        fed.wait_ready(c)
    # Back, the federation takes the members as it finds them: b keeps its
    # pods, and as b is at its ceiling it gets the max the others spare.
    wait_for(lambda: shares(fed, ns)["b"] == (1, 10), "max 10 in b", TIMEOUT)
    wait_for(lambda: local_replicas(fed, ns)["b"] == (10, 10), "10 ready pods in b", TIMEOUT)
    wait_for(lambda: sums_hold(settled_shares(fed, ns), 3, 12), "the shares to add up", TIMEOUT)


def test_deleting_the_hpa_hands_placement_back(fed, ns):
    start(fed, ns, 3, 3, 12)
    wait_for(lambda: shares(fed, ns) == {"a": (1, 4), "b": (1, 4), "c": (1, 4)},
             "1/4 in every cluster", TIMEOUT)
    pods = {c: sorted(p["metadata"]["uid"] for p in fed[c].pods(ns, "app=web"))
            for c in CLUSTERS}
    fed.kubectl("delete", "hpa", "web", "-n", ns)
    wait_for(lambda: shares(fed, ns) == {"a": None, "b": None, "c": None},
             "the local HPAs gone", TIMEOUT)
    wait_for(lambda: target_list(fed, ns) is None, "the HPA's clusters off the Deployment",
             TIMEOUT)
    wait_for(lambda: events(fed, ns, "PlacementByPreferences", kind="Deployment"),
             "the PlacementByPreferences event on the Deployment", TIMEOUT)
    # Its own preferences place it again: the pods that fit stay.
    wait_for(lambda: local_replicas(fed, ns) == {"a": (1, 1), "b": (1, 1), "c": (1, 1)},
             "one pod per cluster", TIMEOUT)
    assert {c: sorted(p["metadata"]["uid"] for p in fed[c].pods(ns, "app=web"))
            for c in CLUSTERS} == pods
