"""The README's quick start, in its order, on `flotilla up` with its three
members, checking each promise it makes (issue 36). When the README's walk-
through changes, this test changes with it.

One difference from a person at a terminal: the federation's unschedulable
threshold is 20 s instead of a minute (`flotilla up --server-arg`), so that
the walk-through takes a few minutes instead of many; nothing else waits on
it."""

import json
import os
import re
import subprocess
import urllib.request

import pytest

from conftest import FLOTILLA_BINARY, KUBECTL, LineReader, _die_with_parent, free_port, wait_for

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
UP_RE = re.compile(r"Flotilla is up: the federation at (https://127\.0\.0\.1:\d+) with (\d+) member")
BUILD_DIR = os.path.dirname(FLOTILLA_BINARY)


def example(name):
    return os.path.join(ROOT, "examples", name)


class Terminal:
    """A shell the README's commands run in: KUBECONFIG and PATH (for the
    kubectl plugin) as the README sets them."""

    def __init__(self, kubeconfig):
        self.env = dict(os.environ, KUBECONFIG=kubeconfig,
                        PATH=BUILD_DIR + os.pathsep + os.environ.get("PATH", ""))

    def run(self, *args, check=True, timeout=120):
        result = subprocess.run(list(args), capture_output=True, text=True, env=self.env,
                                timeout=timeout)
        if check:
            assert result.returncode == 0, f"{' '.join(args)}: {result.stdout}{result.stderr}"
        return result

    def kubectl(self, *args, **kw):
        return self.run(KUBECTL, *args, **kw)

    def get(self, *args):
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)


def dig(port, name):
    out = subprocess.run(["dig", "@127.0.0.1", "-p", str(port), "+short", "+tries=5", "+time=2",
                          name], capture_output=True, text=True, timeout=60)
    return sorted(line for line in out.stdout.splitlines() if line)


def breakdown(obj, annotation):
    text = obj["metadata"].get("annotations", {}).get(annotation, "{}")
    return json.loads(text).get("clusters", {})


def events(term, kind, name, reason):
    items = term.get("events")["items"]
    return [e["message"] for e in items if e["reason"] == reason
            and e["involvedObject"].get("kind") == kind and e["involvedObject"]["name"] == name]


