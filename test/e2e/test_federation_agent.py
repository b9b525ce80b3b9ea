"""Members the federation cannot dial (issue 42): `flotilla agent` runs
beside a member, registers it (spec.connection Agent, no Secret) and keeps
one tunnel to the federation open, over which every request of the
federation to the member travels. With the real kubectl:

- a member in a network namespace of its own (created here, as root), its
  API on that namespace's loopback where the federation cannot reach it,
  joined by an agent in the same namespace: a Deployment rolls out and is
  updated with `kubectl rollout`, its pods are listed, logged, described
  and exec'd into through the federation; the tunnel cut (the link down) makes the cluster
  NotReady and a ReplicaSet fails over to a dialled member; the link back
  up, the agent redials and the cluster is Ready again, its local
  ReplicaSet the same object;
- beside it, on loopback: exec and attach into a member's pod (the agent
  connects back for the session); a second agent for the same cluster is refused
  while the first serves; the agent killed and started again with the same
  command reconnects as the same cluster; deleting the Cluster ends the
  agent with the federation's 404; an agent whose credentials may not
  create Clusters is refused (403) and registers nothing;
- registration with a bootstrap token (`kubectl flotilla register-token
  create`): the agent gets an identity of its own (the ServiceAccount
  flotilla-system/agent-NAME) kept in its data directory, reconnects with
  it after the token is gone, may not open another cluster's tunnel (403);
  deleting its ServiceAccount closes the tunnel and ends the agent (401);
  a bad, expired or deleted token is 401 with the reason, a wrong CA pin
  is refused before the token is sent, and nothing is registered.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import uuid

import pytest

from conftest import FLOTILLA_BINARY, KUBECTL, FlotillaServer, stop_process, wait_for
from federation import (FAST_FED_ARGS, SLOW, Federation, Member, attach_shows_probes, cluster,
                        plan, plugin, replicaset, ready_is)

MEMBER_ARGS = ["--nodes", "2", "--node-cpu", "20", "--pod-startup", "100ms"]
# The federation PINGs a tunnel every second; an agent that hears nothing
# for 3 s redials, at most 2 s apart.
FED_ARGS = FAST_FED_ARGS + ["--tunnel-keepalive", "1s", "--tunnel-recheck", "1s"]
AGENT_ARGS = ["--silence-timeout", "3s", "--max-backoff", "2s"]


class Agent:
    """A `flotilla agent` process; `netns`: run it in that namespace."""

    def __init__(self, fed, member, name, kubeconfig=None, netns=None, args=AGENT_ARGS,
                 federation_args=None, data_dir=None):
        if federation_args is None:
            federation_args = ["--federation-kubeconfig", kubeconfig or fed.server.kubeconfig]
        if "--data-dir" not in federation_args:
            # One agent of a cluster at a time: the same directory is the
            # same agent, restarted.
            federation_args = [*federation_args, "--data-dir",
                               data_dir or os.path.join(fed.root, f"agent-data-{name}")]
        self.argv = [FLOTILLA_BINARY, "agent", "--name", name, *federation_args,
                     "--cluster-kubeconfig", member.kubeconfig, *args]
        if netns:
            self.argv = ["ip", "netns", "exec", netns, *self.argv]
        self.log_path = os.path.join(fed.root, f"agent-{name}-{uuid.uuid4().hex[:6]}.log")
        self.proc = None

    def start(self):
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT)
        return self

    def output(self):
        with open(self.log_path) as f:
            return f.read()

    def wait_exit(self, timeout=60):
        code = self.proc.wait(timeout=timeout)
        self.log.close()
        return code

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            stop_process(self.proc)
        if self.proc is not None:
            self.log.close()

    def kill9(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()


def agent_cluster_ready(fed, name):
    fed.wait_ready(name)
    c = cluster(fed.server, name)
    assert c["spec"]["connection"] == "Agent"
    assert "secretRef" not in c["spec"]
    return c


def kubectl_json(fed, *args):
    return json.loads(fed.kubectl(*args, "-o", "json").stdout)


@pytest.fixture
def fed(tmp_path):
    federation = Federation(tmp_path, FED_ARGS).start()
    agents = []
    federation.agents = agents
    try:
        yield federation
    finally:
        for a in agents:
            a.stop()
        federation.close()


def start_agent(fed, member, name, **kwargs):
    agent = Agent(fed, member, name, **kwargs).start()
    fed.agents.append(agent)
    return agent


def loopback_member(fed, name):
    member = Member(fed.root, name, MEMBER_ARGS).start()
    fed.members[name] = member
    return member


class NetNs:
    """A network namespace with a veth link to this one: 10.231.N.1 here,
    10.231.N.2 there."""

    def __init__(self):
        self.name = "flt-" + uuid.uuid4().hex[:8]
        n = int(self.name[-2:], 16) % 250 + 1
        self.host_ip, self.ns_ip = f"10.231.{n}.1", f"10.231.{n}.2"
        self.host_if, self.ns_if = self.name + "h", self.name + "n"
        self._run("ip", "netns", "add", self.name)
        self._run("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.ns_if)
        self._run("ip", "link", "set", self.ns_if, "netns", self.name)
        self._run("ip", "addr", "add", self.host_ip + "/30", "dev", self.host_if)
        self._run("ip", "link", "set", self.host_if, "up")
        for cmd in (["ip", "addr", "add", self.ns_ip + "/30", "dev", self.ns_if],
                    ["ip", "link", "set", self.ns_if, "up"], ["ip", "link", "set", "lo", "up"]):
            self._run("ip", "netns", "exec", self.name, *cmd)

    @staticmethod
    def _run(*cmd):
        subprocess.run(cmd, check=True, capture_output=True, timeout=30)

    def link(self, up):
        """The namespace's end of the link down or up: its packets stop
        and start again, the federation's address here stays."""
        self._run("ip", "netns", "exec", self.name, "ip", "link", "set", self.ns_if,
                  "up" if up else "down")

    def delete(self):
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True, timeout=30)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, timeout=30)


