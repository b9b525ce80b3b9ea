"""A federation for the end-to-end suites: one `flotilla server` (the
federation control plane) and member clusters, each a `flotilla member`
process of its own on its own data dir and port, so that one can be stopped
(SIGSTOP), continued, killed or restarted while the others go on. Members
are joined with `flotilla join NAME --labels ...`.

Helpers read what the suites check: the federation through the real kubectl
and raw HTTPS, each member's local ReplicaSets (spec.replicas), its pods
(how many run), its nodes (capacity), and the Cluster conditions.
"""

import json
import os
import signal
import subprocess
import time

import pytest

from conftest import FLOTILLA_BINARY, KUBECTL, FlotillaServer, LineReader, wait_for
from members import MemberProcess

# Probes every second; a stopped member costs 3 s per probe (the timeout),
# so NotReady comes after about 3 x 4 s.
FED_ARGS = ["--cluster-monitor-period", "1s"]
# What the ReplicaSet suites run the federation with: unschedulable pods
# count after 3 s, a full cluster is probed for room 2 s later (then 4 s,
# 8 s, ...), federated ReplicaSets are checked again every 2 s, and member
# changes are acted on after 200 ms.
FAST_FED_ARGS = FED_ARGS + ["--cluster-failure-threshold", "2",
                            "--unschedulable-threshold", "3s",
                            "--capacity-probe-interval", "2s",
                            "--replicaset-recheck-delay", "2s",
                            "--member-change-delay", "200ms"]
# Replicas a full cluster gets beyond its capacity while it is probed for
# room, at most.
PROBES = 2
SLOW = 90  # seconds: bound for waits that go through a Cluster's health change

MANAGED_BY = "federation.kubernetes.io/managed-by"
FEDERATED_OBJECT = "federation.kubernetes.io/federated-object"
PREFERENCES = "federation.kubernetes.io/replica-set-preferences"
CLUSTER_SELECTOR = "federation.alpha.kubernetes.io/cluster-selector"
RS_STATUS = "federation.kubernetes.io/replica-set-status"
APPLICATION = "federation.kubernetes.io/application"
LOCATION_AFFINITY = "federation.kubernetes.io/location-affinity"

RS_PATH = "/apis/apps/v1/namespaces/{ns}/replicasets"
POD_PATH = "/api/v1/namespaces/{ns}/pods"


def flotilla(*args, env=None, binary=FLOTILLA_BINARY, input=None):
    return subprocess.run([binary, *args], capture_output=True, text=True, env=env, timeout=60,
                          input=input)


def join(fed, member, name, *extra):
    """`flotilla join NAME` of `member` (anything with a .kubeconfig) into
    the federation server `fed`."""
    result = flotilla("join", name, "--kubeconfig", fed.kubeconfig,
                      "--cluster-kubeconfig", member.kubeconfig, *extra)
    assert result.returncode == 0, result.stderr
    return result


def cluster(fed, name):
    result = fed.kubectl("get", "cluster", name, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def condition(obj, kind):
    for c in (obj or {}).get("status", {}).get("conditions", []):
        if c["type"] == kind:
            return c
    return {}


def ready_is(fed, name, status):
    obj = cluster(fed, name)
    return obj if condition(obj, "Ready").get("status") == status else None


def plan(replicas, clusters, key, preferences=None, current=None, capacity=None):
    """The planner's placement (`flotilla plan`) as {cluster: replicas}, with
    every cluster present (0 when it gets none)."""
    case = {"replicas": replicas, "clusters": list(clusters), "key": key}
    if preferences is not None:
        case["preferences"] = preferences
    if current:
        case["current"] = current
    if capacity:
        case["capacity"] = capacity
    out = flotilla("plan", input=json.dumps(case) + "\n")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[0])
    assert "error" not in result, result
    return {c: result["plan"].get(c, 0) for c in clusters}


