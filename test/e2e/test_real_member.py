"""A real kube-apiserver as a member (issue 37), beside a simulated one.

The real member is Kubernetes 1.10's API server code on etcd with stand-in
controllers (a binder, a kubelet, ReplicaSet and Deployment controllers),
as `../shared/realmember/` in the team's workspace builds it. CI cannot
build it (it needs the archived Federation v1 repository), so this suite
runs when FLOTILLA_REAL_MEMBER names the binary and is skipped, saying so,
otherwise:

    FLOTILLA_REAL_MEMBER=/tmp/realmember/bin/real-member ctest -R e2e_real_member
"""

import base64
import json
import os
import secrets
import subprocess
import time

import pytest

from conftest import Etcd, _die_with_parent, free_port, stop_process, wait_for
from federation import FED_ARGS, Federation, join

REAL_MEMBER = os.environ.get("FLOTILLA_REAL_MEMBER", "")
pytestmark = pytest.mark.skipif(
    not REAL_MEMBER or not os.access(REAL_MEMBER, os.X_OK),
    reason="FLOTILLA_REAL_MEMBER does not name a real-member binary (a real Kubernetes 1.10 "
           "kube-apiserver; built from the archived Federation v1 repository, which CI cannot "
           "fetch)")
SERVER_ARGS = FED_ARGS + ["--cluster-failure-threshold", "2", "--recheck-delay", "1s",
                          "--member-change-delay", "200ms"]


