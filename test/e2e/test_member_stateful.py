"""StatefulSets, PersistentVolumeClaims and Services on a simulated member,
driven by the real kubectl as on a real cluster: a StatefulSet creates
web-0, web-1 and web-2 in order, each only once its predecessor is Ready;
its claims are Bound and outlive a scale-down; a rolling update goes through
`kubectl rollout status` and `rollout history` and `rollout undo` use the revisions; a
LoadBalancer service shows an EXTERNAL-IP from the member's pool; the
Endpoints and EndpointSlices of a headless service list the ready pods.
Needs the member's scheduler and kubelet (pods become Running and Ready)
besides the StatefulSet and service controllers."""

import ipaddress
import json
import os
import re
import subprocess
import threading

import pytest

from conftest import (FLOTILLA_BINARY, KUBECTL, START_TIMEOUT, LineReader, _die_with_parent,
                      stop_process, table, wait_for)

MEMBER_READY_RE = re.compile(r"Flotilla member \S+ ready at (https://127\.0\.0\.1:\d+)")
LB_CIDR = "172.18.5.0/29"
WAIT = 60  # seconds for a few pod start-ups (0.2 s each here) and reconciles

MANIFEST = """
apiVersion: v1
kind: Service
metadata:
  name: nginx
  labels: {app: nginx}
spec:
  clusterIP: None
  selector: {app: nginx}
  ports:
  - {name: web, port: 80, targetPort: web}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: nginx
  replicas: 3
  selector:
    matchLabels: {app: nginx}
  template:
    metadata:
      labels: {app: nginx}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - {name: web, containerPort: 8080}
  volumeClaimTemplates:
  - metadata: {name: www}
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests: {storage: 1Gi}
"""

LB_SERVICE = """
apiVersion: v1
kind: Service
metadata:
  name: web-lb
spec:
  type: LoadBalancer
  selector: {app: nginx}
  ports:
  - {port: 80, targetPort: web}
"""


class Member:
    """One `flotilla member` process with quick pod start-ups."""

    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.kubeconfig = os.path.join(data_dir, "kubeconfig")
        args = [FLOTILLA_BINARY, "member", "--data-dir", data_dir, "--secure-port", "0",
                "--pod-startup", "200ms", "--lb-cidr", LB_CIDR]
        self._log = open(os.path.join(data_dir, "member.log"), "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._log, text=True,
                                     preexec_fn=_die_with_parent)
        self.stdout = LineReader(self.proc.stdout)
        try:
            self.stdout.wait_for_line(lambda l: MEMBER_READY_RE.search(l), "the ready line",
                                      timeout=START_TIMEOUT)
        except BaseException:
            self.stop()
            raise

    def stop(self):
        stop_process(self.proc)
        self._log.close()

    def command(self, *args):
        return [KUBECTL, "--kubeconfig", self.kubeconfig, "--cache-dir",
                os.path.join(self.data_dir, "kubectl-cache"), *args]

    def kubectl(self, *args, check=True, input=None, timeout=150):
        result = subprocess.run(self.command(*args), capture_output=True, text=True,
                                timeout=timeout, input=input,
                                env=dict(os.environ, HOME=self.data_dir))
        if check and result.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} exited {result.returncode}\n"
                        f"stdout: {result.stdout}\nstderr: {result.stderr}")
        return result

    def get(self, *args):
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)


class PodWatch:
    """`kubectl get pods --watch --output-watch-events -o json`, decoded
    event by event on a thread: (type, name, ready) in arrival order."""

    def __init__(self, member, selector):
        self.events = []
        self._lock = threading.Lock()
        self.proc = subprocess.Popen(
            member.command("get", "pods", "-l", selector, "--watch", "--output-watch-events",
                           "-o", "json"),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env=dict(os.environ, HOME=member.data_dir), preexec_fn=_die_with_parent)
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self):
        decoder = json.JSONDecoder()
        buffer = ""
        for chunk in iter(lambda: self.proc.stdout.readline(), ""):
            buffer += chunk
            while True:
                stripped = buffer.lstrip()
                if not stripped:
                    buffer = ""
                    break
                try:
                    event, end = decoder.raw_decode(stripped)
                except json.JSONDecodeError:
                    buffer = stripped
                    break
                buffer = stripped[end:]
                pod = event.get("object", {})
                ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                            for c in pod.get("status", {}).get("conditions", []))
                with self._lock:
                    self.events.append((event.get("type"), pod["metadata"]["name"], ready))

    def snapshot(self):
        with self._lock:
            return list(self.events)

    def stop(self):
        stop_process(self.proc)