def replicaset(name, replicas, preferences=None, selector=None, cpu="1", labels=None,
               annotations=None):
    """A federated (or local) apps/v1 ReplicaSet whose pods request `cpu`
    and go at once when deleted (no grace period)."""
    annotations = dict(annotations or {})
    if preferences is not None:
        annotations[PREFERENCES] = json.dumps(preferences)
    if selector is not None:
        annotations[CLUSTER_SELECTOR] = json.dumps(selector)
    pod_labels = dict(labels or {"app": name})
    meta = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": pod_labels},
                     "template": {"metadata": {"labels": pod_labels},
                                  "spec": {"terminationGracePeriodSeconds": 0,
                                           "containers": [{"name": "app", "image": "nginx:1.27",
                                                           "resources": {"requests": {"cpu": cpu}}}]}}}}


def running(pod):
    return (pod.get("status", {}).get("phase") == "Running"
            and not pod["metadata"].get("deletionTimestamp"))


def unschedulable(pod):
    return any(c["type"] == "PodScheduled" and c["status"] == "False"
               and c.get("reason") == "Unschedulable"
               for c in pod.get("status", {}).get("conditions", []))


class Member:
    """One member cluster in a `flotilla member` process of its own. The
    process can be stopped, continued, killed and restarted on the same data
    dir and port (with --storage sqlite it keeps its objects)."""

    def __init__(self, root, name, args=(), wrapper=()):
        self.name = name
        self.wrapper = wrapper  # a command that runs the member (ip netns exec NS)
        self.data_dir = os.path.join(root, f"member-{name}")
        self.args = ["--name", name, *args]
        self.port = 0
        self.process = None
        self.stopped = False
        self._api = None

    def start(self):
        self.process = MemberProcess(self.data_dir, self.args, port=self.port,
                                     wrapper=self.wrapper)
        self.port = int(self.cluster.url.rsplit(":", 1)[1])
        self.stopped = False
        return self

    @property
    def cluster(self):
        return self.process.cluster

    @property
    def kubeconfig(self):
        return self.cluster.kubeconfig

    @property
    def pid(self):
        return self.process.proc.pid

    def alive(self):
        return self.process is not None and self.process.proc.poll() is None

    def sigstop(self):
        os.kill(self.pid, signal.SIGSTOP)
        self.stopped = True

    def sigcont(self):
        if self.alive():
            os.kill(self.pid, signal.SIGCONT)
        self.stopped = False

    def kill9(self):
        self._close_api()
        if self.alive():
            self.process.proc.kill()
            self.process.proc.wait()
        self.process.stop()

    def terminate(self):
        self.sigcont()
        self._close_api()
        if self.process is not None:
            self.process.stop()

    def restart(self):
        if self.alive():
            self.terminate()
        return self.start()

    # kubectl, `flotilla member ctl` and raw HTTPS against this member.
    def kubectl(self, *args, check=True, input=None):
        return self.cluster.kubectl(*args, check=check, input=input)

    def ctl(self, *args, check=True):
        return self.cluster.ctl(*args, check=check)

    def api(self):
        if self._api is None:
            self._api = self.cluster.raw()
        return self._api

    def _close_api(self):
        if self._api is not None:
            self._api.close()
            self._api = None

    def get_json(self, path, **params):
        response = self.api().get(path, params=params, timeout=10)
        if response.status_code == 404:
            return None
        assert response.status_code == 200, f"{self.name}: GET {path}: {response.text}"
        return response.json()

    def local_rs(self, ns, name):
        return self.get_json(RS_PATH.format(ns=ns) + "/" + name)

    def rs_replicas(self, ns, name):
        """spec.replicas of the local ReplicaSet, None when there is none."""
        rs = self.local_rs(ns, name)
        return None if rs is None else rs["spec"]["replicas"]

    def pods(self, ns, selector):
        return self.get_json(POD_PATH.format(ns=ns), labelSelector=selector)["items"]

    def running_pods(self, ns, selector):
        return sum(1 for p in self.pods(ns, selector) if running(p))

    def nodes(self):
        return [n["metadata"]["name"] for n in self.get_json("/api/v1/nodes")["items"]]

    def create_namespace(self, ns):
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        response = self.api().post("/api/v1/namespaces", json=body, timeout=10)
        assert response.status_code in (201, 409), response.text


