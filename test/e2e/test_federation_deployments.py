"""Federated Deployments end to end (seed 001, docs/federation.md): a
`flotilla server` with three `flotilla member` clusters a, b and c. A
Deployment created on the federation becomes a local Deployment in each
member, rolled out one cluster at a time, and the real kubectl drives it on
the federation unchanged: rollout status, history, undo, pause, resume,
restart, set image, scale, get and describe.

What the members do is read from the members themselves: their local
Deployments (template, replicas, status) and ReplicaSets. A rollout that
cannot finish is made with a readiness probe that the simulated kubelet
only passes after an hour, so that a cluster stays mid-update for as long
as a test needs, without timing.

One federation serves the module; each test has its own namespace.
"""

import json
import threading
import time

import pytest

from conftest import namespace_name, table, wait_for
from federation import FED_ARGS, module_federation

CLUSTERS = ["a", "b", "c"]
MEMBER_ARGS = ["--nodes", "1", "--node-cpu", "100", "--node-pods", "200",
               "--pod-startup", "300ms"]
SERVER_ARGS = FED_ARGS + ["--cluster-failure-threshold", "2", "--recheck-delay", "2s",
                          "--member-change-delay", "200ms", "--unschedulable-threshold", "3s"]
EVEN = {"rebalance": True, "clusters": {"*": {"weight": 1}}}
BROKEN = "e2e.flotilla.io/broken"
ORDER = "federation.kubernetes.io/cluster-update-order"
PREFERENCES = "federation.kubernetes.io/deployment-preferences"
SHADOW = "federation.kubernetes.io/shadow-replicaset"
DEPLOY_PATH = "/apis/apps/v1/namespaces/{ns}/deployments"
RS_PATH = "/apis/apps/v1/namespaces/{ns}/replicasets"


fed = module_federation("fed-deploy", {name: ({}, MEMBER_ARGS) for name in CLUSTERS}, SERVER_ARGS)


@pytest.fixture
def ns(request, fed):
    name = namespace_name(request.node.name)
    fed.create_namespace(name)
    yield name
    for c in CLUSTERS:
        fed[c].sigcont()
        fed[c].ctl("node", "set", f"{c}-node-0", "--cpu", "100")
    if not fed.server.running():
        fed.restart_server()
    for c in CLUSTERS:
        fed.wait_ready(c)
    fed.kubectl("delete", "deploy,rs", "--all", "-n", name, "--wait=false", check=False)
    for c in CLUSTERS:
        fed[c].kubectl("delete", "deploy,rs,pods", "--all", "-n", name, "--grace-period=0",
                       "--force", "--wait=false", check=False)


def deployment(name, replicas, image="nginx:1.27", annotations=None, strategy=None,
               deadline=None, max_unavailable=0):
    spec = {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"terminationGracePeriodSeconds": 0,
                                  "containers": [{"name": "app", "image": image,
                                                  "resources": {"requests": {"cpu": "100m"}}}]}}}
    if strategy == "Recreate":
        spec["strategy"] = {"type": "Recreate"}
    else:
        spec["strategy"] = {"type": "RollingUpdate",
                            "rollingUpdate": {"maxSurge": 1, "maxUnavailable": max_unavailable}}
    if deadline is not None:
        spec["progressDeadlineSeconds"] = deadline
    meta = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


def local(fed, cluster, ns, name="web"):
    return fed[cluster].get_json(DEPLOY_PATH.format(ns=ns) + "/" + name)


def image(d):
    return None if d is None else d["spec"]["template"]["spec"]["containers"][0]["image"]


def broken(d):
    return d is not None and \
        d["spec"]["template"].get("metadata", {}).get("annotations", {}).get(BROKEN) == "true"


def images(fed, ns, name="web"):
    return {c: image(local(fed, c, ns, name)) for c in CLUSTERS}


def mid_update(d):
    """The seed's test, on a local Deployment."""
    s = d.get("status", {})
    return (s.get("updatedReplicas", 0) != s.get("replicas", 0)
            or s.get("unavailableReplicas", 0) != 0
            or s.get("observedGeneration") != d["metadata"]["generation"])


def federated(fed, ns, name="web"):
    response = fed.api().get(DEPLOY_PATH.format(ns=ns) + "/" + name, timeout=10)
    return response.json() if response.status_code == 200 else None


