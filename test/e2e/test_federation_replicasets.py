"""Federated ReplicaSets end to end (seed 000, docs/federation.md): a
`flotilla server` with three `flotilla member` clusters a, b and c (the
seed's A, B and C), each one node whose allocatable CPU is the cluster's
capacity (every pod requests one CPU). A ReplicaSet created on the
federation becomes local ReplicaSets in the members; the tests check each
member's spec.replicas and that that many pods run there.

The seed's scenarios 1-7 are data (SCENARIOS): preferences, capacities,
clusters taken offline (SIGSTOP) and replicas already running, with the
seed's layout. The expected layout of each is what the planner gives
(`flotilla plan`, key "<namespace>/<name>"); where the seed's layout does not
depend on the order of the clusters it is also checked as written, otherwise
its numbers are.

One federation serves the module; each test has its own namespace, and
afterwards its ReplicaSets and pods are deleted, stopped members continued,
faults turned off and node capacity restored.
"""

import json
import time
from dataclasses import dataclass, field

import pytest

from conftest import namespace_name, table, wait_for
from federation import (FEDERATED_OBJECT, MANAGED_BY, PREFERENCES, flotilla, plan, replicaset,
                        module_federation)

CLUSTERS = ["a", "b", "c"]
LABELS = {"a": {"location": "eu", "tier": "gold"},
          "b": {"location": "us", "tier": "gold"},
          "c": {"location": "us", "tier": "silver"}}
FULL_CPU = "100"  # room for every scenario's 50 replicas on one node
MEMBER_ARGS = ["--nodes", "1", "--node-cpu", FULL_CPU, "--node-pods", "200",
               "--pod-startup", "100ms"]

EVEN = {"rebalance": True, "clusters": {"*": {"weight": 1}}}


fed = module_federation("fed-rs",
                        {name: (LABELS[name], MEMBER_ARGS) for name in CLUSTERS})


@pytest.fixture
def ns(request, fed):
    """A namespace on the federation and every member; afterwards the test's
    objects are deleted and the members put back as they were."""
    name = namespace_name(request.node.name)
    fed.create_namespace(name)
    yield name
    restore(fed, name)


def restore(fed, ns):
    fed.kubectl("delete", "rs", "--all", "-n", ns, "--timeout=30s", check=False)
    for member in list(fed.members.values()):
        if member.name not in CLUSTERS:
            continue
        member.sigcont()
        member.ctl("reject", "--off")
    for name in CLUSTERS:
        fed.wait_ready(name)
        member = fed[name]
        for node in member.nodes():
            if node == f"{name}-node-0":
                member.ctl("node", "set", node, "--cpu", FULL_CPU)
            else:
                member.ctl("node", "remove", node)
    fed.cleanup_namespace(ns)


def set_capacity(fed, cluster, cpus):
    """The cluster's one node gets `cpus` allocatable CPUs (= pods)."""
    fed[cluster].ctl("node", "set", f"{cluster}-node-0", "--cpu", str(cpus))


def go_offline(fed, clusters):
    for c in clusters:
        fed[c].sigstop()
    for c in clusters:
        fed.wait_not_ready(c)


def scale(fed, ns, name, replicas, preferences):
    patch = {"spec": {"replicas": replicas},
             "metadata": {"annotations": {PREFERENCES: json.dumps(preferences)}}}
    fed.kubectl("patch", "rs", name, "-n", ns, "--type", "merge", "-p", json.dumps(patch))


@dataclass
class Scenario:
    id: str
    preferences: dict
    seed: dict                   # the seed's layout; clusters it omits get 0
    capacity: dict = field(default_factory=dict)  # cluster -> pods it can run
    offline: list = field(default_factory=list)
    running_before: dict = field(default_factory=dict)  # replicas already in a cluster
    ordered: bool = True         # the seed's layout holds whatever the clusters' order


