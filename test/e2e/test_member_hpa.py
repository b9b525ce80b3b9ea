"""An HPA on a simulated member, driven by the real kubectl and
`flotilla member ctl demand`: the HPA scales a Deployment out when its CPU
demand rises and back in once the demand falls and the (shortened)
scale-down stabilization window has passed. Needs the member's scheduler,
kubelet, ReplicaSet and Deployment controllers as well as the HPA."""

import json

import pytest

from conftest import table, wait_for
from members import MemberProcess

WINDOW_SECONDS = 30  # scale-down stabilization: two 15 s syncs
SCALE_TIMEOUT = 120  # a few HPA sync periods (15 s) and pod start-ups


@pytest.fixture(scope="module")
def member(tmp_path_factory):
    m = MemberProcess(str(tmp_path_factory.mktemp("member")),
                      ["--pod-startup", "200ms",
                       "--hpa-downscale-stabilization", f"{WINDOW_SECONDS}s"])
    try:
        yield m.cluster
    finally:
        m.stop()


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx
        resources:
          requests: {cpu: 200m}
"""


def hpa(member, ns):
    return json.loads(member.kubectl("get", "hpa", "web", "-n", ns, "-o", "json").stdout)


def condition(obj, kind):
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == kind:
            return c
    return {}


def replicas(member, ns):
    out = member.kubectl("get", "deployment", "web", "-n", ns, "-o",
                         "jsonpath={.spec.replicas}/{.status.readyReplicas}").stdout
    spec, _, ready = out.partition("/")
    return int(spec), int(ready or 0)


def test_hpa_scales_out_with_demand_and_back_in_after_the_window(member):
    ns = "hpa-e2e"
    member.kubectl("create", "namespace", ns)
    member.kubectl("apply", "-n", ns, "-f", "-", input=DEPLOYMENT)
    wait_for(lambda: replicas(member, ns) == (2, 2), "2 ready pods", timeout=SCALE_TIMEOUT)

    # kubectl 1.32 POSTs an autoscaling/v1 object, as protobuf.
    member.kubectl("autoscale", "deployment", "web", "-n", ns, "--cpu-percent=50", "--min=1",
                   "--max=6")
    # No demand: 0% of the requests.
    wait_for(lambda: condition(hpa(member, ns), "ScalingActive").get("reason") ==
             "ValidMetricFound", "a valid metric", timeout=SCALE_TIMEOUT)
    headers, rows = table(member.kubectl("get", "hpa", "-n", ns).stdout)
    assert headers == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert rows[0]["REFERENCE"] == "Deployment/web"
    assert rows[0]["TARGETS"] == "cpu: 0%/50%"
    assert (rows[0]["MINPODS"], rows[0]["MAXPODS"], rows[0]["REPLICAS"]) == ("1", "6", "2")

    # 600m over 2 pods of 200m: 150% -> 6 pods, at most doubling per sync
    # (2 -> 4 -> 6).
    member.ctl("demand", "deployment/web", "-n", ns, "600m")
    wait_for(lambda: replicas(member, ns) == (6, 6), "6 ready pods", timeout=SCALE_TIMEOUT)
    messages = [e["message"] for e in member.get("events", "-n", ns)["items"]
                if e["involvedObject"]["kind"] == "HorizontalPodAutoscaler"]
    assert ("New size: 4; reason: cpu resource utilization (percentage of request) above target"
            in messages), messages
    wait_for(lambda: table(member.kubectl("get", "hpa", "-n", ns).stdout)[1][0]["TARGETS"] ==
             "cpu: 50%/50%", "600m over 6 pods: 50%", timeout=SCALE_TIMEOUT)
    v1 = member.get("horizontalpodautoscalers.v1.autoscaling", "web", "-n", ns)
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert v1["status"]["currentCPUUtilizationPercentage"] == 50

    # 60m over 6 pods: 5% -> 1 pod, held by the window, then applied.
    member.ctl("demand", "deployment/web", "-n", ns, "60m")
    wait_for(lambda: condition(hpa(member, ns), "AbleToScale").get("reason") ==
             "ScaleDownStabilized", "the scale-down to be held", timeout=SCALE_TIMEOUT)
    assert replicas(member, ns)[0] == 6
    wait_for(lambda: replicas(member, ns) == (1, 1), "1 ready pod", timeout=SCALE_TIMEOUT)
    final = hpa(member, ns)
    assert final["status"]["desiredReplicas"] == 1
    assert condition(final, "ScalingLimited")["reason"] in ("DesiredWithinRange", "TooFewReplicas")
