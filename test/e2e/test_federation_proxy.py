"""The cluster proxy end to end (docs/federation.md, "Into the members"):
`kubectl flotilla kubeconfig` writes a context per member that goes through
/apis/federation/v1beta1/clusters/NAME/proxy, and the real kubectl and the
official Python client read and write two `flotilla member` clusters with
only the federation's credentials: nodes, pods of a federated ReplicaSet,
`get -w` streaming, `describe`, a create that lands in the member; the
caller is impersonated on the member (`auth whoami` there says who); RBAC on
clusters/proxy decides first, per cluster and verb, then the member's own
RBAC for the impersonated user; a member that is down is a 503 naming it."""

import json
import os
import shutil
import subprocess

import pytest
import yaml

from conftest import KUBECTL, FLOTILLA_BINARY, LineReader, wait_for
from federation import attach_shows_probes, module_federation, replicaset
from objects import configmap

fed = module_federation("fed-proxy", {"a": ({}, []), "b": ({}, [])})


def plugin_env(fed, kubeconfig):
    return dict(os.environ, PATH=f"{os.path.dirname(FLOTILLA_BINARY)}:{os.environ['PATH']}",
                KUBECONFIG=kubeconfig, HOME=fed.server.data_dir)


@pytest.fixture(scope="module")
def kubeconfig(fed, tmp_path_factory):
    """A copy of the federation's kubeconfig with the members' contexts
    that `kubectl flotilla kubeconfig --all` added."""
    path = str(tmp_path_factory.mktemp("proxy-kubeconfig") / "config")
    shutil.copy(fed.server.kubeconfig, path)
    result = subprocess.run([KUBECTL, "flotilla", "kubeconfig", "--all"], capture_output=True,
                            text=True, env=plugin_env(fed, path), timeout=60)
    assert result.returncode == 0, result.stderr
    assert 'Context "flotilla-a" set in' in result.stdout, result.stdout
    assert "/apis/federation/v1beta1/clusters/b/proxy" in result.stdout, result.stdout
    return path


def in_member(fed, kubeconfig, name, *args, check=True, input=None):
    return fed.server.kubectl("--context", f"flotilla-{name}", *args, kubeconfig=kubeconfig,
                              check=check, input=input)