class Federation:
    """A `flotilla server` and the members joined to it, by cluster name."""

    def __init__(self, root, server_args=FAST_FED_ARGS):
        self.root = str(root)
        self.server = FlotillaServer(os.path.join(self.root, "federation"), server_args)
        self.members = {}
        self._api = None

    def start(self):
        self.server.start()
        return self

    def add_member(self, name, labels=None, args=(), wait=True, namespaces=(), join_args=()):
        """Starts a member cluster `name` (flotilla member ARGS), creates
        `namespaces` in it and joins it with `labels` ({key: value}) and
        `join_args` (more `flotilla join` flags); waits for its Cluster to
        be Ready."""
        member = Member(self.root, name, args).start()
        self.members[name] = member
        for ns in namespaces:
            member.create_namespace(ns)
        extra = []
        if labels:
            extra = ["--labels", ",".join(f"{k}={v}" for k, v in labels.items())]
        join(self.server, member, name, *extra, *join_args)
        if wait:
            self.wait_ready(name)
        return member

    def __getitem__(self, name):
        return self.members[name]

    @property
    def names(self):
        return sorted(self.members)

    def kubectl(self, *args, check=True, input=None):
        return self.server.kubectl(*args, check=check, input=input)

    def apply(self, obj, ns):
        return self.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(obj))

    def create(self, obj, ns, check=True):
        return self.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(obj), check=check)

    def api(self):
        if self._api is None:
            self._api = self.server.raw()
        return self._api

    def get_rs(self, ns, name):
        response = self.api().get(RS_PATH.format(ns=ns) + "/" + name, timeout=10)
        return response.json() if response.status_code == 200 else None

    def rs_status(self, ns, name):
        """The federated ReplicaSet's status annotation, parsed ({} if none)."""
        rs = self.get_rs(ns, name) or {}
        text = rs.get("metadata", {}).get("annotations", {}).get(RS_STATUS)
        return json.loads(text) if text else {}

    def events(self, ns, name, kind="ReplicaSet"):
        out = self.kubectl("get", "events", "-n", ns, "--field-selector",
                           f"involvedObject.name={name},involvedObject.kind={kind}",
                           "-o", "json")
        return json.loads(out.stdout)["items"]

    def wait_event(self, ns, name, reason, timeout=30, kind="ReplicaSet"):
        return wait_for(lambda: [e for e in self.events(ns, name, kind) if e["reason"] == reason],
                        f"event {reason} on {kind} {ns}/{name}", timeout)

    # Clusters.
    def wait_ready(self, name, timeout=SLOW):
        return wait_for(lambda: ready_is(self.server, name, "True"), f"cluster {name} Ready",
                        timeout)

    def wait_not_ready(self, name, timeout=SLOW):
        return wait_for(lambda: ready_is(self.server, name, "False"),
                        f"cluster {name} NotReady", timeout)

    # The control plane.
    def kill_server(self):
        self._close_api()
        self.server.kill9()

    def restart_server(self):
        """Stops the server (SIGTERM; or after kill_server) and starts it
        again on the same data dir."""
        self._close_api()
        if self.server.running():
            self.server.stop()
        self.server.start()
        return self

    def _close_api(self):
        self._api = None  # the server's clients are closed when it stops

    # Namespaces and what the tests place in them.
    def create_namespace(self, ns):
        """`ns` on the federation and in every member (the ReplicaSet
        controller does not create namespaces)."""
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        response = self.api().post("/api/v1/namespaces", json=body, timeout=10)
        assert response.status_code in (201, 409), response.text
        for member in self.members.values():
            if member.alive() and not member.stopped:
                member.create_namespace(ns)

    def layout(self, ns, name):
        """{cluster: spec.replicas of its local ReplicaSet} (absent: 0)."""
        return {c: m.rs_replicas(ns, name) or 0 for c, m in self.members.items()
                if not m.stopped and m.alive()}

    def running_layout(self, ns, name, selector=None):
        selector = selector or f"app={name}"
        return {c: m.running_pods(ns, selector) for c, m in self.members.items()
                if not m.stopped and m.alive()}

    def wait_layout(self, ns, name, expected, timeout=60, probes=()):
        """Waits until every reachable member's local ReplicaSet has the
        replicas `expected` gives it (missing clusters: 0) and runs that many
        pods. Clusters in `probes` are short of capacity and may have up to
        PROBES more replicas, pending, while a probe for room lasts. Returns {"spec": ..., "running": ...}."""
        want = {c: expected.get(c, 0) for c in self.members if not self.members[c].stopped
                and self.members[c].alive()}
        seen = {}

        def spec_ok(c, n):
            return want[c] <= n <= want[c] + PROBES if c in probes else n == want[c]

        def check():
            seen["spec"] = self.layout(ns, name)
            if not all(spec_ok(c, n) for c, n in seen["spec"].items()):
                return False
            seen["running"] = self.running_layout(ns, name)
            return seen["running"] == want

        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                pytest.fail(f"replicaset {ns}/{name}: wanted spec.replicas and running pods "
                            f"{want} (probes {list(probes)}); saw {seen}; status "
                            f"{self.rs_status(ns, name)}")
            time.sleep(0.2)
        return seen

    def cleanup_namespace(self, ns):
        """Deletes the federated ReplicaSets of `ns` and whatever is left of
        them in the members, and waits until no pod of `ns` remains."""
        self.kubectl("delete", "rs", "--all", "-n", ns, "--wait=false", check=False)
        for member in self.members.values():
            if member.alive() and not member.stopped:
                member.kubectl("delete", "rs,pods", "--all", "-n", ns, "--grace-period=0",
                               "--force", "--wait=false", check=False)
        for member in self.members.values():
            if member.alive() and not member.stopped:
                wait_for(lambda m=member: not m.pods(ns, ""), f"{member.name}: pods of {ns} gone")

    def close(self):
        for member in self.members.values():
            if member.process is not None:
                member.terminate()
        if self.server.running():
            self.server.stop()


