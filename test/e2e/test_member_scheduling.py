"""Scheduling and the simulated kubelet on a member, as kubectl sees them:
replicas beyond capacity stay Pending with kube-scheduler's Unschedulable
reason and message and are scheduled once a node is added; the crash-loop
annotation; a deleted pod lingers as Terminating for its grace period.
"""

import pytest

from conftest import table, wait_for
from members import MemberProcess

TIMEOUT = 60  # seconds: scheduling and a 200 ms start-up on a busy machine

REPLICA_SET = """
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: big
spec:
  replicas: 3
  selector:
    matchLabels: {app: big}
  template:
    metadata:
      labels: {app: big}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        resources:
          requests:
            cpu: 600m
"""

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations: {annotations}
spec:
  terminationGracePeriodSeconds: {grace}
  containers:
  - name: app
    image: busybox:1.36
"""


@pytest.fixture(scope="module")
def member(tmp_path_factory):
    m = MemberProcess(str(tmp_path_factory.mktemp("member")),
                      ["--nodes", "2", "--node-cpu", "1", "--pod-startup", "200ms"])
    try:
        yield m.cluster
    finally:
        m.stop()


def unschedulable(pod):
    for c in pod["status"].get("conditions", []):
        if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable":
            return c
    return None


def test_replicas_beyond_capacity_stay_pending_until_a_node_is_added(member):
    member.kubectl("apply", "-f", "-", input=REPLICA_SET)

    def two_running_one_pending():
        items = member.get("pods", "-l", "app=big")["items"]
        running = [p for p in items if p["status"].get("phase") == "Running"]
        pending = [p for p in items if unschedulable(p)]
        if len(items) == 3 and len(running) == 2 and len(pending) == 1:
            return running, pending[0]
        return None

    running, pending = wait_for(two_running_one_pending, "two pods Running, one Unschedulable",
                                timeout=TIMEOUT)
    assert len({p["spec"]["nodeName"] for p in running}) == 2
    condition = unschedulable(pending)
    assert condition["status"] == "False"
    assert condition["message"] == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod..")
    name = pending["metadata"]["name"]
    _, rows = table(member.kubectl("get", "pods", "-o", "wide").stdout)
    row = next(r for r in rows if r["NAME"] == name)
    assert (row["STATUS"], row["NODE"], row["IP"]) == ("Pending", "<none>", "<none>")
    described = member.kubectl("describe", "pod", name).stdout
    assert "FailedScheduling" in described and "2 Insufficient cpu" in described

    member.ctl("node", "add", "extra", "--cpu", "2")

    def running_on_extra():
        pod = member.get("pod", name)
        ok = pod["spec"].get("nodeName") == "extra" and pod["status"].get("phase") == "Running"
        return pod if ok else None

    pod = wait_for(running_on_extra, "the pending pod Running on the new node", timeout=TIMEOUT)
    ips = {p["status"]["podIP"] for p in running} | {pod["status"]["podIP"]}
    assert len(ips) == 3
    described = member.kubectl("describe", "pod", name).stdout
    assert f"Successfully assigned default/{name} to extra" in described
    member.kubectl("delete", "replicaset", "big")


def test_crash_loop_annotation_restarts_the_container(member):
    member.kubectl("apply", "-f", "-", input=POD.format(
        name="crashy", annotations='{"sim.flotilla.io/crash-loop": "true"}', grace=0))

    def crash_looping():
        statuses = member.get("pod", "crashy")["status"].get("containerStatuses", [])
        waiting = statuses[0]["state"].get("waiting", {}) if statuses else {}
        return statuses if waiting.get("reason") == "CrashLoopBackOff" else None

    statuses = wait_for(crash_looping, "CrashLoopBackOff", timeout=TIMEOUT)
    assert statuses[0]["restartCount"] >= 1
    assert statuses[0]["lastState"]["terminated"]["exitCode"] == 1
    _, rows = table(member.kubectl("get", "pod", "crashy").stdout)
    assert rows[0]["STATUS"] == "CrashLoopBackOff" and rows[0]["READY"] == "0/1"
    assert rows[0]["RESTARTS"].startswith("1")
    member.kubectl("delete", "pod", "crashy")


def test_a_deleted_pod_is_terminating_for_its_grace_period(member):
    member.kubectl("apply", "-f", "-", input=POD.format(name="slow", annotations="{}", grace=3))
    wait_for(lambda: member.get("pod", "slow")["status"].get("phase") == "Running",
             "the pod Running", timeout=TIMEOUT)
    member.kubectl("delete", "pod", "slow", "--wait=false")
    _, rows = table(member.kubectl("get", "pod", "slow").stdout)
    assert rows[0]["STATUS"] == "Terminating"
    wait_for(lambda: member.kubectl("get", "pod", "slow", check=False).returncode != 0,
             "the pod gone after its grace period", timeout=TIMEOUT)