def test_the_kubeconfig_command_adds_contexts_and_keeps_the_rest(fed, kubeconfig):
    doc = yaml.safe_load(open(kubeconfig))
    original = yaml.safe_load(open(fed.server.kubeconfig))
    assert doc["current-context"] == original["current-context"]
    assert doc["users"] == original["users"]
    contexts = {c["name"]: c["context"] for c in doc["contexts"]}
    assert set(contexts) == {original["current-context"], "flotilla-a", "flotilla-b"}
    user = original["contexts"][0]["context"]["user"]
    assert contexts["flotilla-a"] == {"cluster": "flotilla-a", "user": user}
    # An unknown cluster, and neither names nor --all, are errors.
    env = plugin_env(fed, kubeconfig)
    bad = subprocess.run([KUBECTL, "flotilla", "kubeconfig", "nope"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert bad.returncode == 1 and 'clusters.federation "nope" not found' in bad.stderr, bad.stderr
    none = subprocess.run([KUBECTL, "flotilla", "kubeconfig"], capture_output=True, text=True,
                          env=env, timeout=60)
    assert none.returncode == 1 and "--all" in none.stderr, none.stderr


def test_kubectl_reads_each_member_through_the_proxy(fed, kubeconfig):
    for name in ("a", "b"):
        out = in_member(fed, kubeconfig, name, "get", "nodes", "-o", "name").stdout.split()
        assert sorted(n.removeprefix("node/") for n in out) == sorted(fed[name].nodes())
    fed.create(replicaset("web", 4, cpu="100m"), "default")

    def pods_everywhere():
        pods = {n: sorted(p["metadata"]["name"] for p in fed[n].pods("default", "app=web")
                          if p["status"].get("phase") == "Running") for n in ("a", "b")}
        return sum(len(v) for v in pods.values()) == 4 and pods
    pods = wait_for(pods_everywhere, "web's 4 pods running in the members", timeout=60)
    for name in ("a", "b"):
        listed = json.loads(in_member(fed, kubeconfig, name, "get", "pods", "-A", "-l", "app=web",
                                      "-o", "json").stdout)
        assert sorted(p["metadata"]["name"] for p in listed["items"]) == pods[name]
        table = in_member(fed, kubeconfig, name, "get", "pods", "-l", "app=web").stdout
        assert table.splitlines()[0].split()[:3] == ["NAME", "READY", "STATUS"], table
    pod = next(n for n in ("a", "b") if pods[n])
    described = in_member(fed, kubeconfig, pod, "describe", "pod", pods[pod][0]).stdout
    assert f"Name:             {pods[pod][0]}" in described, described
    # Not found on the member is the member's answer.
    missing = in_member(fed, kubeconfig, "a", "get", "pod", "nope", check=False)
    assert missing.returncode == 1 and 'pods "nope" not found' in missing.stderr, missing.stderr


def test_a_watch_streams_through_the_proxy(fed, kubeconfig):
    watch = fed.server.kubectl_popen("--context", "flotilla-a", "get", "configmaps", "-w",
                                     "-n", "default", kubeconfig=kubeconfig)
    try:
        lines = LineReader(watch.stdout)
        # The first comes in the list or the watch; once it is printed the
        # watch is open, and the second can only come through it.
        for name in ("streamed", "streamed-2"):
            fed["a"].kubectl("create", "-f", "-", input=json.dumps(configmap(name)))
            lines.wait_for_line(lambda l: l.split()[:1] == [name], f"ConfigMap {name} in the watch")
    finally:
        watch.kill()
        watch.wait()


def test_logs_and_events_of_member_pods_through_the_proxy(fed, kubeconfig):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "prober"},
           "spec": {"containers": [{"name": "app", "image": "busybox:1.36",
                                    "command": ["sh", "-c"], "args": ["serve --port 8080"],
                                    "readinessProbe": {"exec": {"command": ["cat", "/tmp/ready"]},
                                                       "periodSeconds": 1}}]}}
    in_member(fed, kubeconfig, "a", "create", "-f", "-", input=json.dumps(pod))
    wait_for(lambda: in_member(fed, kubeconfig, "a", "logs", "prober", check=False).returncode == 0,
             "prober started", timeout=60)
    logs = in_member(fed, kubeconfig, "a", "logs", "prober").stdout.splitlines()
    assert logs[0].startswith('[flotilla-sim] container "app" started: image busybox:1.36'), logs
    assert logs[1] == "[flotilla-sim] exec: sh -c serve --port 8080", logs
    tail = in_member(fed, kubeconfig, "a", "logs", "prober", "--tail=1", "--timestamps").stdout
    stamp, line = tail.rstrip("\n").split(" ", 1)
    assert stamp.endswith("Z") and line == "exec [cat /tmp/ready]: exit 0 (readiness probe)", tail
    # -f streams each probe as it happens.
    follow = fed.server.kubectl_popen("--context", "flotilla-a", "logs", "-f", "prober",
                                      "--since=1s", kubeconfig=kubeconfig)
    try:
        lines = LineReader(follow.stdout)
        for _ in range(3):
            lines.wait_for_line(lambda l: l.endswith("(readiness probe)"), "a probe line", 20)
    finally:
        follow.kill()
        follow.wait()
    # A container the pod does not have, as kube words it.
    unknown = in_member(fed, kubeconfig, "a", "logs", "prober", "-c", "nope", check=False)
    assert "container nope is not valid for pod prober" in unknown.stderr, unknown.stderr
    events = json.loads(in_member(fed, kubeconfig, "a", "get", "events", "--field-selector",
                                  "involvedObject.name=prober", "-o", "json").stdout)
    assert {"Scheduled", "Started"} <= {e["reason"] for e in events["items"]}, events


