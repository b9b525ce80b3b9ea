"""Control and fault injection on a simulated member through
`flotilla member ctl`: the API made unavailable answers 503 to kubectl, the
Python client and health checks, and recovers; a slow API still answers;
nodes are added, resized and removed; pods are failed and crashed. SIGTERM
stops the member cleanly.
"""

import json

import pytest

from conftest import wait_for
from members import MemberProcess

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  schedulerName: none-such-scheduler
  containers:
  - name: app
    image: nginx:1.25
"""


@pytest.fixture(scope="module")
def member(tmp_path_factory):
    m = MemberProcess(str(tmp_path_factory.mktemp("member")),
                      ["--name", "faulty", "--nodes", "1", "--pod-startup", "200ms"])
    try:
        yield m.cluster
    finally:
        assert m.stop() == 0


def test_unavailable_api_gives_503s_and_recovers(member):
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    core = client.CoreV1Api(member.api_client())
    raw = member.raw()
    member.kubectl("get", "pods")  # discovery cached while healthy

    state = json.loads(member.ctl("api", "unavailable").stdout)
    assert state["api"]["mode"] == "unavailable"
    try:
        failed = member.kubectl("get", "pods", check=False)
        assert failed.returncode != 0
        assert "ServiceUnavailable" in failed.stderr or "503" in failed.stderr, failed.stderr
        with pytest.raises(ApiException) as err:
            core.list_namespaced_pod("default")
        assert err.value.status == 503
        assert json.loads(err.value.body)["reason"] == "ServiceUnavailable"
        assert raw.get("/readyz").status_code == 503
        assert raw.get("/healthz").status_code == 503
        assert json.loads(member.ctl("state").stdout)["api"]["mode"] == "unavailable"
    finally:
        member.ctl("api", "healthy")
    assert member.kubectl("get", "pods").returncode == 0
    assert core.list_namespaced_pod("default").items is not None
    assert raw.get("/readyz").status_code == 200


def test_slow_api_still_answers(member):
    state = json.loads(member.ctl("api", "slow", "--latency", "300ms").stdout)
    assert state["api"] == {"mode": "slow", "latency": "300ms"}
    try:
        assert member.kubectl("get", "namespaces").returncode == 0
    finally:
        member.ctl("api", "healthy")


def test_nodes_are_added_resized_and_removed(member):
    added = json.loads(member.ctl("node", "add", "extra", "--cpu", "8",
                                  "--memory", "32Gi").stdout)
    assert added["metadata"]["name"] == "extra"
    node = member.get("node", "extra")
    assert node["status"]["allocatable"]["cpu"] == "8"
    member.ctl("node", "set", "extra", "--cpu", "2", "--pods", "10")
    wait_for(lambda: member.get("node", "extra")["status"]["allocatable"] ==
             {**member.get("node", "extra")["status"]["allocatable"], "cpu": "2", "pods": "10"},
             "the new allocatable")
    member.ctl("node", "remove", "extra")
    assert member.kubectl("get", "node", "extra", check=False).returncode != 0
    missing = member.ctl("node", "remove", "extra", check=False)
    assert missing.returncode != 0 and "not found" in missing.stderr


def test_pods_are_failed_and_crashed(member):
    for name in ["doomed", "crashy"]:
        member.kubectl("apply", "-f", "-", input=POD.format(name=name))
    member.ctl("pod", "fail", "doomed", "-n", "default", "--reason", "Evicted")
    pod = member.get("pod", "doomed")
    assert pod["status"]["phase"] == "Failed"
    assert pod["status"]["reason"] == "Evicted"
    member.ctl("pod", "crash", "crashy")
    status = member.get("pod", "crashy")["status"]["containerStatuses"][0]
    assert status["restartCount"] == 1
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"


def test_demand_and_bad_requests(member):
    out = json.loads(member.ctl("demand", "deployment/web", "-n", "shop", "2500m").stdout)
    assert out["cpuMillicores"] == 2500
    bad = member.ctl("demand", "pod/web", "1", check=False)
    assert bad.returncode != 0
    bad = member.ctl("api", "sideways", check=False)
    assert bad.returncode != 0 and "Unsupported value" in bad.stderr


REPLICASET = """
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: keep
spec:
  replicas: 2
  selector:
    matchLabels:
      app: keep
  template:
    metadata:
      labels:
        app: keep
    spec:
      containers:
      - name: app
        image: nginx:1.25
"""


def test_a_failed_pod_is_replaced_and_stays_failed(member):
    member.kubectl("apply", "-f", "-", input=REPLICASET)

    def running(exclude=""):
        pods = member.get("pods", "-l", "app=keep")["items"]
        up = [p for p in pods
              if p["status"].get("phase") == "Running" and p["metadata"]["name"] != exclude]
        return up if len(up) == 2 else None

    victim = wait_for(running, "two Running pods", timeout=60)[0]["metadata"]["name"]
    member.ctl("pod", "fail", victim)
    wait_for(lambda: running(exclude=victim), "a replacement Running", timeout=60)
    assert member.get("pod", victim)["status"]["phase"] == "Failed"
