"""Federated StatefulSets end to end (seed 002, docs/federation.md): a
`flotilla server` with three `flotilla member` clusters named as in the
seed, c1, c2 and c3, and the seed's `etcd` headless Service and `store`
StatefulSet. Each member's local StatefulSets, pods, claims and Services
are read from the member itself; the federation is driven with the real
kubectl.

One federation serves the module; each test has its own namespace.
"""

import json
import time

import pytest

from conftest import namespace_name, table, wait_for
from federation import FED_ARGS, module_federation

CLUSTERS = ["c1", "c2", "c3"]
MEMBER_ARGS = ["--nodes", "1", "--node-cpu", "100", "--node-pods", "200",
               "--pod-startup", "200ms"]
SERVER_ARGS = FED_ARGS + ["--cluster-failure-threshold", "2", "--recheck-delay", "2s",
                          "--member-change-delay", "200ms"]
LB_NEEDED = "federation.kubernetes.io/statefulset-lb-needed"
REPLICA_LIST = "federation.kubernetes.io/stateful-replica-list"
ORDER = "federation.kubernetes.io/cluster-update-order"
STS_PATH = "/apis/apps/v1/namespaces/{ns}/statefulsets"


fed = module_federation("fed-sts", {name: ({}, MEMBER_ARGS) for name in CLUSTERS}, SERVER_ARGS)


@pytest.fixture
def ns(request, fed):
    name = namespace_name(request.node.name)
    fed.create_namespace(name)
    yield name
    for c in CLUSTERS:
        fed[c].sigcont()
    for c in CLUSTERS:
        fed.wait_ready(c)
    fed.kubectl("delete", "sts,svc", "--all", "-n", name, "--wait=false", check=False)
    for c in CLUSTERS:
        fed[c].kubectl("delete", "sts,svc,pods,pvc", "--all", "-n", name, "--grace-period=0",
                       "--force", "--wait=false", check=False)


def service(name="etcd"):
    """The seed's governing headless Service."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "labels": {"app": "etcd"}},
            "spec": {"ports": [{"port": 80, "name": "store"}], "clusterIP": "None",
                     "selector": {"app": "etcd"}}}


def statefulset(replicas, name="store", annotations=None, image="etcd:3.0.17"):
    """The seed's `store` StatefulSet (apps/v1 today), with its claim."""
    meta = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta,
            "spec": {"serviceName": "etcd", "replicas": replicas,
                     "selector": {"matchLabels": {"app": "etcd"}},
                     "template": {"metadata": {"labels": {"app": "etcd"}},
                                  "spec": {"terminationGracePeriodSeconds": 0,
                                           "containers": [{
                                               "name": "etcd", "image": image,
                                               "ports": [{"containerPort": 80, "name": "store"}],
                                               "volumeMounts": [{"name": "etcd-store",
                                                                 "mountPath": "/usr/share/etcd"}]}]}},
                     "volumeClaimTemplates": [{
                         "metadata": {"name": "etcd-store"},
                         "spec": {"accessModes": ["ReadWriteOnce"],
                                  "resources": {"requests": {"storage": "1Gi"}}}}]}}


def local(fed, cluster, ns, name="store"):
    return fed[cluster].get_json(STS_PATH.format(ns=ns) + f"/{name}-{cluster}")


def layout(fed, ns, name="store"):
    """{cluster: spec.replicas of its local StatefulSet}, None where there is none."""
    return {c: (lambda s: None if s is None else s["spec"]["replicas"])(local(fed, c, ns, name))
            for c in CLUSTERS if not fed[c].stopped}


def pods(fed, cluster, ns):
    return sorted(p["metadata"]["name"] for p in fed[cluster].pods(ns, "app=etcd")
                  if p.get("status", {}).get("phase") == "Running")


def rollout_status(fed, ns, name="store", check=True):
    return fed.kubectl("rollout", "status", f"sts/{name}", "-n", ns, "--timeout=120s",
                       check=check)


def running(fed, ns, sts):
    fed.create(service(), ns)
    fed.create(sts, ns)
    rollout_status(fed, ns, sts["metadata"]["name"])