def test_exec_and_attach_through_the_proxy(fed, kubeconfig):
    """kubectl exec and attach into a member's pod through its context, and
    the Python client's exec: the WebSocket upgrade goes on to the member
    and its bytes both ways (kubectl speaks v5.channel.k8s.io, the Python
    client v4)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shell"},
           "spec": {"containers": [{"name": "app", "image": "busybox:1.36",
                                    "command": ["sh", "-c", "serve"],
                                    "env": [{"name": "COLOR", "value": "blue"}],
                                    "readinessProbe": {"exec": {"command": ["cat", "/tmp/ready"]},
                                                       "periodSeconds": 1}}]}}
    in_member(fed, kubeconfig, "a", "create", "-f", "-", input=json.dumps(pod))
    wait_for(lambda: in_member(fed, kubeconfig, "a", "exec", "shell", "--", "true",
                               check=False).returncode == 0, "an exec into shell", timeout=60)
    ran = in_member(fed, kubeconfig, "a", "exec", "shell", "--", "sh", "-c",
                    "echo $HOSTNAME $COLOR; exit 3", check=False)
    assert ran.returncode == 3 and ran.stdout == "shell blue\n", (ran.stdout, ran.stderr)
    assert "command terminated with exit code 3" in ran.stderr, ran.stderr
    # stdin goes to the member and the answer comes back.
    typed = in_member(fed, kubeconfig, "a", "exec", "-i", "shell", "--", "cat",
                      input="line 1\nline 2\n")
    assert typed.stdout == "line 1\nline 2\n", typed.stdout
    missing = in_member(fed, kubeconfig, "a", "exec", "shell", "--", "curl", check=False)
    assert missing.returncode == 1
    assert 'exec: "curl": executable file not found in $PATH' in missing.stderr, missing.stderr
    # Refusals before the upgrade pass through as the member words them.
    unknown = in_member(fed, kubeconfig, "a", "exec", "shell", "-c", "nope", "--", "true",
                        check=False)
    assert "container nope is not valid for pod shell" in unknown.stderr, unknown.stderr
    forward = in_member(fed, kubeconfig, "a", "port-forward", "shell", "18080:80", check=False)
    assert forward.returncode == 1
    assert "port forwarding is not served by a simulated member" in forward.stderr, forward.stderr
    # attach shows the main process's output as it comes: a probe a second.
    attach_shows_probes(fed.server, "shell", "--context", "flotilla-a", kubeconfig=kubeconfig,
                        probes=2)

    from kubernetes import client, config
    from kubernetes.stream import stream
    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, context="flotilla-a",
                            client_configuration=configuration)
    with client.ApiClient(configuration) as api:
        out = stream(client.CoreV1Api(api).connect_get_namespaced_pod_exec, "shell", "default",
                     command=["printenv", "COLOR"], stderr=True, stdin=False, stdout=True,
                     tty=False)
        assert out == "blue\n", out


def test_writes_land_in_the_member_as_the_caller(fed, kubeconfig):
    in_member(fed, kubeconfig, "b", "create", "configmap", "via-proxy", "--from-literal=k=v")
    local = json.loads(fed["b"].kubectl("get", "configmap", "via-proxy", "-o", "json").stdout)
    assert local["data"] == {"k": "v"}
    assert fed["a"].kubectl("get", "configmap", "via-proxy", check=False).returncode == 1
    # The member sees the federation's user, impersonated.
    fed_user = json.loads(fed.kubectl("auth", "whoami", "-o", "json").stdout)["status"]["userInfo"]
    seen = json.loads(in_member(fed, kubeconfig, "b", "auth", "whoami", "-o", "json").stdout)
    member_user = seen["status"]["userInfo"]
    assert member_user["username"] == fed_user["username"]
    assert set(fed_user["groups"]) <= set(member_user["groups"]), (fed_user, member_user)
    in_member(fed, kubeconfig, "b", "delete", "configmap", "via-proxy")
    assert fed["b"].kubectl("get", "configmap", "via-proxy", check=False).returncode == 1


def test_many_proxied_requests_at_once(fed):
    """More at once than the server has loop threads: a proxied request
    waits for the member on a thread of its own, never on the loop its
    member connection needs."""
    from concurrent.futures import ThreadPoolExecutor
    path = "/apis/federation/v1beta1/clusters/a/proxy/api/v1/namespaces/default/configmaps"
    clients = [fed.server.raw() for _ in range(16)]
    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(lambda c: c.get(path, timeout=20).status_code, clients * 4))
    assert codes == [200] * 64, codes


def test_the_python_client_through_the_proxy(fed, kubeconfig):
    from kubernetes import client, config
    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, context="flotilla-a",
                            client_configuration=configuration)
    with client.ApiClient(configuration) as api:
        nodes = client.CoreV1Api(api).list_node()
        assert sorted(n.metadata.name for n in nodes.items) == sorted(fed["a"].nodes())
        with pytest.raises(client.ApiException) as missing:
            client.CoreV1Api(api).read_namespaced_config_map("nope", "default")
        assert missing.value.status == 404


def test_rbac_on_clusters_proxy_first_then_the_members_own(fed, tmp_path):
    ns = "default"
    user = f"system:serviceaccount:{ns}:prober"
    fed["a"].kubectl("create", "configmap", "for-prober", "-n", ns)
    fed.kubectl("create", "serviceaccount", "prober", "-n", ns)
    token = fed.kubectl("create", "token", "prober", "-n", ns).stdout.strip()
    url = fed.server.url

    def as_prober(cluster, *args):
        return fed.server.kubectl(
            "--server", f"{url}/apis/federation/v1beta1/clusters/{cluster}/proxy",
            "--token", token, "--certificate-authority", fed.server.ca_file(), *args,
            kubeconfig=os.devnull, check=False)

    denied = as_prober("a", "get", "configmaps")
    assert denied.returncode == 1
    assert (f'User "{user}" cannot list resource "clusters/proxy"' in denied.stderr or
            f'User "{user}" cannot get resource "clusters/proxy"' in denied.stderr), denied.stderr
    fed.kubectl("create", "clusterrole", "proxy-a", "--verb=get",
                "--resource=clusters.federation/proxy", "--resource-name=a")
    fed.kubectl("create", "clusterrolebinding", "prober-proxy-a", "--clusterrole=proxy-a",
                f"--serviceaccount={ns}:prober")

    def member_denies():
        out = as_prober("a", "get", "configmaps")
        return f'User "{user}" cannot list resource "configmaps"' in out.stderr and out
    # Through the federation now, and the member refuses the impersonated user.
    wait_for(member_denies, "the member's own Forbidden for the service account")
    other = as_prober("b", "get", "configmaps")
    assert 'cannot get resource "clusters/proxy"' in other.stderr, other.stderr
    # Granted on the member, reads work; a write is still the member's no, and
    # a write to the proxy is the federation's no (create is not granted).
    fed["a"].kubectl("create", "clusterrolebinding", "prober-view", "--clusterrole=view",
                     f"--user={user}")
    read = wait_for(lambda: (r := as_prober("a", "get", "configmaps", "-n", ns)).returncode == 0 and r,
                    "reads allowed on the member")
    assert "for-prober" in read.stdout, read.stdout
    write = as_prober("a", "create", "configmap", "nope", "-n", ns)
    assert 'cannot create resource "clusters/proxy"' in write.stderr, write.stderr


def test_unknown_and_unreachable_clusters(fed, kubeconfig):
    missing = fed.kubectl("get", "--raw", "/apis/federation/v1beta1/clusters/nope/proxy/version",
                          check=False)
    assert 'clusters.federation "nope" not found' in missing.stderr, missing.stderr
    fed["b"].terminate()
    down = in_member(fed, kubeconfig, "b", "get", "pods", check=False)
    assert down.returncode == 1
    assert 'error trying to reach cluster "b"' in down.stderr, down.stderr
    assert in_member(fed, kubeconfig, "a", "get", "nodes").returncode == 0
