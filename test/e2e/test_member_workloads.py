"""Deployments on a simulated member, driven by the real kubectl as on a real
cluster: pods become Running and Ready; `kubectl set image` rolls out and
`kubectl rollout status` succeeds; `rollout history` lists the revisions,
`rollout undo` returns to the previous template, `rollout pause` / `resume`
hold and release a rollout, `rollout restart` creates a new ReplicaSet; a
deleted pod is replaced. Needs the member's scheduler, kubelet, ReplicaSet
and Deployment controllers."""

import re

import pytest

from conftest import table, wait_for
from members import MemberProcess

ROLLOUT_TIMEOUT = 90  # seconds: a few pod start-ups (0.2 s each here)


@pytest.fixture(scope="module")
def member(tmp_path_factory):
    m = MemberProcess(str(tmp_path_factory.mktemp("member")), ["--pod-startup", "200ms"])
    try:
        yield m.cluster
    finally:
        assert m.stop() == 0


def deployment(name, image="nginx:1.25", replicas=3):
    return f"""
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  strategy:
    rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: app
        image: {image}
"""


def create(member, name, **kwargs):
    member.kubectl("apply", "-f", "-", input=deployment(name, **kwargs))
    rollout_status(member, name)


def rollout_status(member, name):
    out = member.kubectl("rollout", "status", f"deployment/{name}",
                         f"--timeout={ROLLOUT_TIMEOUT}s", timeout=ROLLOUT_TIMEOUT + 30).stdout
    assert f'deployment "{name}" successfully rolled out' in out


def ready(pod):
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in pod.get("status", {}).get("conditions", []))


def live_pods(member, name):
    """Pods of the deployment that are not terminating."""
    pods = member.get("pods", "-l", f"app={name}")["items"]
    return [p for p in pods if "deletionTimestamp" not in p["metadata"]]


def images(member, name):
    return sorted({p["spec"]["containers"][0]["image"] for p in live_pods(member, name)})


def revisions(member, name):
    out = member.kubectl("rollout", "history", f"deployment/{name}").stdout
    return [int(m.group(1)) for m in re.finditer(r"^(\d+)\s", out, re.MULTILINE)]


def replica_sets(member, name):
    return member.get("replicasets", "-l", f"app={name}")["items"]


def test_deployment_pods_become_running_and_ready(member):
    create(member, "web")
    pods = live_pods(member, "web")
    assert len(pods) == 3
    for pod in pods:
        assert pod["status"]["phase"] == "Running"
        assert ready(pod)
        assert pod["spec"].get("nodeName")
    headers, rows = table(member.kubectl("get", "deployment", "web").stdout)
    assert headers == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert (rows[0]["READY"], rows[0]["UP-TO-DATE"], rows[0]["AVAILABLE"]) == ("3/3", "3", "3")
    (rs,) = replica_sets(member, "web")
    hash_ = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{hash_}"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert all(p["metadata"]["name"].startswith(f"web-{hash_}-") for p in pods)


def test_image_change_rolls_out_and_undo_returns_to_the_first(member):
    create(member, "roll")
    member.kubectl("set", "image", "deployment/roll", "app=nginx:1.26")
    rollout_status(member, "roll")
    assert images(member, "roll") == ["nginx:1.26"]
    assert revisions(member, "roll") == [1, 2]
    detail = member.kubectl("rollout", "history", "deployment/roll", "--revision=1").stdout
    assert "nginx:1.25" in detail

    out = member.kubectl("rollout", "undo", "deployment/roll").stdout
    assert "rolled back" in out
    rollout_status(member, "roll")
    wait_for(lambda: images(member, "roll") == ["nginx:1.25"], "pods back on nginx:1.25",
             timeout=ROLLOUT_TIMEOUT)
    # Revision 1's ReplicaSet is new again, as revision 3.
    assert revisions(member, "roll") == [2, 3]
    assert len(replica_sets(member, "roll")) == 2


def test_pause_holds_a_rollout_and_resume_releases_it(member):
    create(member, "paused")
    member.kubectl("rollout", "pause", "deployment/paused")
    member.kubectl("set", "image", "deployment/paused", "app=nginx:1.27")
    wait_for(lambda: (lambda d: d["status"].get("observedGeneration") == d["metadata"]["generation"])(
        member.get("deployment", "paused")), "the paused change to be observed")
    d = member.get("deployment", "paused")
    progressing = [c for c in d["status"]["conditions"] if c["type"] == "Progressing"][0]
    assert progressing["reason"] == "DeploymentPaused"
    assert len(replica_sets(member, "paused")) == 1
    assert images(member, "paused") == ["nginx:1.25"]
    out = member.kubectl("rollout", "status", "deployment/paused", "--watch=false").stdout
    assert "0 out of 3 new replicas have been updated" in out

    member.kubectl("rollout", "resume", "deployment/paused")
    rollout_status(member, "paused")
    wait_for(lambda: images(member, "paused") == ["nginx:1.27"], "pods on nginx:1.27",
             timeout=ROLLOUT_TIMEOUT)


def test_restart_creates_a_new_replica_set(member):
    create(member, "restart")
    before = {p["metadata"]["name"] for p in live_pods(member, "restart")}
    member.kubectl("rollout", "restart", "deployment/restart")
    rollout_status(member, "restart")
    assert len(replica_sets(member, "restart")) == 2
    d = member.get("deployment", "restart")
    assert "kubectl.kubernetes.io/restartedAt" in d["spec"]["template"]["metadata"]["annotations"]
    wait_for(lambda: not before & {p["metadata"]["name"] for p in live_pods(member, "restart")},
             "every pod replaced", timeout=ROLLOUT_TIMEOUT)


def test_a_deleted_pod_is_replaced(member):
    create(member, "heal", replicas=2)
    victim = live_pods(member, "heal")[0]["metadata"]["name"]
    member.kubectl("delete", "pod", victim, "--wait=false")

    def healed():
        pods = live_pods(member, "heal")
        names = {p["metadata"]["name"] for p in pods}
        return len(pods) == 2 and victim not in names and all(ready(p) for p in pods)

    wait_for(healed, "a ready replacement pod", timeout=ROLLOUT_TIMEOUT)