def can_make_netns():
    if os.geteuid() != 0:
        return False
    probe = "flt-probe-" + uuid.uuid4().hex[:6]
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode == 0
    if made:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return made


PROXY = "/apis/federation/v1beta1/clusters/{name}/proxy"


def via_proxy(fed, name, path):
    """GET `path` of member `name` through the federation's cluster proxy;
    None when it answers with an error."""
    result = fed.kubectl("get", "--raw", PROXY.format(name=name) + path, check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


@pytest.mark.skipif(not can_make_netns(),
                    reason="needs root and `ip netns` (CI runs as root): the member's own "
                           "network namespace is what shows the federation cannot dial it")
def test_a_member_in_its_own_network_joined_by_its_agent(tmp_path):
    ns = NetNs()
    federation = Federation(tmp_path, FED_ARGS + ["--bind-address", ns.host_ip])
    agent = None
    edge = None
    try:
        federation.start()
        federation.add_member("cloud", {"location": "cloud"}, MEMBER_ARGS)
        federation.create_namespace("shop")
        # The member listens on its namespace's loopback only; this test
        # too reads it only through the federation.
        edge = Member(tmp_path, "edge", MEMBER_ARGS,
                      wrapper=["ip", "netns", "exec", ns.name]).start()
        port = int(edge.cluster.url.rsplit(":", 1)[1])
        for host in (ns.ns_ip, "127.0.0.1"):
            with pytest.raises(OSError):
                socket.create_connection((host, port), timeout=2).close()
        agent = Agent(federation, edge, "edge", netns=ns.name,
                      args=AGENT_ARGS + ["--labels", "location=edge"]).start()
        agent_cluster_ready(federation, "edge")
        # The federation puts its namespaces in the member, through the tunnel.
        wait_for(lambda: via_proxy(federation, "edge", "/api/v1/namespaces/shop") is not None,
                 "namespace shop on edge")

        # A Deployment on the agent's member only, rolled out and updated
        # with kubectl rollout.
        deployment = {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "annotations": {
                "federation.alpha.kubernetes.io/cluster-selector":
                    json.dumps([{"key": "location", "operator": "In",
                                 "values": ["edge"]}])}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}}}}
        federation.create(deployment, "shop")
        federation.kubectl("rollout", "status", "-n", "shop", "deploy/web", "--timeout=90s")
        federation.kubectl("set", "image", "-n", "shop", "deploy/web", "web=nginx:2")
        federation.kubectl("rollout", "status", "-n", "shop", "deploy/web", "--timeout=90s")

        # Its pods through the federation: listed, logged, described.
        def running_web():
            pods = kubectl_json(federation, "get", "pods", "-n", "shop", "-l", "app=web")["items"]
            return [p for p in pods if p["status"].get("phase") == "Running"
                    and p["spec"]["containers"][0]["image"] == "nginx:2"]
        wait_for(lambda: len(running_web()) == 3, "3 pods of nginx:2 on edge")
        pods = running_web()
        assert {p["metadata"]["labels"]["federation.kubernetes.io/cluster"]
                for p in pods} == {"edge"}
        pod = pods[0]["metadata"]["name"]
        assert "started" in federation.kubectl("logs", "-n", "shop", pod).stdout
        assert "nginx:2" in federation.kubectl("describe", "pod", "-n", "shop", pod).stdout
        assert federation.kubectl("exec", "-n", "shop", pod, "--", "hostname").stdout == pod + "\n"

        # A ReplicaSet on both; the tunnel cut: edge goes NotReady and
        # cloud runs every replica; back up: edge is Ready again, its local
        # ReplicaSet the same object.
        federation.create(replicaset("spread", 6), "shop")
        rs_path = "/apis/apps/v1/namespaces/shop/replicasets/spread"
        wait_for(lambda: (via_proxy(federation, "edge", rs_path) or {}).get(
            "status", {}).get("readyReplicas") == 3, "3 replicas ready on edge")
        before = via_proxy(federation, "edge", rs_path)["metadata"]["uid"]
        ns.link(False)
        federation.wait_not_ready("edge")
        wait_for(lambda: federation["cloud"].rs_replicas("shop", "spread") == 6,
                 "cloud running all 6 replicas", timeout=SLOW)
        ns.link(True)
        federation.wait_ready("edge")
        assert via_proxy(federation, "edge", rs_path)["metadata"]["uid"] == before
        assert agent.output().count("the tunnel to the federation is up") >= 2
    finally:
        if agent is not None:
            agent.stop()
        if edge is not None:
            edge.terminate()
        federation.close()
        ns.delete()