SCENARIOS = [
    Scenario("1-all-have-capacity", EVEN, {"a": 16, "b": 17, "c": 17}, ordered=False),
    Scenario("1-c-has-capacity-for-6", EVEN, {"a": 22, "b": 22, "c": 6}, capacity={"c": 6}),
    Scenario("1-b-and-c-offline", EVEN, {"a": 50}, offline=["b", "c"]),
    Scenario("2-max-2", {"rebalance": True, "clusters": {"*": {"maxReplicas": 2, "weight": 1}}},
             {"a": 2, "b": 2, "c": 2}),
    Scenario("2-min-2-weight-0", {"rebalance": True, "clusters": {"*": {"minReplicas": 2,
                                                                         "weight": 0}}},
             {"a": 2, "b": 2, "c": 2}),
    Scenario("2-min-2-max-2", {"rebalance": True, "clusters": {"*": {"minReplicas": 2,
                                                                      "maxReplicas": 2}}},
             {"a": 2, "b": 2, "c": 2}),
    Scenario("3-min-20", {"rebalance": True, "clusters": {"*": {"minReplicas": 20, "weight": 0}}},
             {"a": 20, "b": 20, "c": 10}, ordered=False),
    Scenario("4-all-have-capacity", {"rebalance": True, "clusters": {
        "*": {"weight": 1}, "c": {"maxReplicas": 20, "weight": 1}}},
        {"a": 16, "b": 17, "c": 17}, ordered=False),
    Scenario("4-b-offline", {"rebalance": True, "clusters": {
        "*": {"weight": 1}, "c": {"maxReplicas": 20, "weight": 1}}},
        {"a": 30, "c": 20}, offline=["b"]),
    Scenario("4-a-and-b-offline", {"rebalance": True, "clusters": {
        "*": {"weight": 1}, "c": {"maxReplicas": 20, "weight": 1}}},
        {"c": 20}, offline=["a", "b"]),
    Scenario("5-all-have-capacity", {"clusters": {
        "a": {"weight": 1000000}, "b": {"weight": 1}, "c": {"weight": 1}}}, {"a": 50}),
    Scenario("5-a-has-capacity-for-40", {"clusters": {
        "a": {"weight": 1000000}, "b": {"weight": 1}, "c": {"weight": 1}}},
        {"a": 40, "b": 5, "c": 5}, capacity={"a": 40}),
    Scenario("6-a-weighs-twice", {"clusters": {
        "a": {"weight": 2}, "b": {"weight": 1}, "c": {"weight": 1}}},
        {"a": 25, "b": 13, "c": 12}, ordered=False),
    Scenario("7-a-runs-20", {"rebalance": False, "clusters": {"*": {"weight": 1}}},
             {"a": 20, "b": 15, "c": 15}, running_before={"a": 20}),
    Scenario("7-a-runs-20-c-has-capacity-for-6",
             {"rebalance": False, "clusters": {"*": {"weight": 1}}},
             {"a": 22, "b": 22, "c": 6}, capacity={"c": 6}, running_before={"a": 20},
             ordered=False),
    Scenario("7-a-runs-30-c-has-capacity-for-6",
             {"rebalance": False, "clusters": {"*": {"weight": 1}}},
             {"a": 30, "b": 14, "c": 6}, capacity={"c": 6}, running_before={"a": 30}),
]


@pytest.mark.parametrize("case", SCENARIOS, ids=lambda c: c.id)
def test_seed_scenario(fed, ns, case):
    online = [c for c in CLUSTERS if c not in case.offline]
    expected = plan(50, online, f"{ns}/web", case.preferences, current=case.running_before,
                    capacity=case.capacity)
    seed = {c: case.seed.get(c, 0) for c in online}
    if case.ordered:
        assert expected == seed, "the planner disagrees with the seed"
    else:
        assert sorted(expected.values()) == sorted(seed.values())

    for cluster, cpus in case.capacity.items():
        set_capacity(fed, cluster, cpus)
    go_offline(fed, case.offline)
    if case.running_before:
        # Replicas already running: the ReplicaSet first goes where they are.
        (where, count), = case.running_before.items()
        fed.create(replicaset("web", count, {"clusters": {where: {"weight": 1}}}), ns)
        fed.wait_layout(ns, "web", case.running_before)
        scale(fed, ns, "web", 50, case.preferences)
    else:
        fed.create(replicaset("web", 50, case.preferences), ns)

    # A cluster short of capacity may keep a few pods pending there as
    # probes, on top of what it runs.
    fed.wait_layout(ns, "web", expected, probes=list(case.capacity))


