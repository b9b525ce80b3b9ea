"""Members that are other Kubernetes versions (issue 37): beside a member of
today, two that present themselves as Kubernetes 1.19 and 1.25 (`flotilla
member --kube-version`): they write pod templates back with a null
creationTimestamp, 1.19 drops the Service fields it does not know and does
not serve autoscaling/v2 or policy/v1. The federation decides on what it owns, not on
bytes: rollouts finish, copies are written once and left alone while
nothing changes, a copy edited in a member is restored once, and what a
member does not serve is switched off for that member only."""

import json
import re
import time

import pytest

from conftest import namespace_name, wait_for
from federation import FED_ARGS, flotilla, module_federation

MEMBERS = {"today": [], "v119": ["--kube-version", "1.19"], "v125": ["--kube-version", "1.25"]}
MEMBER_ARGS = ["--nodes", "1", "--node-cpu", "100", "--node-pods", "200", "--pod-startup", "300ms"]
SERVER_ARGS = FED_ARGS + ["--cluster-failure-threshold", "2", "--recheck-delay", "1s",
                          "--member-change-delay", "200ms", "--unschedulable-threshold", "3s"]
HPA_V2 = "horizontalpodautoscalers.v2.autoscaling"
PDB_V1 = "poddisruptionbudgets.v1.policy"
REQUESTS = re.compile(r'^flotilla_federation_member_requests_total\{cluster="([^"]+)",'
                      r'resource="([^"]+)",operation="([^"]+)",result="ok"\} (\d+)', re.M)


fed = module_federation("fed-versions", {name: ({}, MEMBER_ARGS + args)
                                         for name, args in MEMBERS.items()}, SERVER_ARGS)


@pytest.fixture
def ns(request, fed):
    name = namespace_name(request.node.name)
    fed.create_namespace(name)
    yield name
    fed.kubectl("delete", "namespace", name, "--wait=false", check=False)


def writes(fed):
    """(cluster, resource, operation) -> the federation's successful
    requests to members so far, from its /metrics."""
    text = fed.api().get("/metrics").text
    return {(c, r, o): int(n) for c, r, o, n in REQUESTS.findall(text)}


def updates(fed, resource):
    counts = writes(fed)
    return {c: counts.get((c, resource, "update"), 0) for c in MEMBERS}


def member_get(fed, cluster, kind, ns, name):
    out = fed[cluster].kubectl("get", kind, name, "-n", ns, "-o", "json", check=False)
    return json.loads(out.stdout) if out.returncode == 0 else None


def rollout_status(fed, ns, name="web"):
    out = fed.kubectl("rollout", "status", f"deployment/{name}", "-n", ns, "--timeout=90s").stdout
    assert f'deployment "{name}" successfully rolled out' in out


def quiet_for(fed, seconds, resources):
    """The federation's updates of `resources` in every member over
    `seconds`, in which it checks everything again many times (recheck
    every second, member changes after 200 ms): nothing is awaited here, a
    change that must not come is watched for."""
    before = {r: updates(fed, r) for r in resources}
    time.sleep(seconds)
    return before, {r: updates(fed, r) for r in resources}


def test_members_report_their_version_capacity_and_what_they_do_not_serve(fed):
    def statuses():
        out = {}
        for name in MEMBERS:
            st = json.loads(fed.kubectl("get", "cluster", name, "-o", "json").stdout)["status"]
            if "resourceSummary" not in st or "kubernetesVersion" not in st:
                return None
            out[name] = st
        return out if "unsupportedKinds" in out["v119"] else None
    st = wait_for(statuses, "every member's capacity and version", timeout=60)
    assert st["v119"]["kubernetesVersion"] == "v1.19.16"
    assert st["v125"]["kubernetesVersion"] == "v1.25.16"
    assert st["v119"]["unsupportedKinds"] == [HPA_V2, PDB_V1]
    assert "unsupportedKinds" not in st["today"] and "unsupportedKinds" not in st["v125"]
    # flotilla clusters: capacity for all three, the missing API named.
    out = json.loads(flotilla_clusters(fed))["clusters"]
    by_name = {c["name"]: c for c in out}
    assert by_name["v119"]["cpu"]["allocatable"] == "100"
    assert by_name["v119"]["unsupportedKinds"] == [HPA_V2, PDB_V1]
    table = flotilla_clusters(fed, json_out=False)
    v119 = [line for line in table.splitlines() if line.startswith("v119")][0]
    assert "v1.19.16" in v119 and f"does not serve {HPA_V2}" in v119


