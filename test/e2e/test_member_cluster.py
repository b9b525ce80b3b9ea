"""A simulated member as kubectl and the official Python client see it: the
member kinds served (and not the federation's), nodes Ready with their
topology labels, pods bound and Running with `kubectl get pods -o wide` and
`kubectl describe pod` as on a real cluster, the Python client watching a
pod's status change, pods/binding through the raw API, and `--clusters 3` hosting three independent clusters in one process.
"""

import json

import pytest

from conftest import table, wait_for
from members import MemberProcess

POD_TIMEOUT = 60  # seconds: a scheduling and a 200 ms start-up, on a busy machine

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: nginx
    image: nginx:1.25
    resources:
      requests:
        cpu: 100m
"""


@pytest.fixture(scope="module")
def member(tmp_path_factory):
    m = MemberProcess(str(tmp_path_factory.mktemp("member")),
                      ["--nodes", "3", "--zones", "z1,z2,z3", "--region", "r1",
                       "--pod-startup", "200ms"])
    try:
        yield m.cluster
    finally:
        m.stop()


def test_member_kinds_are_served_and_the_federations_are_not(member):
    resources = member.kubectl("api-resources", "-o", "name").stdout.split()
    for r in ["pods", "nodes", "endpoints", "persistentvolumeclaims",
              "endpointslices.discovery.k8s.io", "deployments.apps", "namespaces"]:
        assert r in resources
    assert not [r for r in resources if r.endswith(".federation")]
    missing = member.kubectl("get", "clusters.federation", check=False)
    assert missing.returncode != 0


def test_nodes_are_ready_with_topology_labels(member):
    def ready_nodes():
        out = member.kubectl("get", "nodes", check=False).stdout
        if not out.strip():
            return None
        _, rows = table(out)
        return rows if len(rows) == 3 and all(r["STATUS"] == "Ready" for r in rows) else None

    rows = wait_for(ready_nodes, "three Ready nodes", timeout=POD_TIMEOUT)
    nodes = member.get("nodes")["items"]
    zones = sorted(n["metadata"]["labels"].get("topology.kubernetes.io/zone") for n in nodes)
    assert zones == ["z1", "z2", "z3"]
    assert {n["metadata"]["labels"].get("topology.kubernetes.io/region") for n in nodes} == {"r1"}
    assert {r["NAME"] for r in rows} == {n["metadata"]["name"] for n in nodes}


def test_a_pod_is_scheduled_and_runs_as_kubectl_shows_it(member):
    member.kubectl("apply", "-f", "-",
                   input="apiVersion: v1\nkind: Namespace\nmetadata:\n  name: wide\n")
    member.kubectl("apply", "-n", "wide", "-f", "-", input=POD)

    def running():
        pod = member.get("pod", "web", "-n", "wide")
        return pod if pod.get("status", {}).get("phase") == "Running" else None

    pod = wait_for(running, "the pod Running", timeout=POD_TIMEOUT)
    node = pod["spec"]["nodeName"]
    headers, rows = table(member.kubectl("get", "pods", "-n", "wide", "-o", "wide").stdout)
    assert headers[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    assert rows[0]["NODE"] == node and rows[0]["STATUS"] == "Running"
    assert rows[0]["IP"] == pod["status"]["podIP"]
    described = member.kubectl("describe", "pod", "web", "-n", "wide").stdout
    assert "Node:" in described and node in described
    assert "Running" in described


def test_the_python_client_lists_pods_and_nodes(member):
    from kubernetes import client
    core = client.CoreV1Api(member.api_client())
    nodes = core.list_node().items
    assert len(nodes) >= 1
    assert all(n.status.allocatable for n in nodes)
    pods = core.list_pod_for_all_namespaces().items
    assert isinstance(pods, list)


def test_the_python_client_watches_a_pod_go_from_pending_to_running_and_ready(member):
    from kubernetes import client, watch
    core = client.CoreV1Api(member.api_client())
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="watched")))
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="w"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.25")]))
    created = core.create_namespaced_pod("watched", pod)
    seen = []  # (type, phase, node, ready) per event, in order
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_pod, "watched", field_selector="metadata.name=w",
                          resource_version=created.metadata.resource_version,
                          timeout_seconds=POD_TIMEOUT):
        obj = event["object"]
        ready = any(c.type == "Ready" and c.status == "True"
                    for c in (obj.status.conditions or []))
        seen.append((event["type"], obj.status.phase, obj.spec.node_name, ready))
        if obj.status.phase == "Running" and ready:
            w.stop()
    assert seen, "no events"
    assert all(t == "MODIFIED" for t, *_ in seen), seen
    # Bound first (still Pending), then Running and Ready, in that order.
    assert any(phase == "Pending" and node for _, phase, node, _ in seen), seen
    assert seen[-1][1] == "Running" and seen[-1][3], seen
    assert [phase for _, phase, _, _ in seen].index("Running") > 0, seen


def test_three_clusters_in_one_process(tmp_path):
    proc = MemberProcess(str(tmp_path), ["--clusters", "3", "--name", "edge", "--nodes", "0"])
    try:
        names = [c.name for c in proc.clusters]
        assert names == ["edge-1", "edge-2", "edge-3"]
        assert len({c.url for c in proc.clusters}) == 3
        for c in proc.clusters:
            assert c.kubeconfig == str(tmp_path / c.name / "kubeconfig")
        first, second, _ = proc.clusters
        first.kubectl("apply", "-f", "-", input=POD)
        assert first.get("pod", "web")["metadata"]["name"] == "web"
        assert second.kubectl("get", "pod", "web", check=False).returncode != 0

        # pods/binding, as a scheduler writes it (no nodes here, so nobody else binds).
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": "node-x"}}
        path = "/api/v1/namespaces/default/pods/web/binding"
        first.kubectl("create", "--raw", path, "-f", "-", input=json.dumps(binding))
        assert first.get("pod", "web")["spec"]["nodeName"] == "node-x"
        again = first.kubectl("create", "--raw", path, "-f", "-", input=json.dumps(binding),
                              check=False)
        assert again.returncode != 0
        assert 'is already assigned to node "node-x"' in again.stderr
    finally:
        assert proc.stop() == 0