def attach_shows_probes(server, pod, *context, kubeconfig=None, probes=1):
    """`kubectl attach POD` shows what the pod's main process writes from
    then on: a readiness probe's line a second (the pods these tests make
    probe with `cat /tmp/ready`)."""
    attach = server.kubectl_popen(*context, "attach", pod, kubeconfig=kubeconfig)
    try:
        lines = LineReader(attach.stdout)
        for _ in range(probes):
            lines.wait_for_line(lambda l: l == "exec [cat /tmp/ready]: exit 0 (readiness probe)",
                                "a probe line through attach", 20)
    finally:
        attach.kill()
        attach.wait()


def plugin(fed, *args, check=True, timeout=60):
    """`kubectl flotilla ARGS`: kubectl finds kubectl-flotilla next to the
    binary under test, the federation through KUBECONFIG."""
    env = dict(os.environ, PATH=f"{os.path.dirname(FLOTILLA_BINARY)}:{os.environ['PATH']}",
               KUBECONFIG=fed.server.kubeconfig, HOME=fed.server.data_dir)
    result = subprocess.run([KUBECTL, "flotilla", *args], capture_output=True, text=True,
                            env=env, timeout=timeout)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def start_federation(root, members, server_args=FAST_FED_ARGS):
    """A started Federation with `members`: {name: (labels, member args)}
    or {name: (labels, member args, join args)}. The caller closes it."""
    fed = Federation(root, server_args).start()
    try:
        for name, (labels, args, *join_args) in members.items():
            fed.add_member(name, labels, args, wait=False,
                           join_args=join_args[0] if join_args else ())
        for name in members:
            fed.wait_ready(name)
    except BaseException:
        fed.close()
        raise
    return fed


def module_federation(prefix, members, server_args=FAST_FED_ARGS):
    """A module-scoped pytest fixture: a federation started with `members`
    (as start_federation takes them) for the whole module, closed after it.
    A suite names it `fed`: fed = module_federation("fed-x", {...})."""
    @pytest.fixture(scope="module")
    def fed(tmp_path_factory):
        federation = start_federation(tmp_path_factory.mktemp(prefix), members, server_args)
        try:
            yield federation
        finally:
            federation.close()
    return fed