def governing(fed, ns):
    return json.loads(fed.kubectl("get", "svc", "etcd", "-n", ns, "-o", "json").stdout)


def test_the_seeds_store_gives_stable_unique_identities(fed, ns):
    running(fed, ns, statefulset(11))
    assert layout(fed, ns) == {"c1": 4, "c2": 4, "c3": 3}
    assert pods(fed, "c1", ns) == [f"store-c1-{i}" for i in range(4)]
    assert pods(fed, "c2", ns) == [f"store-c2-{i}" for i in range(4)]
    assert pods(fed, "c3", ns) == [f"store-c3-{i}" for i in range(3)]
    for c in CLUSTERS:
        claims = fed[c].get_json(f"/api/v1/namespaces/{ns}/persistentvolumeclaims")["items"]
        assert {p["metadata"]["name"] for p in claims} == \
            {f"etcd-store-store-{c}-{i}" for i in range(layout(fed, ns)[c])}
        assert all(p["status"]["phase"] == "Bound" for p in claims)
        # The headless Service is in every cluster, so pods resolve locally.
        assert fed[c].get_json(f"/api/v1/namespaces/{ns}/services/etcd")["spec"]["clusterIP"] \
            == "None"
    _, rows = table(fed.kubectl("get", "sts", "-n", ns).stdout)
    assert rows[0]["READY"] == "11/11"
    annotations = wait_for(lambda: (lambda a: a if REPLICA_LIST in a else None)(
        governing(fed, ns)["metadata"].get("annotations", {})), "the replica list")
    assert annotations[REPLICA_LIST].split(", ") == \
        [f"store-{c}-{i}" for c, n in (("c1", 4), ("c2", 4), ("c3", 3)) for i in range(n)]
    assert annotations[LB_NEEDED] == "false"


def test_fewer_replicas_than_clusters_leave_one_without(fed, ns):
    running(fed, ns, statefulset(2))
    assert layout(fed, ns) == {"c1": 1, "c2": 1, "c3": None}


def test_scaling_never_moves_a_replica(fed, ns):
    running(fed, ns, statefulset(11))
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for c in CLUSTERS
            for p in fed[c].pods(ns, "app=etcd")}
    fed.kubectl("scale", "sts", "store", "--replicas=14", "-n", ns)
    rollout_status(fed, ns)
    assert layout(fed, ns) == {"c1": 5, "c2": 5, "c3": 4}
    fed.kubectl("scale", "sts", "store", "--replicas=6", "-n", ns)
    wait_for(lambda: layout(fed, ns) == {"c1": 2, "c2": 2, "c3": 2}, "scaled down")
    rollout_status(fed, ns)
    # The replicas left are the ones that were there, in their clusters.
    for c in CLUSTERS:
        for p in fed[c].pods(ns, "app=etcd"):
            assert uids[p["metadata"]["name"]] == p["metadata"]["uid"]


def test_a_stopped_member_keeps_its_share(fed, ns):
    running(fed, ns, statefulset(11))
    fed["c2"].sigstop()
    fed.wait_not_ready("c2")
    wait_for(lambda: json.loads(fed.kubectl("get", "sts", "store", "-n", ns, "-o", "json").stdout)
             ["status"]["readyReplicas"] == 7, "the federation sees 7 ready")
    # Its replicas are not recreated elsewhere: a few rechecks (2 s) later,
    # the others have not grown.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        assert layout(fed, ns) == {"c1": 4, "c3": 3}
        time.sleep(0.5)
    fed["c2"].sigcont()
    fed.wait_ready("c2")
    rollout_status(fed, ns)
    assert layout(fed, ns) == {"c1": 4, "c2": 4, "c3": 3}