@pytest.fixture(scope="module")
def member(tmp_path_factory):
    m = Member(str(tmp_path_factory.mktemp("member")))
    yield m
    m.stop()


def ready_pods(member):
    pods = member.get("pods", "-l", "app=nginx")["items"]
    return {p["metadata"]["name"]: p for p in pods
            if any(c["type"] == "Ready" and c["status"] == "True"
                   for c in p.get("status", {}).get("conditions", []))}


def test_statefulset_creates_pods_in_order(member):
    watch = PodWatch(member, "app=nginx")
    try:
        member.kubectl("apply", "-f", "-", input=MANIFEST)
        wait_for(lambda: len(ready_pods(member)) == 3, "three ready pods", timeout=WAIT)
        wait_for(lambda: sum(1 for e in watch.snapshot() if e[0] == "ADDED") == 3,
                 "three ADDED events", timeout=WAIT)
    finally:
        watch.stop()
    events = watch.snapshot()
    added = [name for kind, name, _ in events if kind == "ADDED"]
    assert added == ["web-0", "web-1", "web-2"], events
    # OrderedReady: when web-N appeared, web-(N-1) had already been seen Ready.
    for n in (1, 2):
        at = events.index(("ADDED", f"web-{n}", False))
        assert any(name == f"web-{n - 1}" and ready for _, name, ready in events[:at]), events

    pod = member.get("pod", "web-1")
    assert pod["spec"]["hostname"] == "web-1"
    assert pod["spec"]["subdomain"] == "nginx"
    assert pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "web-1"
    assert pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "1"
    sts = member.get("statefulset", "web")
    assert pod["metadata"]["labels"]["controller-revision-hash"] == sts["status"]["updateRevision"]
    wait_for(lambda: member.get("statefulset", "web")["status"].get("currentReplicas") == 3,
             "currentReplicas 3")
    status = member.get("statefulset", "web")["status"]
    assert status["replicas"] == 3 and status["readyReplicas"] == 3
    assert status["currentRevision"] == status["updateRevision"]

    headers, rows = table(member.kubectl("get", "statefulsets").stdout)
    assert headers == ["NAME", "READY", "AGE"]
    assert rows[0]["NAME"] == "web" and rows[0]["READY"] == "3/3"


def test_claims_are_bound(member):
    headers, rows = table(member.kubectl("get", "pvc").stdout)
    assert headers[:6] == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS"]
    by_name = {r["NAME"]: r for r in rows}
    for n in range(3):
        row = by_name[f"www-web-{n}"]
        assert row["STATUS"] == "Bound"
        assert row["VOLUME"].startswith("pvc-")
        assert row["CAPACITY"] == "1Gi"
        assert row["ACCESS MODES"] == "RWO"
    volumes = member.get("pod", "web-2")["spec"]["volumes"]
    assert {"name": "www", "persistentVolumeClaim": {"claimName": "www-web-2"}} in volumes


