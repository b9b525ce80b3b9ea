"""The real kubectl over HTTP/2 and over HTTP/1.1 against `flotilla server`:
ALPN gives kubectl h2 (Go's transport says so with GODEBUG=http2debug=1),
kubectl's own HTTP/1.1 (client-go's DISABLE_HTTP2) still works, and a server
started with --http2=false serves kubectl over HTTP/1.1. The same apply,
list, watch and delete run over each. And the federation's connections to
a member: a few over HTTP/2 (every watch a stream), one per watch with
--member-http2=false, placing a ReplicaSet and showing its pods either way."""

import json
import os
import subprocess

import pytest

import yaml

from conftest import FLOTILLA_BINARY, KUBECTL, wait_for
from federation import FAST_FED_ARGS, replicaset, start_federation

H2_DEBUG = {"GODEBUG": "http2debug=1"}
HTTP1_ONLY = {"DISABLE_HTTP2": "1", "GODEBUG": "http2debug=1"}


def speaks_h2(result):
    """Whether Go's HTTP/2 transport carried the run's requests."""
    return "http2: Transport creating client conn" in result.stderr


def exercise(server, ns, env):
    """Apply, list, a watch that sees a change, and delete, over `env`'s protocol."""
    doc = {"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "proto", "namespace": ns}, "data": {"k": "1"}}
    server.kubectl("apply", "-f", "-", input=yaml.safe_dump(doc), env=env)
    got = server.kubectl("get", "configmaps", "-n", ns, "-o", "name", env=env)
    assert got.stdout.split() == ["configmap/proto"]
    # A watch: kubectl get -w prints the change the next command makes.
    cmd = [KUBECTL, "--kubeconfig", server.kubeconfig, "get", "configmap", "proto", "-n", ns,
           "-w", "--output-watch-events", "-o", "jsonpath={.type} {.object.data.k}{\"\\n\"}"]
    full_env = dict(os.environ, HOME=server.data_dir, **env)
    full_env.pop("KUBECONFIG", None)
    watcher = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=full_env)
    try:
        first = watcher.stdout.readline()
        assert first.strip() == "ADDED 1", first
        server.kubectl("patch", "configmap", "proto", "-n", ns, "--type=merge",
                       "-p", '{"data":{"k":"2"}}', env=env)
        second = watcher.stdout.readline()
        assert second.strip() == "MODIFIED 2", second
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
    deleted = server.kubectl("delete", "configmap", "proto", "-n", ns, env=env)
    assert 'configmap "proto" deleted' in deleted.stdout
    return got


def test_kubectl_negotiates_h2_by_alpn(server, namespace):
    got = exercise(server, namespace, H2_DEBUG)
    assert speaks_h2(got), got.stderr[-2000:]


def test_kubectl_over_http1_still_works(server, namespace):
    got = exercise(server, namespace, HTTP1_ONLY)
    assert not speaks_h2(got), got.stderr[-2000:]


def test_a_server_without_http2_serves_kubectl_over_http1(server_factory):
    srv = server_factory(["--http2=false"])
    srv.start()
    ns = "plain"
    srv.kubectl("create", "namespace", ns)
    got = exercise(srv, ns, H2_DEBUG)
    assert not speaks_h2(got), got.stderr[-2000:]


def test_a_stream_limit_of_zero_is_refused(tmp_path):
    result = subprocess.run([FLOTILLA_BINARY, "server", "--data-dir", str(tmp_path),
                             "--http2-max-streams-per-connection=0"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--http2-max-streams-per-connection" in result.stderr, result.stderr


def established_to(port):
    """Established TCP connections whose local end is `port` (this network
    namespace's, from /proc/net/tcp and tcp6)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                local, state = fields[1], fields[3]
                if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                    count += 1
    return count


def placed_and_listed(fed, name):
    """A ReplicaSet of 2 placed in member a, its pods running there and
    listed by the federation's pods view."""
    fed.create(replicaset(name, 2, cpu="100m"), "default")
    wait_for(lambda: fed["a"].running_pods("default", f"app={name}") == 2,
             f"{name}'s pods running in a", timeout=60)
    wait_for(lambda: len(json.loads(fed.kubectl("get", "pods", "-l", f"app={name}", "-o",
                                                "json").stdout)["items"]) == 2,
             f"{name}'s pods on the federation", timeout=30)


@pytest.mark.parametrize("http2", [True, False], ids=["h2", "http1"])
def test_the_federations_connections_to_a_member(tmp_path, http2):
    args = FAST_FED_ARGS + ([] if http2 else ["--member-http2=false"])
    fed = start_federation(tmp_path, {"a": ({}, [])}, args)
    try:
        placed_and_listed(fed, "web")
        port = fed["a"].port
        fed["a"]._close_api()  # the test's own keep-alive connection
        if http2:
            # One, which the controllers and the pods view share (a kubectl
            # of the test may still be closing one of its own).
            wait_for(lambda: established_to(port) == 1, "one connection to the member")
        else:
            connections = established_to(port)
            # A connection per watch: the federation watches about twenty
            # resources in each member.
            assert connections >= 10, connections
    finally:
        fed.close()
