"""Failover of federated ReplicaSets end to end (seed 000, CUJ2; seed 003):
three `flotilla member` clusters and 30 replicas. A member lost (SIGSTOP or
SIGKILL) has its replicas run by the other two; the time that takes is
printed, not asserted. The control plane lost (SIGKILL of `flotilla server`)
leaves the members' local ReplicaSets and pods alone, and the restarted
server takes them over again without churn: no local ReplicaSet recreated
(same uid, same spec), no pod replaced or restarted (same uids and
restartCounts).
"""

import time

import pytest

from federation import FEDERATED_OBJECT, plan, replicaset, start_federation

CLUSTERS = ["a", "b", "c"]
MEMBER_ARGS = ["--nodes", "1", "--node-cpu", "40", "--pod-startup", "100ms"]
REPLICAS = 30


@pytest.fixture
def fed(tmp_path):
    federation = start_federation(tmp_path, {c: ({"zone": c}, MEMBER_ARGS) for c in CLUSTERS})
    try:
        federation.create_namespace("shop")
        federation.create(replicaset("web", REPLICAS), "shop")
        federation.wait_layout("shop", "web", plan(REPLICAS, CLUSTERS, "shop/web"))
        yield federation
    finally:
        federation.close()


def snapshot(fed):
    """Per cluster: the local ReplicaSet's uid and spec.replicas, and each
    pod's uid with its restartCount."""
    state = {}
    for c in CLUSTERS:
        rs = fed[c].local_rs("shop", "web")
        pods = {p["metadata"]["uid"]: sum(s.get("restartCount", 0) for s in p["status"].get(
            "containerStatuses", [])) for p in fed[c].pods("shop", "app=web")}
        state[c] = (rs["metadata"]["uid"], rs["spec"]["replicas"], pods)
    return state


@pytest.mark.parametrize("how", ["SIGSTOP", "SIGKILL"])
def test_a_lost_member_has_its_replicas_run_by_the_others(fed, how):
    lost = "c"
    started = time.monotonic()
    if how == "SIGSTOP":
        fed[lost].sigstop()
    else:
        fed[lost].kill9()
        fed[lost].stopped = True
    fed.wait_not_ready(lost)
    not_ready = time.monotonic() - started
    kept = {c: n for c, n in fed.layout("shop", "web").items() if c != lost}
    seen = fed.wait_layout("shop", "web", plan(REPLICAS, ["a", "b"], "shop/web", current=kept),
                           timeout=90)
    recovered = time.monotonic() - started
    assert sum(seen["running"].values()) == REPLICAS
    print(f"\nfailover ({how} of {lost}): NotReady after {not_ready:.1f} s, "
          f"all {REPLICAS} running in a and b after {recovered:.1f} s")


def test_members_keep_running_without_the_control_plane_and_are_readopted(fed):
    before = snapshot(fed)
    assert sum(len(pods) for _, _, pods in before.values()) == REPLICAS
    fed.kill_server()
    # Nothing watches for a change that must not happen; look a few times
    # over a few seconds (the members' own controllers keep running).
    for _ in range(5):
        time.sleep(1)
        assert snapshot(fed) == before

    fed.restart_server()
    for c in CLUSTERS:
        fed.wait_ready(c)
    # Let the controller go over the ReplicaSet a few times (it rechecks
    # every 2 s), then check that it changed nothing.
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        assert snapshot(fed) == before
        time.sleep(0.5)
    for c in CLUSTERS:
        local = fed[c].local_rs("shop", "web")
        assert local["metadata"]["annotations"][FEDERATED_OBJECT] == "shop/web"

    # The restarted controller is in charge: a scale reaches the members,
    # and the pods that ran before are still there.
    fed.kubectl("scale", "rs", "web", "-n", "shop", "--replicas", "33")
    fed.wait_layout("shop", "web",
                    plan(33, CLUSTERS, "shop/web", current={c: before[c][1] for c in CLUSTERS}))
    after = snapshot(fed)
    for c in CLUSTERS:
        assert after[c][0] == before[c][0]
        for uid, restarts in before[c][2].items():
            assert after[c][2].get(uid) == restarts