def test_headless_endpoints_list_ready_pod_ips(member):
    pods = wait_for(lambda: (lambda p: p if len(p) == 3 else None)(ready_pods(member)),
                    "three ready pods", timeout=WAIT)
    ips = sorted(p["status"]["podIP"] for p in pods.values())

    def endpoint_ips():
        subsets = member.get("endpoints", "nginx").get("subsets") or []
        return sorted(a["ip"] for s in subsets for a in s.get("addresses", []))

    wait_for(lambda: endpoint_ips() == ips, f"endpoints {ips}", timeout=WAIT)
    subset = member.get("endpoints", "nginx")["subsets"][0]
    assert subset["ports"] == [{"name": "web", "port": 8080, "protocol": "TCP"}]
    assert sorted(a["hostname"] for a in subset["addresses"]) == ["web-0", "web-1", "web-2"]
    headers, rows = table(member.kubectl("get", "endpoints", "nginx").stdout)
    assert headers == ["NAME", "ENDPOINTS", "AGE"]
    assert set(rows[0]["ENDPOINTS"].split(",")) == {f"{ip}:8080" for ip in ips}

    slices = member.get("endpointslices", "-l", "kubernetes.io/service-name=nginx")["items"]
    assert len(slices) == 1
    s = slices[0]
    assert s["addressType"] == "IPv4"
    assert s["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == \
        "endpointslice-controller.k8s.io"
    assert sorted(e["addresses"][0] for e in s["endpoints"]) == ips
    assert all(e["conditions"]["ready"] for e in s["endpoints"])
    assert all(e.get("nodeName") for e in s["endpoints"])
    headers, rows = table(member.kubectl("get", "endpointslices").stdout)
    assert headers == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    row = next(r for r in rows if r["NAME"] == s["metadata"]["name"])
    assert row["ADDRESSTYPE"] == "IPv4" and row["PORTS"] == "8080"


def test_load_balancer_gets_an_external_ip(member):
    member.kubectl("apply", "-f", "-", input=LB_SERVICE)

    def ingress_ip():
        ingress = member.get("service", "web-lb").get("status", {}).get("loadBalancer", {})
        return (ingress.get("ingress") or [{}])[0].get("ip")

    ip = wait_for(ingress_ip, "an ingress IP", timeout=WAIT)
    assert ipaddress.ip_address(ip) in ipaddress.ip_network(LB_CIDR)
    headers, rows = table(member.kubectl("get", "svc", "web-lb").stdout)
    assert headers == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert rows[0]["TYPE"] == "LoadBalancer"
    assert rows[0]["EXTERNAL-IP"] == ip
    assert re.fullmatch(r"80:3\d{4}/TCP", rows[0]["PORT(S)"]), rows[0]
    _, rows = table(member.kubectl("get", "svc", "nginx").stdout)
    assert rows[0]["CLUSTER-IP"] == "None" and rows[0]["EXTERNAL-IP"] == "<none>"

    # A second LoadBalancer gets another address; deleting the first frees it.
    member.kubectl("apply", "-f", "-", input=LB_SERVICE.replace("web-lb", "web-lb2"))
    ip2 = wait_for(lambda: (member.get("service", "web-lb2").get("status", {})
                            .get("loadBalancer", {}).get("ingress") or [{}])[0].get("ip"),
                   "a second ingress IP", timeout=WAIT)
    assert ip2 != ip


def test_rolling_update_and_history(member):
    member.kubectl("set", "image", "statefulset/web", "nginx=nginx:1.26")
    member.kubectl("rollout", "status", "statefulset/web", "--timeout=90s", timeout=120)
    images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
              for p in member.get("pods", "-l", "app=nginx")["items"]}
    assert images == {"web-0": "nginx:1.26", "web-1": "nginx:1.26", "web-2": "nginx:1.26"}
    history = member.kubectl("rollout", "history", "statefulset/web").stdout
    revisions = [l.split()[0] for l in history.splitlines()[2:] if l.strip()]
    assert revisions == ["1", "2"], history
    revs = member.get("controllerrevisions")["items"]
    assert sorted(r["revision"] for r in revs) == [1, 2]
    _, rows = table(member.kubectl("get", "controllerrevisions").stdout)
    assert {r["CONTROLLER"] for r in rows} == {"statefulset.apps/web"}

    # Undo returns to the first template, whose revision becomes number 3.
    member.kubectl("rollout", "undo", "statefulset/web")
    member.kubectl("rollout", "status", "statefulset/web", "--timeout=90s", timeout=120)
    wait_for(lambda: {p["spec"]["containers"][0]["image"]
                      for p in member.get("pods", "-l", "app=nginx")["items"]} == {"nginx:1.25"},
             "pods back on nginx:1.25", timeout=WAIT)
    history = member.kubectl("rollout", "history", "statefulset/web").stdout
    revisions = [l.split()[0] for l in history.splitlines()[2:] if l.strip()]
    assert revisions == ["2", "3"], history


def test_scale_down_removes_highest_first_and_keeps_claims(member):
    watch = PodWatch(member, "app=nginx")
    try:
        wait_for(lambda: len(watch.snapshot()) >= 3, "the watch's initial pods")
        member.kubectl("scale", "statefulset/web", "--replicas=1")
        wait_for(lambda: [e[1] for e in watch.snapshot() if e[0] == "DELETED"] ==
                 ["web-2", "web-1"], "web-2 then web-1 deleted", timeout=WAIT)
    finally:
        watch.stop()
    names = [p["metadata"]["name"] for p in member.get("pods", "-l", "app=nginx")["items"]]
    assert names == ["web-0"]
    claims = {c["metadata"]["name"] for c in member.get("pvc")["items"]}
    assert {"www-web-0", "www-web-1", "www-web-2"} <= claims