def test_every_pod_gets_one_load_balancer_in_its_cluster(fed, ns):
    running(fed, ns, statefulset(4, annotations={LB_NEEDED: "true"}))
    names = {f"store-c1-{i}" for i in range(2)} | {"store-c2-0", "store-c3-0"}
    wait_for(lambda: {s["metadata"]["name"] for s in fed.api().get(
        f"/api/v1/namespaces/{ns}/services").json()["items"]
        if s["spec"]["type"] == "LoadBalancer"} == names, "a Service per pod on the federation")
    for c in CLUSTERS:
        want = {n for n in names if n.startswith(f"store-{c}-")}
        wait_for(lambda c=c, want=want: {s["metadata"]["name"] for s in fed[c].get_json(
            f"/api/v1/namespaces/{ns}/services")["items"]
            if s["spec"]["type"] == "LoadBalancer"} == want, f"{c}'s pods' Services only")
    svc = json.loads(fed.kubectl("get", "svc", "store-c2-0", "-n", ns, "-o", "json").stdout)
    assert svc["spec"]["selector"] == {"statefulset.kubernetes.io/pod-name": "store-c2-0"}
    # Its status on the federation shows the member's load balancer.
    wait_for(lambda: json.loads(fed.kubectl("get", "svc", "store-c2-0", "-n", ns, "-o", "json")
                                .stdout)["status"].get("loadBalancer", {}).get("ingress"),
             "the member's ingress on the federation")
    assert governing(fed, ns)["metadata"]["annotations"][LB_NEEDED] == "true"
    fed.kubectl("annotate", "sts", "store", f"{LB_NEEDED}=false", "--overwrite", "-n", ns)
    wait_for(lambda: not [s for s in fed[c].get_json(f"/api/v1/namespaces/{ns}/services")["items"]
                          for c in CLUSTERS if s["spec"]["type"] == "LoadBalancer"],
             "the per-pod Services gone")


def test_a_name_too_long_for_a_cluster_is_refused(fed, ns):
    fed.create(service(), ns)
    name = "s" * 50  # "-c1" makes 53 characters
    out = fed.create(statefulset(3, name=name), ns, check=False)
    assert out.returncode != 0
    assert "c1" in out.stderr and "52" in out.stderr and "Invalid" in out.stderr


def test_a_template_rolls_out_cluster_by_cluster_with_history_and_undo(fed, ns):
    running(fed, ns, statefulset(6, annotations={ORDER: "c3"}))
    fed.kubectl("set", "image", "sts/store", "etcd=etcd:3.5", "-n", ns)
    seen = []

    def images():
        now = tuple(local(fed, c, ns)["spec"]["template"]["spec"]["containers"][0]["image"]
                    for c in CLUSTERS)
        if not seen or seen[-1] != now:
            seen.append(now)
        return now == ("etcd:3.5",) * 3

    wait_for(images, "every cluster on the new image", timeout=90)
    rollout_status(fed, ns)
    # One cluster at a time, c3 first, then c1 and c2.
    firsts = [next(i for i, s in enumerate(seen) if s[CLUSTERS.index(c)] == "etcd:3.5")
              for c in ("c3", "c1", "c2")]
    assert firsts == sorted(firsts), seen
    history = fed.kubectl("rollout", "history", "sts/store", "-n", ns).stdout
    assert "1 " in history and "2 " in history
    fed.kubectl("rollout", "undo", "sts/store", "-n", ns)
    wait_for(lambda: all(local(fed, c, ns)["spec"]["template"]["spec"]["containers"][0]["image"]
                         == "etcd:3.0.17" for c in CLUSTERS), "undone everywhere", timeout=90)
    rollout_status(fed, ns)


def test_deletion_orphans_or_cascades(fed, ns):
    running(fed, ns, statefulset(3, annotations={LB_NEEDED: "true"}))
    fed.kubectl("delete", "sts", "store", "-n", ns, "--cascade=orphan")
    wait_for(lambda: not [s for s in fed.api().get(f"/api/v1/namespaces/{ns}/services").json()
                          ["items"] if s["spec"]["type"] == "LoadBalancer"],
             "the per-pod Services gone with the StatefulSet")
    assert layout(fed, ns) == {"c1": 1, "c2": 1, "c3": 1}
    fed.create(statefulset(3, name="gone"), ns)
    rollout_status(fed, ns, "gone")
    fed.kubectl("delete", "sts", "gone", "-n", ns)
    wait_for(lambda: all(local(fed, c, ns, "gone") is None for c in CLUSTERS),
             "the local StatefulSets deleted")