@pytest.fixture
def walkthrough(tmp_path):
    directory = tmp_path / "flotilla-up"
    proc = subprocess.Popen(
        [FLOTILLA_BINARY, "up", "--dir", str(directory), "--secure-port", "0", "--dns-port", "0",
         "--server-arg=--unschedulable-threshold=20s"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=_die_with_parent)
    reader = LineReader(proc.stdout)
    try:
        line = reader.wait_for_line(lambda l: UP_RE.search(l) or "exited" in l or "did not" in l,
                                    "the up line", timeout=180)
        assert UP_RE.search(line), line
        dig_line = reader.wait_for_line(lambda l: l.strip().startswith("dig @"), "the dig line")
        dns_port = int(re.search(r"-p (\d+)", dig_line).group(1))
        yield Terminal(str(directory / "kubeconfig")), directory, dns_port
    finally:
        if proc.poll() is None:
            proc.send_signal(2)  # Ctrl-C
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_the_readme_quick_start_does_what_it_says(walkthrough):
    term, directory, dns_port = walkthrough

    # kubectl get clusters: the members, Ready, with zones and regions.
    def ready():
        items = term.get("clusters")["items"]
        ok = [c for c in items if any(x["type"] == "Ready" and x["status"] == "True"
                                      for x in c.get("status", {}).get("conditions", []))]
        return items if len(ok) == 3 else None
    clusters = {c["metadata"]["name"]: c for c in wait_for(ready, "three Ready members", 60)}
    assert set(clusters) == {"on-prem", "cloud-east", "cloud-west"}
    assert clusters["cloud-west"]["status"]["region"] == "us-west-2"
    assert clusters["on-prem"]["status"]["zones"] == ["on-prem-dc1-a", "on-prem-dc1-b"]

    # The spread example: all 50 ready and exactly 50 placed, cloud-west
    # holding what it can run (8) once its pods waited past the threshold.
    term.kubectl("apply", "-f", example("01-spread-evenly.yaml"))

    def spread_settled():
        rs = term.get("rs", "spread")
        counts = breakdown(rs, "federation.kubernetes.io/replica-set-status")
        planned = sum(c.get("planned", 0) for c in counts.values())
        status = rs.get("status", {})
        if (planned == 50 and status.get("replicas") == 50 and status.get("readyReplicas") == 50
                and counts.get("cloud-west", {}).get("estimatedCapacity") == 8):
            return counts
        return None
    counts = wait_for(spread_settled, "spread: 50 ready, 50 placed, cloud-west full at 8", 240)
    assert counts["cloud-west"]["planned"] == 8
    out = term.kubectl("get", "rs", "spread").stdout.split("\n")[1].split()
    assert out[1:4] == ["50", "50", "50"], out  # DESIRED CURRENT READY
    assert events(term, "ReplicaSet", "spread", "PlacementChanged")
    assert "PlacementChanged" in term.kubectl("describe", "rs", "spread").stdout
    term.kubectl("get", "configmaps,secrets,services", "-A")

    # A Deployment, rolled out one cluster at a time.
    term.kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=6")
    term.kubectl("rollout", "status", "deployment/web", "--timeout=180s", timeout=200)
    term.kubectl("set", "image", "deployment/web", "nginx=nginx:1.28")
    out = term.kubectl("rollout", "status", "deployment/web", "--timeout=180s", timeout=200).stdout
    assert 'deployment "web" successfully rolled out' in out
    history = term.kubectl("rollout", "history", "deployment/web").stdout
    assert re.search(r"^2\s", history, re.M), history
    shadows = [rs["metadata"]["name"] for rs in term.get("rs")["items"]
               if rs["metadata"]["name"].startswith("web-")]
    assert len(shadows) == 2, shadows
    started = events(term, "Deployment", "web", "RolloutStarted")
    for cluster in ("on-prem", "cloud-east", "cloud-west"):
        assert any(f"cluster {cluster}" in m for m in started), started

    # The HPA step: the CPU request rolls out everywhere, although
    # cloud-west (full of the spread's pods) cannot fit the new pods: its
    # share moves to the others and the rollout finishes.
    term.kubectl("set", "resources", "deployment", "web", "--requests=cpu=100m")
    out = term.kubectl("rollout", "status", "deployment/web", "--timeout=240s", timeout=260).stdout
    assert 'deployment "web" successfully rolled out' in out
    for member in ("on-prem", "cloud-east"):
        local = json.loads(term.kubectl(
            "--kubeconfig", str(directory / "members" / member / "kubeconfig"),
            "get", "deployment", "web", "-o", "json").stdout)
        resources = local["spec"]["template"]["spec"]["containers"][0]["resources"]
        assert resources["requests"]["cpu"] == "100m", member

    term.kubectl("autoscale", "deployment", "web", "--min=3", "--max=12", "--cpu-percent=50")
    hpa = wait_for(lambda: term.get("hpa", "web").get("status", {}).get("currentReplicas") and
                   term.get("hpa", "web"), "the federated HPA's status", 60)
    assert hpa["spec"]["minReplicas"] == 3 and hpa["spec"]["maxReplicas"] == 12
    term.run(FLOTILLA_BINARY, "member", "ctl", "demand", "deployment/web", "2000m",
             "--kubeconfig", str(directory / "members" / "on-prem" / "kubeconfig"))
    moved = wait_for(lambda: [m for m in events(term, "HorizontalPodAutoscaler", "web",
                                                "MaxReplicasMoved") if "on-prem" in m],
                     "MaxReplicasMoved to on-prem", 240)
    assert "to cluster on-prem" in moved[0], moved

    # A Service found by DNS, globally and by region: the load-balancer
    # addresses of the clusters where hello has ready pods (cloud-west is
    # full of the spread's pods by now, so hello runs in the other two).
    term.kubectl("apply", "-f", example("08-global-service.yaml"))

    def answered():
        counts = breakdown(term.get("deploy", "hello"), "federation.kubernetes.io/deployment-status")
        ready = sorted(n for n, c in counts.items() if c.get("ready", 0) > 0)
        addresses = dig(dns_port, "hello.default.flotilla.svc.flotilla.local")
        return ready if len(ready) >= 2 and len(addresses) == len(ready) else None
    ready = wait_for(answered, "the global name's addresses, one per cluster running hello", 150)
    assert "cloud-east" in ready
    assert len(dig(dns_port, "hello.default.flotilla.svc.us-east-1.flotilla.local")) == 1
    # An Ingress in front of hello: its host answers the addresses of the
    # members serving it, the ones running hello.
    term.kubectl("apply", "-f", example("16-ingress.yaml"))

    def ingress_answered():
        ing = term.get("ing", "hello")
        listed = sorted(i.get("ip") for i in
                        ing.get("status", {}).get("loadBalancer", {}).get("ingress", []))
        answered = sorted(dig(dns_port, "hello.flotilla.local"))
        return len(listed) == len(ready) and listed == answered
    wait_for(ingress_answered, "hello.flotilla.local answering the members serving hello", 120)

    # Where every replica runs; the clusters' health and capacity.
    status = term.kubectl("flotilla", "status", "-A").stdout
    assert re.search(r"replicaset/spread\s+50/50", status), status
    assert "deployment/web" in status
    table = term.kubectl("flotilla", "clusters").stdout
    for cluster in ("on-prem", "cloud-east", "cloud-west"):
        assert cluster in table
    port = free_port()
    dashboard = subprocess.Popen([FLOTILLA_BINARY, "dashboard", "--port", str(port)],
                                 env=term.env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    try:
        def page():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_for(page, "the dashboard's page", 30)
    finally:
        dashboard.terminate()
        dashboard.wait(timeout=30)

    # Into a member through the federation's cluster proxy: its nodes as the
    # member lists them, and the spread example's pods there.
    term.kubectl("flotilla", "kubeconfig", "--all")
    member = str(directory / "members" / "on-prem" / "kubeconfig")
    via_proxy = term.kubectl("--context", "flotilla-on-prem", "get", "nodes", "-o", "name").stdout
    direct = term.kubectl("--kubeconfig", member, "get", "nodes", "-o", "name").stdout
    assert sorted(via_proxy.split()) == sorted(direct.split()) and direct.strip()
    pods = term.kubectl("--context", "flotilla-on-prem", "get", "pods", "-o", "wide").stdout
    assert pods.splitlines()[0].split()[:3] == ["NAME", "READY", "STATUS"], pods
    assert any(line.startswith("spread-") for line in pods.splitlines()), pods
    # Every member's pods on the federation itself, with their cluster; and
    # a pod's logs read from its member.
    def federated_pods():
        out = term.kubectl("get", "pods", "-l", "app=spread", "-o", "wide").stdout.splitlines()
        clusters = {line.split()[1] for line in out[1:]}
        return out[0].split()[:3] == ["NAME", "CLUSTER", "READY"] and "on-prem" in clusters
    wait_for(federated_pods, "the spread pods of every member on the federation", 60)
    logs = term.kubectl("logs", "rs/spread").stdout
    assert '[flotilla-sim] container "' in logs, logs
    # The member's Events about its pods, copied into the federation's.
    def member_events():
        out = term.kubectl("get", "events", "-l", "federation.kubernetes.io/cluster=on-prem").stdout
        return any("pod/spread-" in line and "Started" in line for line in out.splitlines())
    wait_for(member_events, "on-prem's Events about the spread pods on the federation", 60)

    # RBAC, service accounts and their tokens.
    term.kubectl("create", "namespace", "team-a")
    term.kubectl("create", "serviceaccount", "ci", "-n", "team-a")
    term.kubectl("create", "rolebinding", "ci-edit", "--clusterrole=edit",
                 "--serviceaccount=team-a:ci", "-n", "team-a")
    ci = "system:serviceaccount:team-a:ci"
    yes = term.kubectl("auth", "can-i", "create", "deployments", "-n", "team-a", "--as", ci)
    assert yes.stdout.strip() == "yes"
    no = term.kubectl("auth", "can-i", "get", "secrets", "-n", "default", "--as", ci, check=False)
    assert no.stdout.strip() == "no"
    token = term.kubectl("create", "token", "ci", "-n", "team-a").stdout.strip()
    assert token.count(".") == 2

    # An application moved by hand, then a drain and an uncordon.
    term.kubectl("apply", "-f", example("09-coupled-application.yaml"))
    wait_for(lambda: term.get("deploy", "shop-web").get("status", {}).get("availableReplicas"),
             "the application running", 120)
    out = term.kubectl("flotilla", "migrate", "shop", "--to", "on-prem", timeout=900).stdout
    assert "available in on-prem" in out, out
    out = term.kubectl("flotilla", "drain", "on-prem", timeout=1000).stdout
    assert "cluster.federation/on-prem drained" in out, out

    def spread_off_on_prem():
        counts = breakdown(term.get("rs", "spread"), "federation.kubernetes.io/replica-set-status")
        planned = {name: c.get("planned", 0) for name, c in counts.items()}
        return planned if planned.get("on-prem", 0) == 0 and sum(planned.values()) == 50 else None
    wait_for(spread_off_on_prem, "spread off on-prem, 50 placed", 120)
    term.kubectl("flotilla", "uncordon", "on-prem")

    def spread_back():
        rs = term.get("rs", "spread")
        counts = breakdown(rs, "federation.kubernetes.io/replica-set-status")
        planned = {name: c.get("planned", 0) for name, c in counts.items()}
        return (planned.get("on-prem", 0) > 0 and sum(planned.values()) == 50
                and rs["status"].get("readyReplicas") == 50 and rs["status"]["replicas"] == 50)
    wait_for(spread_back, "spread back on on-prem, 50 placed and ready", 240)

    # A central policy: a labelled Deployment moves on premise.
    term.kubectl("apply", "-f", example("10-privacy-policy.yaml"))
    term.kubectl("create", "deployment", "vault", "--image=nginx:1.27", "--replicas=2")
    term.kubectl("label", "deployment", "vault", "privacy=sensitive")

    def vault_on_prem():
        d = term.get("deploy", "vault")
        placed = breakdown(d, "federation.kubernetes.io/deployment-status")
        where = {name: c.get("planned", 0) for name, c in placed.items() if c.get("planned")}
        return (where == {"on-prem": 2} and d["status"].get("availableReplicas") == 2
                and d["metadata"]["annotations"].get("clusterpropagationpolicy.karmada.io/name")
                == "privacy-sensitive-on-prem")
    wait_for(vault_on_prem, "vault on premise only, placed by the policy", 120)
    assert "privacy-sensitive-on-prem" in term.kubectl("get", "cpp").stdout
    explained = term.kubectl("flotilla", "explain", "deployment/vault").stdout
    assert "Placed by:   ClusterPropagationPolicy privacy-sensitive-on-prem" in explained, explained

    # The cloud's own registry, in the cloud members' copies only.
    term.kubectl("apply", "-f", example("11-overrides.yaml"))
    term.kubectl("create", "deployment", "storefront", "--image=docker.io/library/nginx:1.27",
                 "--replicas=3")
    image = "{.spec.template.spec.containers[0].image}"

    def member_image(cluster):
        there = Terminal(str(directory / "members" / cluster / "kubeconfig"))
        return there.kubectl("get", "deploy", "storefront", "-o", f"jsonpath={image}",
                             check=False).stdout
    wait_for(lambda: member_image("cloud-east") == "mirror.cloud.example.com/library/nginx:1.27"
             and member_image("on-prem") == "docker.io/library/nginx:1.27",
             "the mirror's image in cloud-east, the image as written on premise", 120)
    assert term.kubectl("get", "deploy", "storefront", "-o",
                        f"jsonpath={image}").stdout == "docker.io/library/nginx:1.27"

    # Any kind: a CRD, then an object of its kind, printed and scaled.
    term.kubectl("apply", "-f", example("12-custom-kind.yaml"))
    term.kubectl("wait", "--for", "condition=established",
                 "crd/crontabs.stable.example.com", "--timeout=60s", timeout=80)
    term.kubectl("apply", "-f", example("12-crontab.yaml"))
    printed = term.kubectl("get", "ct").stdout
    assert "SCHEDULE" in printed and "0 3 * * *" in printed
    term.kubectl("scale", "ct", "nightly", "--replicas=3")
    assert term.get("ct", "nightly")["spec"]["replicas"] == 3
    # The customization divides it: one per member.
    for cluster in ("on-prem", "cloud-east", "cloud-west"):
        there = Terminal(str(directory / "members" / cluster / "kubeconfig"))
        def one(there=there):
            r = there.kubectl("get", "ct", "nightly", "-o", "json", check=False)
            return r.returncode == 0 and json.loads(r.stdout)["spec"]["replicas"] == 1
        wait_for(one, f"{cluster}: crontab nightly with 1 replica", 120)
    offline = subprocess.run(
        [FLOTILLA_BINARY, "interpret", "-f", example("12-custom-kind.yaml"), "--operation",
         "InterpretReplica", "--desired-file", example("12-crontab.yaml")],
        capture_output=True, text=True, timeout=60)
    assert offline.returncode == 0 and "# [1/2] replica:\n1\n" in offline.stdout, offline

    # A batch Job run by the whole federation: its 12 completions divided
    # over the members with room for a pod (cloud-west is full by now).
    term.kubectl("apply", "-f", example("13-batch-job.yaml"))
    term.kubectl("wait", "--for=condition=complete", "job/render", "--timeout=300s", timeout=320)
    job = term.get("job", "render")
    assert job["status"]["succeeded"] == 12
    shares = {}
    for cluster in ("on-prem", "cloud-east", "cloud-west"):
        there = Terminal(str(directory / "members" / cluster / "kubeconfig"))
        local = there.kubectl("get", "job", "render", "-o", "json", check=False)
        if local.returncode == 0:
            shares[cluster] = json.loads(local.stdout)["spec"]["completions"]
    assert sum(shares.values()) == 12 and len(shares) >= 2, shares

    # A log agent on every node of every member, updated one cluster at a
    # time in the order its annotation names.
    term.kubectl("apply", "-f", example("14-daemonset.yaml"))
    term.kubectl("rollout", "status", "ds/node-logs", "--timeout=300s", timeout=320)
    ds = term.get("ds", "node-logs")
    members = {c: Terminal(str(directory / "members" / c / "kubeconfig"))
               for c in ("on-prem", "cloud-east", "cloud-west")}
    nodes = sum(len(m.get("nodes")["items"]) for m in members.values())
    assert ds["status"]["desiredNumberScheduled"] == nodes == ds["status"]["numberReady"]
    term.kubectl("set", "image", "ds/node-logs", "agent=docker.io/fluent/fluent-bit:3.1")
    term.kubectl("rollout", "status", "ds/node-logs", "--timeout=300s", timeout=320)
    for m in members.values():
        pods = m.get("pods", "-l", "app=node-logs")["items"]
        assert len(pods) == len(m.get("nodes")["items"])
        assert {p["spec"]["containers"][0]["image"] for p in pods} == {
            "docker.io/fluent/fluent-bit:3.1"}
    history = term.kubectl("rollout", "history", "ds/node-logs").stdout
    assert "1 " in history and "2 " in history, history

    # A disruption budget for the storefront, divided by where its 3 pods
    # run: every member with some gets its part, and the status sums them.
    term.kubectl("apply", "-f", example("15-disruption-budget.yaml"))
    def summed():
        pdb = term.get("pdb", "storefront")
        s = pdb.get("status", {})
        return (s.get("observedGeneration") == pdb["metadata"]["generation"]
                and s.get("expectedPods") == 3 and s.get("desiredHealthy", 0) >= 2)
    wait_for(summed, lambda: f"pdb storefront summed: {term.get('pdb', 'storefront')}", 120)
    parts = 0
    for m in members.values():
        local = m.kubectl("get", "pdb", "storefront", "-o", "json", check=False)
        if local.returncode == 0:
            parts += json.loads(local.stdout)["spec"]["minAvailable"]
    assert parts >= 2, parts

    # A nightly CronJob the federation runs itself; one run now, by hand,
    # is one federated Job divided over the members.
    term.kubectl("apply", "-f", example("17-cronjob.yaml"))
    term.kubectl("create", "job", "report-now", "--from=cronjob/report")
    wait_for(lambda: sum(1 for m in members.values()
                         if m.kubectl("get", "job", "report-now", check=False).returncode == 0) >= 1,
             "the run's Job in the members", 120)

    # A Deployment on premise with its ConfigMap, ServiceAccount and claim:
    # the claim only where it runs, Bound there and on the federation.
    term.kubectl("apply", "-f", example("18-app-with-storage.yaml"))
    term.kubectl("rollout", "status", "deploy/notes", "--timeout=120s", timeout=140)
    wait_for(lambda: term.get("pvc", "notes-data").get("status", {}).get("phase") == "Bound",
             "the federated claim Bound", 120)
    for name, m in members.items():
        has_claim = m.kubectl("get", "pvc", "notes-data", check=False).returncode == 0
        assert has_claim == (name == "on-prem"), name
        assert m.kubectl("get", "configmap", "notes-settings", check=False).returncode == 0, name

    # Each member is a Kubernetes cluster of its own.
    member = Terminal(str(directory / "members" / "on-prem" / "kubeconfig"))
    nodes = member.get("nodes")["items"]
    assert {n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes} == {
        "on-prem-dc1-a", "on-prem-dc1-b"}
    member.kubectl("create", "deployment", "local-web", "--image=nginx:1.27", "--replicas=3")
    member.kubectl("rollout", "status", "deployment/local-web", "--timeout=120s", timeout=140)
    pods = member.get("pods", "-l", "app=local-web")["items"]
    assert len(pods) == 3 and all(p["spec"].get("nodeName") for p in pods)