class RealMember:
    """etcd and the real kube-apiserver on free loopback ports, with a
    self-signed certificate and an admin token; .kubeconfig to reach it."""

    def __init__(self, root):
        self.root = str(root)
        os.makedirs(self.root, exist_ok=True)
        self.etcd = Etcd(os.path.join(self.root, "etcd"))
        crt, key = os.path.join(self.root, "tls.crt"), os.path.join(self.root, "tls.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-addext",
                        "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", crt],
                       check=True, capture_output=True)
        token = secrets.token_hex(16)
        tokens = os.path.join(self.root, "tokens.csv")
        with open(tokens, "w") as f:
            f.write(f"{token},admin,admin,system:masters\n")
        port = free_port()
        self.url = f"https://127.0.0.1:{port}"
        self._log = open(os.path.join(self.root, "apiserver.log"), "w")
        self.proc = subprocess.Popen(
            [REAL_MEMBER, "--etcd-servers", self.etcd.url, "--bind-address", "127.0.0.1",
             "--advertise-address", "127.0.0.1", "--secure-port", str(port), "--insecure-port",
             "0", "--tls-cert-file", crt, "--tls-private-key-file", key, "--cert-dir",
             os.path.join(self.root, "certs"), "--token-auth-file", tokens,
             "--authorization-mode", "RBAC", "--enable-admission-plugins",
             "NamespaceLifecycle,LimitRanger,DefaultTolerationSeconds,ResourceQuota",
             "--sim-nodes", "2", "--sim-node-cpu", "8", "--logtostderr", "--v", "0"],
            stdout=self._log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        with open(crt) as f:
            ca = f.read()
        self.kubeconfig = os.path.join(self.root, "kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters:
- name: real
  cluster: {{server: "{self.url}", certificate-authority-data: "{base64.b64encode(ca.encode()).decode()}"}}
users:
- name: admin
  user: {{token: "{token}"}}
contexts:
- name: real
  context: {{cluster: real, user: admin}}
current-context: real
""")
        wait_for(lambda: self.kubectl("get", "--raw", "/healthz", check=False).stdout == "ok",
                 "the real member healthy", timeout=120)

    def kubectl(self, *args, check=True):
        out = subprocess.run(["kubectl", "--kubeconfig", self.kubeconfig, *args],
                             capture_output=True, text=True, timeout=60)
        if check:
            assert out.returncode == 0, f"kubectl {args}: {out.stderr}"
        return out

    def stop(self):
        stop_process(self.proc)
        self._log.close()
        self.etcd.stop()


@pytest.fixture(scope="module")
def fed(tmp_path_factory):
    root = tmp_path_factory.mktemp("fed-real")
    real = RealMember(root / "real1")
    federation = Federation(root, SERVER_ARGS).start()
    try:
        federation.add_member("sim", args=["--nodes", "1", "--node-cpu", "8"])
        join(federation.server, real, "real1")
        federation.wait_ready("real1")
        yield federation, real
    finally:
        federation.close()
        real.stop()


def updates(fed, cluster, resource):
    text = fed.api().get("/metrics").text
    for line in text.splitlines():
        if (line.startswith("flotilla_federation_member_requests_total{") and
                f'cluster="{cluster}"' in line and f'resource="{resource}"' in line and
                'operation="update"' in line and 'result="ok"' in line):
            return int(line.rsplit(" ", 1)[1])
    return 0


def test_a_real_member_reports_capacity_and_what_it_does_not_serve(fed):
    fed, real = fed

    def status():
        st = json.loads(fed.kubectl("get", "cluster", "real1", "-o", "json").stdout)["status"]
        return st if "resourceSummary" in st and "unsupportedKinds" in st else None
    st = wait_for(status, "real1's capacity and unsupported kinds", timeout=60)
    assert st["kubernetesVersion"].startswith("v1.10")
    assert "horizontalpodautoscalers.v2.autoscaling" in st["unsupportedKinds"]
    assert st["resourceSummary"]["allocatable"]["cpu"] == "16"


def test_rollout_status_finishes_and_copies_are_written_once(fed):
    fed, real = fed
    ns = "real-rollout"
    fed.create_namespace(ns)
    real.kubectl("create", "namespace", ns, check=False)
    fed.kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=4", "-n", ns)
    fed.kubectl("expose", "deployment", "web", "--port=80", "-n", ns)
    fed.kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=120s")
    fed.kubectl("set", "image", "deployment/web", "nginx=nginx:1.28", "-n", ns)
    out = fed.kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=120s").stdout
    assert 'deployment "web" successfully rolled out' in out
    wait_for(lambda: real.kubectl("get", "service", "web", "-n", ns, check=False).returncode == 0,
             "the Service in real1")
    before = {r: updates(fed, "real1", r) for r in ("deployments", "services")}
    time.sleep(8)  # a change that must not come: watched for, not awaited
    after = {r: updates(fed, "real1", r) for r in ("deployments", "services")}
    assert before == after, f"rewrites while nothing changed: {before} -> {after}"

    # A copy edited in the member is restored once.
    real.kubectl("scale", "deployment", "web", "--replicas=7", "-n", ns)
    wait_for(lambda: json.loads(real.kubectl("get", "deployment", "web", "-n", ns, "-o",
                                             "json").stdout)["spec"]["replicas"] == 2,
             "real1's copy restored", timeout=30)
    time.sleep(3)
    assert updates(fed, "real1", "deployments") == after["deployments"] + 1


def test_an_hpa_leaves_the_real_members_copy_and_says_why(fed):
    fed, real = fed
    ns = "real-hpa"
    fed.create_namespace(ns)
    real.kubectl("create", "namespace", ns, check=False)
    fed.kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=4", "-n", ns)
    fed.kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=120s")
    fed.kubectl("autoscale", "deployment", "web", "--min=1", "--max=4", "-n", ns)

    def warned():
        events = json.loads(fed.kubectl("get", "events", "-n", ns, "-o", "json").stdout)["items"]
        return [e["message"] for e in events if e["reason"] == "HPAUnsupportedInCluster"]
    assert "real1" in wait_for(warned, "the HPA's Warning about real1", timeout=30)[0]
    time.sleep(3)  # the copy must not go: watched for, not awaited
    local = json.loads(real.kubectl("get", "deployment", "web", "-n", ns, "-o", "json").stdout)
    assert local["spec"]["replicas"] == 2


def test_the_cluster_proxy_reaches_the_real_member_as_the_caller(fed):
    fed, real = fed
    proxy = "/apis/federation/v1beta1/clusters/real1/proxy"
    nodes = json.loads(fed.kubectl("get", "--raw", proxy + "/api/v1/nodes").stdout)
    direct = json.loads(real.kubectl("get", "--raw", "/api/v1/nodes").stdout)
    assert sorted(n["metadata"]["name"] for n in nodes["items"]) == \
        sorted(n["metadata"]["name"] for n in direct["items"]) != []
    # A watch streams through, and ends when the real member ends it.
    real.kubectl("create", "configmap", "through-proxy", "-n", "default")
    events = fed.kubectl("get", "--raw", proxy + "/api/v1/namespaces/default/configmaps"
                         "?watch=true&timeoutSeconds=2").stdout
    assert '"type":"ADDED"' in events and '"name":"through-proxy"' in events, events
    # The real member's RBAC judges the impersonated service account.
    fed.kubectl("create", "serviceaccount", "looker", "-n", "default")
    fed.kubectl("create", "clusterrole", "proxy-real1", "--verb=get",
                "--resource=clusters.federation/proxy", "--resource-name=real1")
    fed.kubectl("create", "clusterrolebinding", "looker-proxy", "--clusterrole=proxy-real1",
                "--serviceaccount=default:looker")
    token = fed.kubectl("create", "token", "looker", "-n", "default").stdout.strip()
    user = "system:serviceaccount:default:looker"

    last = []

    def as_looker():
        response = fed.server.raw(token=token).get(proxy + "/api/v1/namespaces/default/pods",
                                                   timeout=10)
        last[:] = [response.status_code, response.text]
        # (A Response of a 4xx is falsy: return its text.)
        return response.status_code == 403 and user in response.text and response.text
    denied = wait_for(as_looker, lambda: f"the real member's Forbidden for {user}; last: {last}")
    assert "cannot list pods" in denied, denied
    # (1.10's `view` is aggregated by a controller the real member does not
    # run; the role it aggregates holds the rules.)
    real.kubectl("create", "rolebinding", "looker-view", "--clusterrole=system:aggregate-to-view",
                 f"--user={user}", "-n", "default")
    def reads():
        response = fed.server.raw(token=token).get(
            proxy + "/api/v1/namespaces/default/configmaps", timeout=10)
        last[:] = [response.status_code, response.text]
        return response.status_code == 200 and response.text
    allowed = wait_for(reads, lambda: f"reads allowed on the real member; last: {last}")
    assert "through-proxy" in allowed
