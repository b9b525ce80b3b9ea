"""Location policy end to end (docs/federation.md, "Cordon" and
"Applications"), over three `flotilla member` clusters.

Cordon: `kubectl flotilla cordon` (the real kubectl running the plugin)
marks a Cluster unschedulable and `kubectl get clusters` shows it; a new
federated ReplicaSet stays out of the cordoned cluster, one already there
keeps its replicas there and grows elsewhere; `kubectl flotilla uncordon`
lets the rebalancing ones take their share back.

Applications: the workloads of one application must agree on its
location-affinity class, and the class is one of three (422 otherwise).
"""

import pytest

from conftest import table, wait_for
from federation import APPLICATION, LOCATION_AFFINITY, cluster, condition, plugin, replicaset, \
    start_federation

CLUSTERS = ["a", "b", "c"]
MEMBER_ARGS = ["--nodes", "1", "--node-cpu", "40", "--pod-startup", "100ms"]
REBALANCE = {"rebalance": True, "clusters": {"*": {"weight": 1}}}


@pytest.fixture
def fed(tmp_path):
    federation = start_federation(tmp_path, {c: ({"zone": c}, MEMBER_ARGS) for c in CLUSTERS})
    try:
        federation.create_namespace("shop")
        yield federation
    finally:
        federation.close()


def schedulable_is(fed, name, status):
    obj = cluster(fed.server, name)
    return obj if condition(obj, "Schedulable").get("status") == status else None


def scheduling(fed):
    headers, rows = table(fed.kubectl("get", "clusters").stdout)
    assert "SCHEDULING" in headers
    return {row["NAME"]: row["SCHEDULING"] for row in rows}


def test_a_cordoned_cluster_gets_nothing_new_until_uncordoned(fed):
    fed.create(replicaset("old", 6, preferences=REBALANCE), "shop")
    fed.wait_layout("shop", "old", {"a": 2, "b": 2, "c": 2})
    assert scheduling(fed) == {"a": "Enabled", "b": "Enabled", "c": "Enabled"}

    out = plugin(fed, "cordon", "b")
    assert out.stdout.strip() == "cluster.federation/b cordoned"
    assert cluster(fed.server, "b")["spec"]["unschedulable"] is True
    assert plugin(fed, "cordon", "b").stdout.strip() == "cluster.federation/b already cordoned"
    assert scheduling(fed) == {"a": "Enabled", "b": "Disabled", "c": "Enabled"}
    # The federation's controllers see the cordon once the cluster
    # controller says so.
    obj = wait_for(lambda: schedulable_is(fed, "b", "False"), "b Schedulable False")
    assert condition(obj, "Schedulable")["reason"] == "ClusterCordoned"

    # New: none in b. Already there: keeps its 2, grows in a and c.
    fed.create(replicaset("new", 6, preferences=REBALANCE), "shop")
    fed.kubectl("scale", "rs", "old", "-n", "shop", "--replicas", "12")
    fed.wait_layout("shop", "new", {"a": 3, "c": 3})
    fed.wait_layout("shop", "old", {"a": 5, "b": 2, "c": 5})
    assert fed["b"].rs_replicas("shop", "new") is None

    out = plugin(fed, "uncordon", "b")
    assert out.stdout.strip() == "cluster.federation/b uncordoned"
    assert "unschedulable" not in cluster(fed.server, "b")["spec"]
    wait_for(lambda: schedulable_is(fed, "b", "True"), "b Schedulable True")
    fed.wait_layout("shop", "new", {"a": 2, "b": 2, "c": 2})
    fed.wait_layout("shop", "old", {"a": 4, "b": 4, "c": 4})


def test_cordon_of_an_unknown_cluster_is_a_clear_error(fed):
    out = plugin(fed, "cordon", "nope", check=False)
    assert out.returncode != 0
    assert 'clusters.federation "nope" not found' in out.stderr


def application(obj, app, cls=None):
    obj["metadata"].setdefault("labels", {})[APPLICATION] = app
    if cls is not None:
        obj["metadata"].setdefault("annotations", {})[LOCATION_AFFINITY] = cls
    return obj


def test_the_workloads_of_an_application_agree_on_its_class(fed):
    fed.create(application(replicaset("web", 2), "shop", "preferentially-coupled"), "shop")
    # The admission reads the federation's caches: wait until the
    # controllers have seen web (they write its status).
    wait_for(lambda: (fed.get_rs("shop", "web") or {}).get("status", {}).get(
        "observedGeneration"), "web observed")
    out = fed.create(application(replicaset("cache", 1), "shop", "strictly-coupled"), "shop",
                     check=False)
    assert out.returncode != 0
    assert "is invalid" in out.stderr
    assert 'must agree with the other workloads of application "shop": ReplicaSet "web" ' \
           'is preferentially-coupled' in out.stderr
    # No class is strictly-decoupled: it disagrees too.
    out = fed.create(application(replicaset("cache", 1), "shop"), "shop", check=False)
    assert out.returncode != 0 and 'ReplicaSet "web" is preferentially-coupled' in out.stderr
    fed.create(application(replicaset("cache", 1), "shop", "preferentially-coupled"), "shop")
    out = fed.create(application(replicaset("odd", 1), "other", "coupled"), "shop", check=False)
    assert out.returncode != 0
    assert "Unsupported value: \"coupled\"" in out.stderr
    assert "strictly-decoupled" in out.stderr