def test_local_replicasets_are_labelled_and_status_sums_the_members(fed, ns):
    fed.create(replicaset("web", 6, EVEN), ns)
    expected = plan(6, CLUSTERS, f"{ns}/web", EVEN)
    fed.wait_layout(ns, "web", expected)
    for c in CLUSTERS:
        local = fed[c].local_rs(ns, "web")
        assert local["metadata"]["labels"][MANAGED_BY] == "flotilla"
        assert local["metadata"]["annotations"][FEDERATED_OBJECT] == f"{ns}/web"
        assert local["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"

    def summed():
        rs = fed.get_rs(ns, "web")
        status = rs.get("status", {})
        want = {"replicas": 6, "readyReplicas": 6, "availableReplicas": 6,
                "fullyLabeledReplicas": 6}
        if any(status.get(k) != v for k, v in want.items()):
            return None
        if status.get("observedGeneration") != rs["metadata"]["generation"]:
            return None
        return rs
    wait_for(summed, "the federated status summing the members", 30)
    clusters = wait_for(lambda: (lambda s: s if all(
        s.get(c, {}).get("ready") == expected[c] for c in CLUSTERS) else None)(
        fed.rs_status(ns, "web").get("clusters", {})), "the status annotation", 30)
    for c in CLUSTERS:
        assert clusters[c]["planned"] == expected[c]
        assert clusters[c]["current"] == expected[c]
        assert clusters[c]["unschedulable"] == 0
        assert "estimatedCapacity" not in clusters[c]
    _, rows = table(fed.kubectl("get", "rs", "web", "-n", ns).stdout)
    assert (rows[0]["DESIRED"], rows[0]["CURRENT"], rows[0]["READY"]) == ("6", "6", "6")
    reasons = [e["reason"] for e in fed.events(ns, "web")]
    assert "CreateInCluster" in reasons

    # A scale on the federation reaches the members.
    fed.kubectl("scale", "rs", "web", "-n", ns, "--replicas", "9")
    fed.wait_layout(ns, "web", plan(9, CLUSTERS, f"{ns}/web", EVEN))
    fed.wait_event(ns, "web", "UpdateInCluster")


def test_invalid_preferences_are_rejected_with_422(fed, ns):
    bad = replicaset("web", 3, {"clusters": {"a": {"minReplicas": 5, "maxReplicas": 2}}})
    out = fed.create(bad, ns, check=False)
    assert out.returncode != 0
    assert "is invalid" in out.stderr and "maxReplicas" in out.stderr, out.stderr
    raw = fed.api().post(f"/apis/apps/v1/namespaces/{ns}/replicasets", json=bad)
    assert raw.status_code == 422, raw.text
    assert raw.json()["reason"] == "Invalid"

    fed.create(replicaset("web", 3, EVEN), ns)
    patch = {"metadata": {"annotations": {PREFERENCES: '{"clusters": {"*": {"weight": -1}}}'}}}
    out = fed.kubectl("patch", "rs", "web", "-n", ns, "--type", "merge", "-p", json.dumps(patch),
                      check=False)
    assert out.returncode != 0 and "weight" in out.stderr, out.stderr
    kept = fed.get_rs(ns, "web")["metadata"]["annotations"][PREFERENCES]
    assert json.loads(kept) == EVEN


def test_cluster_selector_is_honoured(fed, ns):
    selector = [{"key": "location", "operator": "In", "values": ["us"]}]
    fed.create(replicaset("web", 6, EVEN, selector=selector), ns)
    fed.wait_layout(ns, "web", plan(6, ["b", "c"], f"{ns}/web", EVEN))
    assert fed["a"].local_rs(ns, "web") is None

    # The selector changed: a now qualifies and b does not.
    selector = [{"key": "tier", "operator": "NotIn", "values": ["gold"]},
                {"key": "location", "operator": "Exists"}]
    patch = {"metadata": {"annotations": {
        "federation.alpha.kubernetes.io/cluster-selector": json.dumps(selector)}}}
    fed.kubectl("patch", "rs", "web", "-n", ns, "--type", "merge", "-p", json.dumps(patch))
    fed.wait_layout(ns, "web", {"c": 6})


def test_e1_rejected_create_moves_replicas_elsewhere_until_it_succeeds(fed, ns):
    fed["b"].ctl("reject", "--verb", "create", "--resource", "replicasets", "-n", ns)
    fed.create(replicaset("web", 9, EVEN), ns)
    failed = fed.wait_event(ns, "web", "FailedCreateInCluster")
    assert failed[0]["type"] == "Warning"
    assert "b" in failed[0]["message"]
    # b's replicas go to a and c.
    fed.wait_layout(ns, "web", plan(9, ["a", "c"], f"{ns}/web", EVEN), timeout=60)
    assert fed["b"].local_rs(ns, "web") is None

    fed["b"].ctl("reject", "--off")
    fed.wait_layout(ns, "web", plan(9, CLUSTERS, f"{ns}/web", EVEN), timeout=60)


def test_e2_an_unmanaged_local_replicaset_is_overwritten(fed, ns):
    own = replicaset("web", 1)
    own["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.25"
    fed["a"].kubectl("create", "-n", ns, "-f", "-", input=json.dumps(own))
    old = wait_for(lambda: [p for p in fed["a"].pods(ns, "app=web") if p["status"].get(
        "phase") == "Running"], "a's own pod running")[0]
    old_uid = fed["a"].local_rs(ns, "web")["metadata"]["uid"]

    fed.create(replicaset("web", 9, EVEN), ns)
    expected = plan(9, CLUSTERS, f"{ns}/web", EVEN)
    fed.wait_layout(ns, "web", expected)
    local = fed["a"].local_rs(ns, "web")
    assert local["metadata"]["labels"][MANAGED_BY] == "flotilla"
    assert local["metadata"]["annotations"][FEDERATED_OBJECT] == f"{ns}/web"
    assert local["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert local["metadata"]["uid"] == old_uid  # overwritten, not replaced
    overwrite = fed.wait_event(ns, "web", "OverwriteInCluster")
    assert overwrite[0]["type"] == "Warning"
    # The old ReplicaSet's pod is left intact and counts for the new one.
    uids = [p["metadata"]["uid"] for p in fed["a"].pods(ns, "app=web")]
    assert old["metadata"]["uid"] in uids


def test_e3_matching_pods_are_adopted(fed, ns):
    template = replicaset("web", 1)["spec"]["template"]
    for i in range(2):
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": dict(template["metadata"], name=f"stray-{i}"),
               "spec": template["spec"]}
        fed["a"].kubectl("create", "-n", ns, "-f", "-", input=json.dumps(pod))
    wait_for(lambda: fed["a"].running_pods(ns, "app=web") == 2, "a's stray pods running")
    strays = {p["metadata"]["uid"] for p in fed["a"].pods(ns, "app=web")}

    fed.create(replicaset("web", 9, EVEN), ns)
    expected = plan(9, CLUSTERS, f"{ns}/web", EVEN)
    assert expected["a"] >= 2
    fed.wait_layout(ns, "web", expected)
    local_uid = fed["a"].local_rs(ns, "web")["metadata"]["uid"]
    pods = {p["metadata"]["uid"]: p for p in fed["a"].pods(ns, "app=web")}
    assert strays <= set(pods)
    for uid in strays:
        owners = pods[uid]["metadata"].get("ownerReferences", [])
        assert [o["uid"] for o in owners] == [local_uid]


def test_e4_a_local_replicaset_deleted_by_hand_is_recreated(fed, ns):
    fed.create(replicaset("web", 9, EVEN), ns)
    expected = plan(9, CLUSTERS, f"{ns}/web", EVEN)
    fed.wait_layout(ns, "web", expected)
    old_uid = fed["b"].local_rs(ns, "web")["metadata"]["uid"]
    pods = {p["metadata"]["uid"] for p in fed["b"].pods(ns, "app=web")}

    # --wait=false: kubectl's wait reads the object, then lists by name and
    # waits for a DELETED event; when the federation recreates the RS between
    # those two reads the list finds the new one and kubectl waits forever.
    fed["b"].kubectl("delete", "rs", "web", "-n", ns, "--cascade=orphan", "--wait=false")
    recreated = wait_for(lambda: (lambda rs: rs if rs and rs["metadata"]["uid"] != old_uid
                                  else None)(fed["b"].local_rs(ns, "web")),
                         "b's local ReplicaSet recreated")
    assert recreated["spec"]["replicas"] == expected["b"]
    fed.wait_layout(ns, "web", expected)
    # The pods left behind were adopted, none replaced.
    after = {p["metadata"]["uid"]: p for p in fed["b"].pods(ns, "app=web")}
    assert set(after) == pods
    for p in after.values():
        assert [o["uid"] for o in p["metadata"]["ownerReferences"]] == [
            recreated["metadata"]["uid"]]


def test_e4_without_rebalance_a_recreated_local_replicaset_gets_its_share_back(fed, ns):
    keep = {"rebalance": False, "clusters": {"a": {"weight": 2}, "b": {"weight": 1},
                                             "c": {"weight": 1}}}
    fed.create(replicaset("web", 40, keep), ns)
    expected = plan(40, CLUSTERS, f"{ns}/web", keep)
    assert expected == {"a": 20, "b": 10, "c": 10}
    fed.wait_layout(ns, "web", expected)
    wait_for(lambda: fed.rs_status(ns, "web").get("clusters", {}).get("a", {}).get("planned")
             == 20, "a's share in the status annotation")
    old_uid = fed["a"].local_rs(ns, "web")["metadata"]["uid"]
    pods = {p["metadata"]["uid"] for p in fed["a"].pods(ns, "app=web")}
    fed["a"].kubectl("delete", "rs", "web", "-n", ns, "--cascade=orphan", "--wait=false")
    recreated = wait_for(lambda: (lambda rs: rs if rs and rs["metadata"]["uid"] != old_uid
                                  else None)(fed["a"].local_rs(ns, "web")),
                         "a's local ReplicaSet recreated")
    assert recreated["spec"]["replicas"] == 20
    fed.wait_layout(ns, "web", expected)
    assert {p["metadata"]["uid"] for p in fed["a"].pods(ns, "app=web")} == pods
    changes = [e["message"] for e in fed.events(ns, "web") if e["reason"] == "PlacementChanged"]
    assert changes == ["Replicas per cluster: a=20, b=10, c=10 (were none)"], changes


def test_unschedulable_replicas_move_and_come_back_with_capacity(fed, ns):
    set_capacity(fed, "c", 2)
    fed.create(replicaset("web", 9, EVEN), ns)
    limited = plan(9, CLUSTERS, f"{ns}/web", EVEN, capacity={"c": 2})
    fed.wait_layout(ns, "web", limited, probes=["c"], timeout=60)
    # Between probes c runs exactly its capacity and nothing waits there:
    # the placement sums to the 9 asked for.
    def settled():
        status = fed.rs_status(ns, "web")["clusters"]
        c = status.get("c", {})
        if c.get("planned") != 2 or c.get("unschedulable") != 0:
            return None
        return status if sum(s.get("planned", 0) for s in status.values()) == 9 else None
    status = wait_for(settled, "c at its capacity of 2, 9 placed", timeout=60)
    assert status["c"]["estimatedCapacity"] == 2

    # Room again: the next probe's pods schedule and c gets its share back.
    fed["c"].ctl("node", "add", "--cpu", "10")
    fed.wait_layout(ns, "web", plan(9, CLUSTERS, f"{ns}/web", EVEN), timeout=60)
    wait_for(lambda: "estimatedCapacity" not in fed.rs_status(ns, "web")["clusters"]["c"],
             "c's capacity estimate dropped")


def test_a_member_quota_that_refuses_pods_moves_replicas_elsewhere(fed, ns):
    # Member c's namespace allows two pods: its ReplicaSet controller's
    # creates past them are refused (403 exceeded quota), and the federation
    # counts the pods never made as pods that wait, so after the
    # unschedulable threshold c is full at 2 and the rest run elsewhere.
    def quota():
        return fed["c"].kubectl("create", "quota", "two-pods", "--hard=pods=2", "-n", ns,
                                check=False).returncode == 0
    wait_for(quota, f"a ResourceQuota in member c's {ns}")
    fed.create(replicaset("web", 9, EVEN), ns)
    events = wait_for(lambda: [e for e in fed["c"].get_json(f"/api/v1/namespaces/{ns}/events")[
        "items"] if e["reason"] == "FailedCreate"], "c's ReplicaSet refused by the quota")
    assert "exceeded quota: two-pods" in events[0]["message"], events[0]
    limited = plan(9, CLUSTERS, f"{ns}/web", EVEN, capacity={"c": 2})
    fed.wait_layout(ns, "web", limited, probes=["c"], timeout=60)
    assert fed["c"].running_pods(ns, "app=web") == 2


def lose_and_bring_back_empty(fed, ns, cluster):
    """Kills `cluster`'s member, waits until its replicas run elsewhere, and
    starts it again on the same data dir and port, empty (memory storage):
    a cluster that comes back without the replicas it ran."""
    fed[cluster].kill9()
    fed[cluster].stopped = True
    fed.wait_not_ready(cluster)
    rest = [c for c in CLUSTERS if c != cluster]
    prefs = json.loads(fed.get_rs(ns, "web")["metadata"]["annotations"][PREFERENCES])
    moved = plan(9, rest, f"{ns}/web", prefs,
                 current={c: n for c, n in fed.layout(ns, "web").items() if c in rest})
    moved = fed.wait_layout(ns, "web", moved)["spec"]
    fed[cluster].restart()
    fed[cluster].create_namespace(ns)
    fed.wait_ready(cluster)
    return moved


def test_a_cluster_returning_with_rebalance_gets_its_share_back(fed, ns):
    fed.create(replicaset("web", 9, EVEN), ns)
    fed.wait_layout(ns, "web", plan(9, CLUSTERS, f"{ns}/web", EVEN))
    lose_and_bring_back_empty(fed, ns, "b")
    fed.wait_layout(ns, "web", plan(9, CLUSTERS, f"{ns}/web", EVEN))


def test_a_cluster_returning_without_rebalance_gets_no_running_replicas(fed, ns):
    keep = {"rebalance": False, "clusters": {"*": {"weight": 1}}}
    fed.create(replicaset("web", 9, keep), ns)
    fed.wait_layout(ns, "web", plan(9, CLUSTERS, f"{ns}/web", keep))
    moved = lose_and_bring_back_empty(fed, ns, "b")
    expected = plan(9, CLUSTERS, f"{ns}/web", keep, current=moved)
    assert expected["b"] == 0
    # The replicas that run in a and c stay there. Nothing is awaited for a
    # change that must not come: watch for 8 s after b is Ready again, which
    # covers the check b's return triggers (its member caches synced) and a
    # few rechecks (every 2 s). b, with nothing planned and no local copy,
    # has no entry in the status annotation.
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        fed.wait_layout(ns, "web", expected, timeout=1)
        time.sleep(0.5)
    assert "b" not in fed.rs_status(ns, "web").get("clusters", {})


def test_a_newly_joined_cluster_gets_replicas(fed, ns, tmp_path):
    fed.create(replicaset("web", 8, EVEN), ns)
    fed.wait_layout(ns, "web", plan(8, CLUSTERS, f"{ns}/web", EVEN))
    d = fed.add_member("d", {"location": "eu"}, MEMBER_ARGS, namespaces=[ns])
    try:
        fed.wait_layout(ns, "web", plan(8, CLUSTERS + ["d"], f"{ns}/web", EVEN))
    finally:
        out = flotilla("unjoin", "d", "--kubeconfig", fed.server.kubeconfig)
        d.terminate()
        del fed.members["d"]
        assert out.returncode == 0, out.stderr

