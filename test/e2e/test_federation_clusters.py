"""Member clusters end to end (docs/federation.md): a federation `flotilla
server` probing a second `flotilla server` that acts as the member, joined
with `flotilla join` and the kubectl plugin, watched through the real kubectl
while the member is stopped (SIGSTOP), continued and killed."""

import os
import signal
import subprocess

import pytest

from conftest import KUBECTL, table, wait_for
from federation import FED_ARGS, SLOW, cluster, condition, flotilla, join, ready_is
from members import MemberProcess


@pytest.fixture
def fed_and_member(server_factory):
    # The cluster controller, and the sync controller for the cascading unjoin.
    fed = server_factory(FED_ARGS + ["--controllers=cluster,sync"]).start()
    member = server_factory().start()
    yield fed, member
    if member.running():
        os.kill(member.proc.pid, signal.SIGCONT)


def test_join_health_transitions_and_unjoin(fed_and_member):
    fed, member = fed_and_member
    out = join(fed, member, "m1", "--labels", "location=on-prem,tier=gold")
    assert "cluster.federation/m1 joined" in out.stdout

    obj = wait_for(lambda: ready_is(fed, "m1", "True"), "m1 Ready")
    assert obj["metadata"]["labels"] == {"location": "on-prem", "tier": "gold"}
    assert obj["spec"]["secretRef"]["name"] == "m1-kubeconfig"
    assert obj["spec"]["serverAddressByClientCIDRs"] == [
        {"clientCIDR": "0.0.0.0/0", "serverAddress": member.url}]
    assert obj["status"]["kubernetesVersion"].startswith("v1.")
    assert "zones" not in obj["status"]  # a federation server serves no nodes
    assert condition(obj, "Offline")["status"] == "False"
    headers, rows = table(fed.kubectl("get", "clusters").stdout)
    assert headers[:5] == ["NAME", "READY", "SCHEDULING", "ZONES", "REGION"]
    assert rows[0]["SCHEDULING"] == "Enabled"
    assert rows[0]["NAME"] == "m1" and rows[0]["READY"] == "True"
    assert rows[0]["ZONES"] == "<none>"
    fed.kubectl("get", "secret", "-n", "flotilla-system", "m1-kubeconfig")
    metrics = fed.raw().get("/metrics").text
    assert 'flotilla_cluster_ready{cluster="m1"} 1' in metrics
    assert 'flotilla_cluster_probe_duration_seconds{cluster="m1"}' in metrics
    ready_since = condition(obj, "Ready")["lastTransitionTime"]

    os.kill(member.proc.pid, signal.SIGSTOP)
    obj = wait_for(lambda: ready_is(fed, "m1", "False"), "m1 NotReady after SIGSTOP", SLOW)
    assert condition(obj, "Ready")["reason"] == "ClusterNotReady"
    assert condition(obj, "Offline")["status"] == "True"
    assert condition(obj, "Offline")["reason"] == "ClusterNotReachable"
    assert condition(obj, "Ready")["lastTransitionTime"] != ready_since
    # Three failed probes of at least 3 s each before the flip.
    probes = int(fed.raw().get("/metrics").text.split(
        'flotilla_cluster_probe_failures_total{cluster="m1"} ')[1].split()[0])
    assert probes >= 3

    os.kill(member.proc.pid, signal.SIGCONT)
    obj = wait_for(lambda: ready_is(fed, "m1", "True"), "m1 Ready after SIGCONT", SLOW)
    assert condition(obj, "Offline")["status"] == "False"

    member.kill9()
    obj = wait_for(lambda: ready_is(fed, "m1", "False"), "m1 NotReady after SIGKILL", SLOW)
    assert condition(obj, "Offline")["status"] == "True"
    assert "refused" in condition(obj, "Ready")["message"]

    out = flotilla("unjoin", "m1", "--kubeconfig", fed.kubeconfig)
    assert out.returncode == 0, out.stderr
    assert "cluster.federation/m1 unjoined" in out.stdout
    assert cluster(fed, "m1") is None
    gone = fed.kubectl("get", "secret", "-n", "flotilla-system", "m1-kubeconfig", check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr


def test_kubectl_plugin_join_and_unjoin(fed_and_member, tmp_path):
    fed, member = fed_and_member
    bin_dir = tmp_path / "bin"
    out = flotilla("install-kubectl-plugin", "--dir", str(bin_dir))
    assert out.returncode == 0, out.stderr
    assert os.path.islink(bin_dir / "kubectl-flotilla")
    # kubectl finds the plugin on PATH; the federation comes from KUBECONFIG.
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", KUBECONFIG=fed.kubeconfig,
               HOME=str(tmp_path))
    plugins = subprocess.run([KUBECTL, "plugin", "list"], capture_output=True, text=True, env=env)
    assert "kubectl-flotilla" in plugins.stdout
    result = subprocess.run([KUBECTL, "flotilla", "join", "m2", "--cluster-kubeconfig",
                             member.kubeconfig], capture_output=True, text=True, env=env,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    wait_for(lambda: ready_is(fed, "m2", "True"), "m2 Ready")
    again = subprocess.run([KUBECTL, "flotilla", "join", "m2", "--cluster-kubeconfig",
                            member.kubeconfig], capture_output=True, text=True, env=env,
                           timeout=60)
    assert again.returncode != 0
    assert 'clusters.federation "m2" already exists' in again.stderr
    # A ConfigMap propagated to m2; the cascading unjoin deletes it there
    # (the kinds it deletes come from the federated kinds' declarations).
    fed.kubectl("create", "configmap", "shared", "-n", "default", "--from-literal=a=1")
    wait_for(lambda: member.kubectl("get", "cm", "shared", "-n", "default",
                                    check=False).returncode == 0, "shared in m2")
    result = subprocess.run([KUBECTL, "flotilla", "unjoin", "m2", "--cascade"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "configmaps default/shared" in result.stdout, result.stdout
    assert cluster(fed, "m2") is None
    gone = member.kubectl("get", "cm", "shared", "-n", "default", check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr


def test_bad_cluster_kubeconfig_is_a_clear_error_and_creates_nothing(fed_and_member, tmp_path):
    fed, member = fed_and_member
    missing = flotilla("join", "x", "--kubeconfig", fed.kubeconfig,
                       "--cluster-kubeconfig", str(tmp_path / "nope"))
    assert missing.returncode != 0
    assert "--cluster-kubeconfig" in missing.stderr and "nope" in missing.stderr

    garbage = tmp_path / "garbage"
    garbage.write_text("clusters: [this is: not, a kubeconfig")
    bad = flotilla("join", "x", "--kubeconfig", fed.kubeconfig,
                   "--cluster-kubeconfig", str(garbage))
    assert bad.returncode != 0 and "--cluster-kubeconfig" in bad.stderr

    # A well-formed kubeconfig for a member that is not there.
    member.kill9()
    down = flotilla("join", "x", "--kubeconfig", fed.kubeconfig,
                    "--cluster-kubeconfig", member.kubeconfig)
    assert down.returncode != 0
    assert f"cluster x at {member.url} does not answer" in down.stderr, down.stderr

    assert fed.kubectl("get", "clusters", "-o", "json").stdout.count('"kind": "Cluster"') == 0
    secrets = fed.kubectl("get", "secrets", "-n", "flotilla-system", "-o", "name").stdout
    assert secrets.strip() == ""


@pytest.fixture
def simulated_member(tmp_path):
    """A `flotilla member` with three nodes over two zones of one region."""
    member = MemberProcess(str(tmp_path / "member"),
                           ["--name", "east", "--nodes", "3", "--zones", "east-a,east-b",
                            "--region", "east"])
    try:
        yield member.cluster.kubeconfig
    finally:
        member.stop()


def test_simulated_member_reports_zones_and_region(server_factory, simulated_member):
    # The cluster controller, and the sync controller for the cascading unjoin.
    fed = server_factory(FED_ARGS + ["--controllers=cluster,sync"]).start()
    result = flotilla("join", "east", "--kubeconfig", fed.kubeconfig,
                      "--cluster-kubeconfig", simulated_member, "--labels", "location=cloud")
    assert result.returncode == 0, result.stderr
    obj = wait_for(lambda: ready_is(fed, "east", "True"), "east Ready")
    obj = wait_for(lambda: (lambda o: o if o["status"].get("zones") else None)(cluster(fed, "east")),
                   "east's zones")
    assert obj["status"]["zones"] == ["east-a", "east-b"]
    assert obj["status"]["region"] == "east"
    _, rows = table(fed.kubectl("get", "clusters").stdout)
    assert (rows[0]["ZONES"], rows[0]["REGION"]) == ("east-a,east-b", "east")
    shown = fed.kubectl("get", "clusters", "-l", "location=cloud", "-o", "name").stdout
    assert shown.strip() == "cluster.federation/east"