def flotilla_clusters(fed, json_out=True):
    args = ["clusters", "--kubeconfig", fed.server.kubeconfig]
    if json_out:
        args += ["-o", "json"]
    return flotilla(*args).stdout


def test_rollouts_finish_and_copies_are_written_once(fed, ns):
    fed.kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=6", "-n", ns)
    fed.kubectl("expose", "deployment", "web", "--port=80", "-n", ns)
    fed.kubectl("create", "configmap", "cfg", "--from-literal=a=1", "-n", ns)
    rollout_status(fed, ns)
    for cluster in MEMBERS:
        wait_for(lambda c=cluster: member_get(fed, c, "service", ns, "web"),
                 f"the Service in {cluster}")
        wait_for(lambda c=cluster: member_get(fed, c, "configmap", ns, "cfg"),
                 f"the ConfigMap in {cluster}")
    template = member_get(fed, "v119", "deployment", ns, "web")["spec"]["template"]["metadata"]
    assert "creationTimestamp" in template and template["creationTimestamp"] is None
    assert "internalTrafficPolicy" not in member_get(fed, "v119", "service", ns, "web")["spec"]
    assert "internalTrafficPolicy" in member_get(fed, "today", "service", ns, "web")["spec"]

    fed.kubectl("set", "image", "deployment/web", "nginx=nginx:1.28", "-n", ns)
    rollout_status(fed, ns)
    d = json.loads(fed.kubectl("get", "deployment", "web", "-n", ns, "-o", "json").stdout)
    assert d["status"]["observedGeneration"] == d["metadata"]["generation"]
    for cluster in MEMBERS:
        local = member_get(fed, cluster, "deployment", ns, "web")
        assert local["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"

    # Each copy was written once for each change, and is not written again
    # while nothing changes.
    resources = ["deployments", "services", "configmaps"]
    before, after = quiet_for(fed, 8, resources)
    assert before == after, f"updates while nothing changed: {before} -> {after}"
    assert all(n == 1 for n in after["deployments"].values()), after  # the new image
    assert all(n == 0 for n in after["services"].values()), after


def test_a_copy_edited_in_a_member_is_restored_once(fed, ns):
    fed.kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3", "-n", ns)
    rollout_status(fed, ns)
    before = updates(fed, "deployments")
    fed["v119"].kubectl("set", "image", "deployment/web", "nginx=nginx:edited", "-n", ns)
    wait_for(lambda: member_get(fed, "v119", "deployment", ns, "web")["spec"]["template"]["spec"]
             ["containers"][0]["image"] == "nginx:1.27", "v119's copy restored", timeout=30)
    _, after = quiet_for(fed, 5, ["deployments"])
    restored = {c: after["deployments"][c] - before[c] for c in MEMBERS}
    assert restored == {"today": 0, "v119": 1, "v125": 0}, restored


def test_an_hpa_says_which_members_cannot_run_it_and_leaves_their_copies(fed, ns):
    fed.kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=6", "-n", ns)
    rollout_status(fed, ns)
    fed.kubectl("set", "resources", "deployment", "web", "--requests=cpu=100m", "-n", ns)
    rollout_status(fed, ns)
    fed.kubectl("autoscale", "deployment", "web", "--min=2", "--max=8", "--cpu-percent=50",
                "-n", ns)

    def warned():
        events = json.loads(fed.kubectl("get", "events", "-n", ns, "-o", "json").stdout)["items"]
        return [e["message"] for e in events if e["reason"] == "HPAUnsupportedInCluster"]
    message = wait_for(warned, "the HPA's Warning about v119", timeout=30)[0]
    assert "v119" in message and "autoscaling/v2" in message
    wait_for(lambda: member_get(fed, "today", "hpa", ns, "web") and
             member_get(fed, "v125", "hpa", ns, "web"), "local HPAs in today and v125")
    # v119's copy stays, with the replicas it runs.
    local = member_get(fed, "v119", "deployment", ns, "web")
    assert local is not None and local["spec"]["replicas"] == 2
    _, after = quiet_for(fed, 4, ["deployments"])
    assert member_get(fed, "v119", "deployment", ns, "web")["spec"]["replicas"] == 2