def test_a_second_agent_is_refused_and_a_restarted_one_reconnects(fed):
    member = loopback_member(fed, "edge")
    first = start_agent(fed, member, "edge")
    agent_cluster_ready(fed, "edge")
    # Another agent, with a directory of its own: refused while the first
    # holds the cluster.
    second = start_agent(fed, member, "edge", data_dir=os.path.join(fed.root, "second-agent"))
    wait_for(lambda: "is held by another agent" in second.output(),
             "the second agent refused")
    second.stop()
    assert ready_is(fed.server, "edge", "True")
    # One with the first's directory is refused before it dials.
    same_dir = start_agent(fed, member, "edge")
    assert same_dir.wait_exit() == 1
    assert "runs with the data directory" in same_dir.output()

    fed.create_namespace("shop")
    fed.create(replicaset("web", 2), "shop")
    fed.wait_layout("shop", "web", {"edge": 2})
    uid = member.local_rs("shop", "web")["metadata"]["uid"]
    first.kill9()
    fed.wait_not_ready("edge")
    # Restarted with its directory: the same instance, let in at once (the
    # claim of the one killed has not lapsed).
    restarted = start_agent(fed, member, "edge")
    agent_cluster_ready(fed, "edge")
    instance = open(os.path.join(fed.root, "agent-data-edge", "edge", "instance")).read().strip()
    with open(fed.server.log_path) as f:
        assert f.read().count(f"(instance {instance}) connected") >= 2
    assert "is held by another agent" not in restarted.output()
    fed.wait_layout("shop", "web", {"edge": 2})
    assert member.local_rs("shop", "web")["metadata"]["uid"] == uid
    # The cluster proxy reaches it too.
    version = json.loads(fed.kubectl("get", "--raw",
                                     "/apis/federation/v1beta1/clusters/edge/proxy/version").stdout)
    assert version["gitVersion"].startswith("v1.")