def condition(d, kind):
    for c in (d or {}).get("status", {}).get("conditions", []):
        if c["type"] == kind:
            return c
    return {}


def rollout_status(fed, ns, name="web", check=True, timeout="90s"):
    return fed.kubectl("rollout", "status", f"deploy/{name}", "-n", ns, f"--timeout={timeout}",
                       check=check)


def shadows(fed, ns):
    items = fed.api().get(RS_PATH.format(ns=ns), timeout=10).json()["items"]
    return {rs["metadata"]["name"]: rs for rs in items}


def local_replicasets(fed, cluster, ns):
    items = fed[cluster].get_json(RS_PATH.format(ns=ns))["items"]
    return {rs["metadata"]["name"]: rs for rs in items}


def events(fed, ns, reason, name="web"):
    out = fed.kubectl("get", "events", "-n", ns, "--field-selector",
                      f"involvedObject.name={name},involvedObject.kind=Deployment,reason={reason}",
                      "-o", "json")
    return [e["message"] for e in json.loads(out.stdout)["items"]]


def set_image(fed, ns, new, name="web"):
    fed.kubectl("set", "image", f"deploy/{name}", f"app={new}", "-n", ns)


def break_template(fed, ns, name="web", broken=True):
    """A new template whose pods never become ready (a readiness probe
    passed after an hour): its rollout never finishes. broken=False: a new
    template whose pods are ready at once again."""
    probe = {"exec": {"command": ["true"]}, "initialDelaySeconds": 3600 if broken else 0}
    patch = {"spec": {"template": {
        "metadata": {"annotations": {BROKEN: "true" if broken else "false"}},
        "spec": {"containers": [{"name": "app", "readinessProbe": probe}]}}}}
    fed.kubectl("patch", "deploy", name, "-n", ns, "--type=strategic", "-p", json.dumps(patch))


def running(fed, ns, obj):
    fed.create(obj, ns)
    rollout_status(fed, ns, obj["metadata"]["name"])


class Sampler:
    """Samples every member's local Deployment until stopped. Each sample
    reads the clusters twice, one after the other; a cluster counts as
    updating in a sample only when both reads show it on the new template
    and mid-update: it was then mid-update from its first read to its
    second, and any two such intervals of one sample overlap (each first
    read comes before every second read). A cluster mid-update in one read
    only is "changing": it may have started after another finished between
    their reads, so it proves no overlap."""

    def __init__(self, fed, ns, new_image):
        self.fed, self.ns, self.new = fed, ns, new_image
        self.samples = []  # [{cluster: "old" | "updating" | "changing" | "done"}]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _state(self, d):
        if image(d) != self.new:
            return "old"
        return "updating" if mid_update(d) else "done"

    def _read(self):
        return {c: self._state(local(self.fed, c, self.ns)) for c in CLUSTERS}

    def _run(self):
        while not self._stop.is_set():
            first, second = self._read(), self._read()
            self.samples.append({c: "updating" if first[c] == second[c] == "updating"
                                 else "changing" if "updating" in (first[c], second[c])
                                 else second[c] for c in CLUSTERS})

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.samples

    def first_seen(self, cluster):
        return next(i for i, s in enumerate(self.samples) if s[cluster] != "old")


