"""The real kubectl over HTTP/2 and over HTTP/1.1 against `flotilla server`:
ALPN gives kubectl h2 (Go's transport says so with GODEBUG=http2debug=1),
kubectl's own HTTP/1.1 (client-go's DISABLE_HTTP2) still works, and a server
started with --http2=false serves kubectl over HTTP/1.1. The same apply,
list, watch and delete run over each."""

import os
import subprocess

import yaml

from conftest import FLOTILLA_BINARY, KUBECTL

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