def test_exec_and_attach_reach_a_member_behind_its_agent(fed):
    """kubectl exec and attach into a pod of a member behind its agent: the
    upgrade goes through the tunnel and the agent connects back to the
    federation for the session's bytes (docs/federation.md)."""
    member = loopback_member(fed, "edge")
    start_agent(fed, member, "edge")
    agent_cluster_ready(fed, "edge")
    shell = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shell"},
             "spec": {"containers": [{"name": "app", "image": "busybox:1.36",
                                      "command": ["sh", "-c", "serve"],
                                      "readinessProbe": {"exec": {"command": ["cat", "/tmp/ready"]},
                                                         "periodSeconds": 1}}]}}
    member.kubectl("create", "-n", "default", "-f", "-", input=json.dumps(shell))
    wait_for(lambda: fed.kubectl("exec", "shell", "--", "true", check=False).returncode == 0,
             "an exec into shell through the agent", timeout=60)
    ran = fed.kubectl("exec", "shell", "--", "sh", "-c", "hostname; exit 3", check=False)
    assert ran.returncode == 3 and ran.stdout == "shell\n", (ran.stdout, ran.stderr)
    assert "command terminated with exit code 3" in ran.stderr, ran.stderr
    typed = fed.kubectl("exec", "-i", "shell", "--", "cat", input="line 1\nline 2\n")
    assert typed.stdout == "line 1\nline 2\n", typed.stdout
    # A refusal before the upgrade comes back as the member words it.
    unknown = fed.kubectl("exec", "shell", "-c", "nope", "--", "true", check=False)
    assert "container nope is not valid for pod shell" in unknown.stderr, unknown.stderr
    attach_shows_probes(fed.server, "shell")


def test_deleting_the_cluster_ends_its_agent(fed):
    member = loopback_member(fed, "edge")
    agent = start_agent(fed, member, "edge")
    agent_cluster_ready(fed, "edge")
    fed.kubectl("delete", "cluster", "edge")
    assert agent.wait_exit() == 1
    assert 'clusters.federation "edge" not found' in agent.output()


def test_a_cascading_unjoin_deletes_through_the_agent_then_ends_it(fed):
    member = loopback_member(fed, "edge")
    agent = start_agent(fed, member, "edge")
    agent_cluster_ready(fed, "edge")
    fed.create_namespace("shop")
    fed.create(replicaset("web", 2), "shop")
    fed.wait_layout("shop", "web", {"edge": 2})
    # The member's own ReplicaSet, which the federation did not make.
    member.kubectl("create", "namespace", "own")
    member.kubectl("create", "configmap", "mine", "-n", "own")

    out = plugin(fed, "unjoin", "edge", "--cascade")
    assert "replicasets shop/web deleted from the member" in out.stdout, out.stdout
    assert "cluster.federation/edge unjoined" in out.stdout
    assert fed.kubectl("get", "cluster", "edge", check=False).returncode != 0
    wait_for(lambda: member.kubectl("get", "replicasets", "-A", "-o", "name").stdout == "",
             "the federation's ReplicaSet gone from the member")
    # What the member had of its own stays.
    assert member.kubectl("get", "configmap", "mine", "-n", "own").returncode == 0
    # Its Cluster gone, the agent ends.
    assert agent.wait_exit() == 1
    assert 'clusters.federation "edge" not found' in agent.output()