def test_kubectl_sees_one_deployment_spread_over_the_members(fed, ns):
    running(fed, ns, deployment("web", 6, annotations={PREFERENCES: json.dumps(EVEN)}))
    _, rows = table(fed.kubectl("get", "deploy", "web", "-n", ns).stdout)
    assert rows[0]["READY"] == "6/6" and rows[0]["UP-TO-DATE"] == "6"
    assert rows[0]["AVAILABLE"] == "6"
    for c in CLUSTERS:
        d = local(fed, c, ns)
        assert d["spec"]["replicas"] == 2
        assert d["metadata"]["labels"]["federation.kubernetes.io/managed-by"] == "flotilla"
        assert PREFERENCES not in d["metadata"].get("annotations", {})
    # The shadow is named as every member names its local ReplicaSet.
    shadow_names = set(shadows(fed, ns))
    assert len(shadow_names) == 1
    for c in CLUSTERS:
        assert set(local_replicasets(fed, c, ns)) == shadow_names
    _, rs = table(fed.kubectl("get", "rs", "-n", ns).stdout)
    assert [(r["DESIRED"], r["CURRENT"], r["READY"]) for r in rs] == [("6", "6", "6")]
    shadow = next(iter(shadows(fed, ns).values()))
    assert shadow["metadata"]["annotations"][SHADOW] == "true"
    assert shadow["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    describe = fed.kubectl("describe", "deploy", "web", "-n", ns).stdout
    assert f"NewReplicaSet:   {next(iter(shadow_names))} (6/6 replicas created)" in describe


def test_a_rollout_goes_one_cluster_at_a_time_in_the_update_order(fed, ns):
    running(fed, ns, deployment("web", 6, annotations={ORDER: "c,a"}))
    sampler = Sampler(fed, ns, "nginx:1.28")
    set_image(fed, ns, "nginx:1.28")
    out = rollout_status(fed, ns).stdout
    samples = sampler.stop()
    assert 'deployment "web" successfully rolled out' in out
    assert "new replicas have been updated" in out  # it waited through the clusters
    # No two clusters were ever mid-update at once.
    for s in samples:
        assert sum(1 for c in CLUSTERS if s[c] == "updating") <= 1, s
    # c first, then a, then b.
    assert sampler.first_seen("c") <= sampler.first_seen("a") <= sampler.first_seen("b")
    assert images(fed, ns) == {c: "nginx:1.28" for c in CLUSTERS}
    started = wait_for(lambda: (lambda e: e if len(e) >= 3 else None)(
        events(fed, ns, "RolloutStarted")), "an event per cluster")
    assert sorted(started) == [f"Rolling out revision 2 to cluster {c}" for c in CLUSTERS]
    assert events(fed, ns, "RolloutCompleted")


def test_history_undo_and_change_cause(fed, ns):
    running(fed, ns, deployment("web", 3, annotations={"kubernetes.io/change-cause": "first"}))
    set_image(fed, ns, "nginx:1.28")
    fed.kubectl("annotate", "deploy", "web", "-n", ns, "kubernetes.io/change-cause=second",
                "--overwrite")
    rollout_status(fed, ns)
    history = fed.kubectl("rollout", "history", "deploy/web", "-n", ns).stdout
    assert "1         first" in history and "2         second" in history
    one = fed.kubectl("rollout", "history", "deploy/web", "-n", ns, "--revision=1").stdout
    assert "nginx:1.27" in one
    fed.kubectl("rollout", "undo", "deploy/web", "-n", ns, "--to-revision=1")
    rollout_status(fed, ns)
    assert images(fed, ns) == {c: "nginx:1.27" for c in CLUSTERS}
    history = fed.kubectl("rollout", "history", "deploy/web", "-n", ns).stdout
    assert "3         first" in history
    d = federated(fed, ns)
    assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert SHADOW not in d["metadata"]["annotations"]


def test_pause_resume_and_restart(fed, ns):
    running(fed, ns, deployment("web", 3))
    fed.kubectl("rollout", "pause", "deploy/web", "-n", ns)
    set_image(fed, ns, "nginx:1.28")
    wait_for(lambda: condition(federated(fed, ns), "Progressing").get("reason") ==
             "DeploymentPaused", "the pause observed")
    wait_for(lambda: all(local(fed, c, ns)["spec"].get("paused") for c in CLUSTERS),
             "every local Deployment paused")
    assert images(fed, ns) == {c: "nginx:1.27" for c in CLUSTERS}
    fed.kubectl("rollout", "resume", "deploy/web", "-n", ns)
    rollout_status(fed, ns)
    assert images(fed, ns) == {c: "nginx:1.28" for c in CLUSTERS}
    fed.kubectl("rollout", "restart", "deploy/web", "-n", ns)
    rollout_status(fed, ns)
    for c in CLUSTERS:
        annotations = local(fed, c, ns)["spec"]["template"]["metadata"]["annotations"]
        assert "kubectl.kubernetes.io/restartedAt" in annotations
    assert len(shadows(fed, ns)) == 3


def test_a_failure_in_an_update_stops_the_whole_update(fed, ns):
    running(fed, ns, deployment("web", 3, deadline=3))
    break_template(fed, ns)
    out = rollout_status(fed, ns, check=False)
    assert out.returncode != 0
    assert "exceeded its progress deadline" in out.stderr
    progressing = condition(federated(fed, ns), "Progressing")
    assert progressing["status"] == "False" and "cluster a" in progressing["message"]
    assert [c for c in CLUSTERS if broken(local(fed, c, ns))] == ["a"]
    wait_for(lambda: events(fed, ns, "RolloutFailed"), "a RolloutFailed event")
    # The federation keeps checking (every 2 s); b and c stay as they were.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        assert [c for c in CLUSTERS if broken(local(fed, c, ns))] == ["a"]
        time.sleep(0.5)
    fed.kubectl("rollout", "undo", "deploy/web", "-n", ns)
    rollout_status(fed, ns)
    assert not any(broken(local(fed, c, ns)) for c in CLUSTERS)


def test_a_new_update_before_the_previous_one_completed(fed, ns):
    running(fed, ns, deployment("web", 3))
    break_template(fed, ns)
    wait_for(lambda: broken(local(fed, "a", ns)), "a on the broken template")
    sampler = Sampler(fed, ns, "nginx:1.29")
    fed.kubectl("set", "image", "deploy/web", "app=nginx:1.29", "-n", ns)
    break_template(fed, ns, broken=False)
    rollout_status(fed, ns)
    samples = sampler.stop()
    for s in samples:
        assert sum(1 for c in CLUSTERS if s[c] == "updating") <= 1, s
    assert images(fed, ns) == {c: "nginx:1.29" for c in CLUSTERS}
    assert not any(broken(local(fed, c, ns)) for c in CLUSTERS)


def test_recreate_updates_every_cluster_at_once(fed, ns):
    running(fed, ns, deployment("web", 3, strategy="Recreate"))
    break_template(fed, ns)
    # None of them can finish, and all three have the new template.
    wait_for(lambda: all(broken(local(fed, c, ns)) for c in CLUSTERS),
             "every cluster on the new template")
    assert all(mid_update(local(fed, c, ns)) for c in CLUSTERS)


def test_scaling_during_a_rollout_reaches_every_cluster_at_once(fed, ns):
    running(fed, ns, deployment("web", 3))
    break_template(fed, ns)
    wait_for(lambda: broken(local(fed, "a", ns)), "a on the broken template")
    fed.kubectl("scale", "deploy/web", "--replicas=9", "-n", ns)
    wait_for(lambda: all(local(fed, c, ns)["spec"]["replicas"] == 3 for c in CLUSTERS),
             "every cluster scaled")
    assert [c for c in CLUSTERS if broken(local(fed, c, ns))] == ["a"]


def test_shadow_counts_and_direct_edits(fed, ns):
    running(fed, ns, deployment("web", 6, annotations={PREFERENCES: json.dumps(EVEN)}))
    name, shadow = next(iter(shadows(fed, ns).items()))
    assert shadow["spec"]["replicas"] == 6 and shadow["status"]["readyReplicas"] == 6
    local_uids = {c: local_replicasets(fed, c, ns)[name]["metadata"]["uid"] for c in CLUSTERS}
    fed.kubectl("scale", "rs", name, "--replicas=50", "-n", ns)
    wait_for(lambda: shadows(fed, ns)[name]["spec"]["replicas"] == 6, "the shadow restored")
    fed.kubectl("delete", "rs", name, "-n", ns, "--wait=false")
    wait_for(lambda: (lambda s: s if s and s["metadata"]["uid"] != shadow["metadata"]["uid"]
                      else None)(shadows(fed, ns).get(name)), "the shadow recreated")
    for c in CLUSTERS:
        rs = local_replicasets(fed, c, ns)[name]
        assert rs["metadata"]["uid"] == local_uids[c] and rs["spec"]["replicas"] == 2


def test_orphan_and_cascade_deletion(fed, ns):
    running(fed, ns, deployment("kept", 3))
    running(fed, ns, deployment("gone", 3))
    fed.kubectl("delete", "deploy", "kept", "-n", ns, "--cascade=orphan")
    fed.kubectl("delete", "deploy", "gone", "-n", ns)
    wait_for(lambda: not shadows(fed, ns), "every shadow gone")
    wait_for(lambda: all(local(fed, c, ns, "gone") is None for c in CLUSTERS),
             "the cascaded local Deployments gone")
    assert all(local(fed, c, ns, "kept")["spec"]["replicas"] == 1 for c in CLUSTERS)
    assert all(local_replicasets(fed, c, ns) for c in CLUSTERS)  # the members' own stay


def test_a_full_cluster_holds_neither_the_rollout_nor_rollout_status(fed, ns):
    # c's node has room for 4 of these pods: it becomes full for the
    # Deployment, runs 4 and a and b take the rest (c is probed for room
    # now and then: 2 more wait there while a probe lasts).
    fed["c"].ctl("node", "set", "c-node-0", "--cpu", "400m")
    running(fed, ns, deployment("web", 30, annotations={PREFERENCES: json.dumps(EVEN)},
                                max_unavailable="50%"))

    def at_capacity():
        d = federated(fed, ns)
        annotation = d["metadata"]["annotations"]["federation.kubernetes.io/deployment-status"]
        c = json.loads(annotation)["clusters"]["c"]
        return d if c["planned"] == 4 and c.get("estimatedCapacity") == 4 else None
    d = wait_for(at_capacity, "c planned at its capacity of 4", timeout=60)
    assert d["status"]["replicas"] == d["status"]["updatedReplicas"] == 30
    # Probes waiting in c hold no rollout.
    set_image(fed, ns, "nginx:1.28")
    rollout_status(fed, ns)
    assert images(fed, ns) == {c: "nginx:1.28" for c in CLUSTERS}


def test_failover_moves_replicas_and_they_come_back(fed, ns):
    running(fed, ns, deployment("web", 6, annotations={PREFERENCES: json.dumps(EVEN)}))
    fed["c"].sigstop()
    fed.wait_not_ready("c")
    wait_for(lambda: local(fed, "a", ns)["spec"]["replicas"] == 3 and
             local(fed, "b", ns)["spec"]["replicas"] == 3, "c's replicas in a and b", timeout=60)
    fed["c"].sigcont()
    fed.wait_ready("c")
    wait_for(lambda: all(local(fed, c, ns)["spec"]["replicas"] == 2 for c in CLUSTERS),
             "c's share back", timeout=60)
    rollout_status(fed, ns)


def test_the_control_plane_killed_mid_rollout_resumes_it(fed, ns):
    running(fed, ns, deployment("web", 6))
    uids = {c: local(fed, c, ns)["metadata"]["uid"] for c in CLUSTERS}
    set_image(fed, ns, "nginx:1.28")
    wait_for(lambda: image(local(fed, "a", ns)) == "nginx:1.28", "a on the new template")
    fed.kill_server()
    fed.restart_server()
    rollout_status(fed, ns)
    assert images(fed, ns) == {c: "nginx:1.28" for c in CLUSTERS}
    assert {c: local(fed, c, ns)["metadata"]["uid"] for c in CLUSTERS} == uids
    assert len(shadows(fed, ns)) == 2


def test_members_work_alone_and_the_federation_takes_back_over(fed, ns):
    running(fed, ns, deployment("web", 6))
    uid = local(fed, "b", ns)["metadata"]["uid"]
    fed.server.stop()
    # With the federation down, b's local Deployment is a full Deployment.
    b = fed["b"]
    b.kubectl("set", "image", "deploy/web", "app=nginx:local", "-n", ns)
    b.kubectl("scale", "deploy/web", "--replicas=4", "-n", ns)
    b.kubectl("rollout", "status", "deploy/web", "-n", ns, "--timeout=60s")
    b.kubectl("rollout", "undo", "deploy/web", "-n", ns)
    b.kubectl("rollout", "status", "deploy/web", "-n", ns, "--timeout=60s")
    b.kubectl("set", "image", "deploy/web", "app=nginx:local", "-n", ns)
    b.kubectl("rollout", "status", "deploy/web", "-n", ns, "--timeout=60s")
    fed.restart_server()
    # Adopted, not recreated; the federation's template and count restored.
    wait_for(lambda: images(fed, ns)["b"] == "nginx:1.27" and
             local(fed, "b", ns)["spec"]["replicas"] == 2, "b restored", timeout=60)
    assert local(fed, "b", ns)["metadata"]["uid"] == uid
    rollout_status(fed, ns)


def test_invalid_annotations_are_rejected_with_422(fed, ns):
    bad_prefs = deployment("web", 3, annotations={PREFERENCES: '{"clusters": {"a": {"weight": -1}}}'})
    out = fed.create(bad_prefs, ns, check=False)
    assert out.returncode != 0 and "deployment-preferences" in out.stderr
    bad_order = deployment("web", 3, annotations={ORDER: "a,Not_A_Name"})
    out = fed.create(bad_order, ns, check=False)
    assert out.returncode != 0 and "Not_A_Name" in out.stderr and "Invalid" in out.stderr
    assert federated(fed, ns) is None