def test_each_server_announces_itself_in_a_lease(fed, tmp_path):
    """What agents find the federation's servers by: each server's Lease,
    with the URL it serves on, or the one it is told to advertise; gone
    when the server stops."""
    def servers(kubeconfig_server):
        out = kubeconfig_server.kubectl("get", "lease", "-n", "kube-system", "-l",
                                        "apiserver.kubernetes.io/identity=flotilla-apiserver",
                                        "-o", "json").stdout
        return {i["metadata"]["name"]: i["metadata"]["annotations"]["federation.kubernetes.io/url"]
                for i in json.loads(out)["items"]}

    assert list(servers(fed.server).values()) == [fed.server.url]
    advertised = FlotillaServer(str(tmp_path / "advertised"),
                                ["--controllers=cluster", "--advertise-url",
                                 "https://federation.example:7443"]).start()
    try:
        assert list(servers(advertised).values()) == ["https://federation.example:7443"]
        bad = subprocess.run([FLOTILLA_BINARY, "server", "--data-dir", str(tmp_path / "bad"),
                              "--advertise-url", "federation.example:7443"],
                             capture_output=True, text=True, timeout=60)
        assert bad.returncode != 0 and "must be an https:// URL" in bad.stderr, bad.stderr
    finally:
        advertised.stop()
    # Stopped, a server takes its Lease with it.
    fed.server.stop()
    fed.server.start()
    assert list(servers(fed.server).values()) == [fed.server.url]


def test_an_agent_without_the_right_to_register_is_refused(fed):
    member = loopback_member(fed, "edge")
    agent = start_agent(fed, member, "edge", kubeconfig=fed.server.readonly_kubeconfig)
    assert agent.wait_exit() == 1
    assert "forbidden" in agent.output().lower()
    assert fed.kubectl("get", "cluster", "edge", check=False).returncode != 0


def register_token(fed, *args):
    """`kubectl flotilla register-token create ARGS`: the token and the
    agent's federation flags from the command it prints."""
    out = plugin(fed, "register-token", "create", *args).stdout
    token = re.search(r"--token ([a-z0-9]{6}\.[a-z0-9]{16})", out).group(1)
    server = re.search(r"--federation-server (\S+)", out).group(1)
    pin = re.search(r"--ca-cert-hash (sha256:[0-9a-f]{64})", out).group(1)
    assert f"Bootstrap token {token}" in out
    return token, ["--federation-server", server, "--token", token, "--ca-cert-hash", pin]


def token_agent(fed, member, name, flags, data_dir):
    return start_agent(fed, member, name,
                       federation_args=[*flags, "--data-dir", str(data_dir)])


def test_an_agent_registers_with_a_bootstrap_token_and_keeps_its_own_identity(fed, tmp_path):
    member = loopback_member(fed, "edge")
    token, flags = register_token(fed, "--ttl", "10m", "--name", "edge")
    data = tmp_path / "agent-data"
    agent = token_agent(fed, member, "edge", flags, data)
    agent_cluster_ready(fed, "edge")
    identity = data / "edge" / "kubeconfig"
    assert oct(identity.stat().st_mode & 0o777) == "0o600"
    assert token not in identity.read_text()
    # Its identity: a ServiceAccount owned by the Cluster, and RBAC for its
    # own cluster only.
    sa = json.loads(fed.kubectl("get", "sa", "-n", "flotilla-system", "agent-edge",
                                "-o", "json").stdout)
    assert sa["metadata"]["ownerReferences"][0]["name"] == "edge"
    as_agent = ["--kubeconfig", str(identity)]
    assert fed.kubectl(*as_agent, "auth", "can-i", "create", "clusters/edge",
                       "--subresource=tunnel").stdout.strip() == "yes"
    # The federation's servers, each a Lease.
    assert fed.kubectl(*as_agent, "auth", "can-i", "list", "leases.coordination.k8s.io",
                       "-n", "kube-system").stdout.strip() == "yes"
    for other in (["create", "clusters/cloud", "--subresource=tunnel"],
                  ["get", "clusters/cloud"], ["create", "clusters"], ["list", "secrets", "-A"],
                  ["update", "leases.coordination.k8s.io", "-n", "kube-system"]):
        assert fed.kubectl(*as_agent, "auth", "can-i", *other,
                           check=False).stdout.strip() == "no", other

    fed.create_namespace("shop")
    fed.create(replicaset("web", 2), "shop")
    fed.wait_layout("shop", "web", {"edge": 2})

    # The token gone, the agent restarted with the same command reconnects
    # with the identity it keeps.
    assert token.split(".")[0] in plugin(fed, "register-token", "list").stdout
    plugin(fed, "register-token", "delete", token)
    assert token.split(".")[0] not in plugin(fed, "register-token", "list").stdout
    agent.kill9()
    fed.wait_not_ready("edge")
    agent = token_agent(fed, member, "edge", flags, data)
    agent_cluster_ready(fed, "edge")
    wait_for(lambda: "connecting as the identity kept in" in agent.output(), "identity reused")
    fed.wait_layout("shop", "web", {"edge": 2})

    # Its identity used for another cluster's name: 403, nothing served.
    stolen = tmp_path / "stolen"
    (stolen / "cloud").mkdir(parents=True)
    (stolen / "cloud" / "kubeconfig").write_text(identity.read_text())
    thief = token_agent(fed, member, "cloud", flags, stolen)
    assert thief.wait_exit() == 1
    assert 'cannot create resource "clusters/tunnel"' in thief.output()

    # Revoked: the ServiceAccount deleted closes the tunnel; the agent's
    # next dial is 401 and it ends, saying what to do.
    fed.kubectl("delete", "sa", "-n", "flotilla-system", "agent-edge")
    assert agent.wait_exit() == 1
    assert "is no longer valid" in agent.output()
    fed.wait_not_ready("edge")

    # Registered again with a new token: the same Cluster, a new identity.
    shutil.rmtree(data)
    _, flags = register_token(fed)
    token_agent(fed, member, "edge", flags, data)
    agent_cluster_ready(fed, "edge")
    fed.wait_layout("shop", "web", {"edge": 2})


def test_bad_expired_and_misused_bootstrap_tokens_register_nothing(fed, tmp_path):
    member = loopback_member(fed, "edge")
    token, flags = register_token(fed, "--ttl", "2s", "--description", "short")
    listed = plugin(fed, "register-token", "list").stdout
    assert token.split(".")[0] in listed and "short" in listed

    def refused(flags, name="edge"):
        agent = token_agent(fed, member, name, flags, tmp_path / uuid.uuid4().hex)
        assert agent.wait_exit() == 1
        assert fed.kubectl("get", "cluster", name, check=False).returncode != 0
        return agent.output()

    # A wrong CA pin: refused before the token is sent.
    wrong_pin = flags[:-1] + ["sha256:" + "0" * 64]
    assert "presents no CA certificate whose public key is sha256:000" in refused(wrong_pin)
    # A token no Secret holds.
    bad = [f if f != token else "abcdef.0123456789abcdef" for f in flags]
    assert "Unauthorized: invalid bootstrap token" in refused(bad)
    # Expired: the tokencleaner deletes its Secret (the 401 that says
    # "expired at" in the moment between is rbac_authorizer_test's), and it
    # registers nothing.
    token_id = token.split(".")[0]
    wait_for(lambda: fed.kubectl("get", "secret", "-n", "kube-system",
                                 f"bootstrap-token-{token_id}", check=False).returncode != 0,
             "the expired token deleted", timeout=SLOW)
    assert token_id not in plugin(fed, "register-token", "list").stdout
    assert "Unauthorized: invalid bootstrap token" in refused(flags)

    # A cluster registered already, and one joined directly, are not
    # taken over by another token.
    _, good = register_token(fed)
    token_agent(fed, member, "edge", good, tmp_path / "first")
    agent_cluster_ready(fed, "edge")
    second = token_agent(fed, member, "edge", good, tmp_path / "second")
    assert second.wait_exit() == 1
    assert 'cluster "edge" is registered already' in second.output()
    fed.add_member("cloud", {}, MEMBER_ARGS)
    direct = token_agent(fed, member, "cloud", good, tmp_path / "third")
    assert direct.wait_exit() == 1
    assert "joined to the federation directly" in direct.output()
    # A viewer may not make tokens.
    viewer = plugin(fed, "register-token", "create", "--kubeconfig",
                    fed.server.readonly_kubeconfig, check=False)
    assert viewer.returncode == 1 and "forbidden" in viewer.stderr
