"""`flotilla up`, the main job, as a user runs it: a federation and its
simulated members come up joined, kubectl works against the federation and
against each member, and Ctrl-C stops every process it started."""

import json
import os
import re
import signal
import socket
import subprocess

import pytest

from conftest import FLOTILLA_BINARY, KUBECTL, LineReader, _die_with_parent, wait_for

UP_RE = re.compile(r"Flotilla is up: the federation at (https://127\.0\.0\.1:\d+) with (\d+) member")
MEMBER_RE = re.compile(r"^  (\S+)  https://127\.0\.0\.1:(\d+)  ")


def kubectl(kubeconfig, *args, check=True):
    env = dict(os.environ, KUBECONFIG=kubeconfig)
    result = subprocess.run([KUBECTL, *args], capture_output=True, text=True, env=env, timeout=60)
    if check:
        assert result.returncode == 0, f"kubectl {' '.join(args)}: {result.stderr}"
    return result


def dig(port, name):
    out = subprocess.run(["dig", "@127.0.0.1", "-p", str(port), "+short", "+tries=5", "+time=2",
                          name], capture_output=True, text=True, timeout=60)
    return sorted(l for l in out.stdout.splitlines() if l)


def port_open(port):
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def up(tmp_path):
    directory = tmp_path / "up"
    proc = subprocess.Popen(
        [FLOTILLA_BINARY, "up", "--dir", str(directory), "--secure-port", "0",
         "--dns-port", "0", "--members", "2", "--storage", "memory"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=_die_with_parent)
    reader = LineReader(proc.stdout)
    yield proc, reader, directory
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_up_runs_a_joined_federation_and_ctrl_c_stops_it(up):
    proc, reader, directory = up
    line = reader.wait_for_line(lambda l: UP_RE.search(l) or "exited" in l or "did not" in l,
                                "the up line", timeout=180)
    match = UP_RE.search(line)
    assert match, line
    assert match.group(2) == "2"
    dig_line = reader.wait_for_line(lambda l: l.strip().startswith("dig @"), "the dig line")
    dns_port = int(re.search(r"-p (\d+)", dig_line).group(1))
    members, member_dns = {}, {}
    reader.wait_for_line(lambda l: l.startswith("Members"), "the member list")
    for _ in range(2):
        m = MEMBER_RE.match(reader.wait_for_line(lambda l: MEMBER_RE.match(l), "a member line"))
        members[m.group(1)] = int(m.group(2))
        d = reader.wait_for_line(lambda l: "its DNS: dig" in l, "the member's DNS line")
        member_dns[m.group(1)] = int(re.search(r"-p (\d+)", d).group(1))
    assert set(members) == {"on-prem", "cloud-east"}

    kubeconfig = str(directory / "kubeconfig")
    assert os.path.exists(kubeconfig)

    def ready_clusters():
        out = kubectl(kubeconfig, "get", "clusters", "-o", "json").stdout
        items = json.loads(out)["items"]
        ready = {}
        for c in items:
            for cond in c.get("status", {}).get("conditions", []):
                if cond["type"] == "Ready" and cond["status"] == "True":
                    ready[c["metadata"]["name"]] = c
        return ready if len(ready) == 2 else None

    clusters = wait_for(ready_clusters, "both members Ready in the federation", timeout=60)
    assert clusters["on-prem"]["metadata"]["labels"]["location"] == "on-prem"
    assert clusters["cloud-east"]["metadata"]["labels"]["location"] == "cloud"
    assert clusters["cloud-east"]["status"]["region"] == "us-east-1"

    # Each member is a cluster of its own, with the nodes its profile gives.
    nodes = json.loads(kubectl(str(directory / "members" / "on-prem" / "kubeconfig"),
                               "get", "nodes", "-o", "json").stdout)["items"]
    assert len(nodes) == 3
    zones = {n["metadata"]["labels"]["topology.kubernetes.io/zone"] for n in nodes}
    assert zones == {"on-prem-dc1-a", "on-prem-dc1-b"}

    # The README's Deployment: rolled out, then a new image cluster by cluster.
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                           "06-rollout-cluster-by-cluster.yaml")
    kubectl(kubeconfig, "apply", "-f", example)
    kubectl(kubeconfig, "rollout", "status", "deployment/shop", "--timeout=120s")
    kubectl(kubeconfig, "set", "image", "deployment/shop", "web=nginx:1.28")
    out = kubectl(kubeconfig, "rollout", "status", "deployment/shop", "--timeout=120s").stdout
    assert 'deployment "shop" successfully rolled out' in out
    for member in ("on-prem", "cloud-east"):
        local = json.loads(kubectl(str(directory / "members" / member / "kubeconfig"), "get",
                                   "deployment", "shop", "-o", "json").stdout)
        assert local["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"
    history = kubectl(kubeconfig, "rollout", "history", "deployment/shop").stdout
    assert "first release" in history

    # The README's Service found by DNS: the federation's, and a member's
    # (its own name, and the federation's through its stub domain).
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples",
                           "08-global-service.yaml")
    kubectl(kubeconfig, "apply", "-f", example)
    name = "hello.default.flotilla.svc.flotilla.local"
    wait_for(lambda: len(dig(dns_port, name)) == 2, "both members' addresses", timeout=60)
    assert dig(member_dns["on-prem"], name) == dig(dns_port, name)
    cluster_ip = json.loads(kubectl(str(directory / "members" / "cloud-east" / "kubeconfig"),
                                    "get", "svc", "hello", "-o", "json").stdout)["spec"]["clusterIP"]
    assert dig(member_dns["cloud-east"], "hello.default.svc.cluster.local") == [cluster_ip]

    # Ctrl-C (SIGINT to up) stops the members and the federation, then up.
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 0
    fed_port = int(match.group(1).rsplit(":", 1)[1])
    for port in [fed_port, *members.values()]:
        assert not port_open(port), f"port {port} still served after up stopped"


@pytest.mark.parametrize("agents", [False, True], ids=["joined", "agents"])
def test_up_ha_runs_two_servers_on_etcd_and_survives_losing_one(tmp_path, agents):
    """With --agents, the member's agent keeps a tunnel to each server, so
    the one that leads after the other is killed reaches the member."""
    directory = tmp_path / "up-ha"
    proc = subprocess.Popen(
        [FLOTILLA_BINARY, "up", "--ha", "--dir", str(directory), "--secure-port", "0",
         "--dns-port", "0", "--members", "1", "--storage", "memory"]
        + (["--agents"] if agents else []),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=_die_with_parent)
    try:
        reader = LineReader(proc.stdout)
        line = reader.wait_for_line(lambda l: UP_RE.search(l) or "exited" in l or "did not" in l
                                    or "starting etcd" in l, "the up line", timeout=180)
        assert UP_RE.search(line), line
        reader.wait_for_line(lambda l: l.startswith("High availability"), "the HA line")
        servers = [reader.wait_for_line(lambda l: "kubeconfig" in l, f"server {i}")
                   for i in range(2)]
        kubeconfigs = [l.split("kubeconfig ")[1].strip() for l in servers]
        assert kubeconfigs[1] == str(directory / "federation-2" / "kubeconfig")

        def holder(kubeconfig):
            out = kubectl(kubeconfig, "get", "lease", "-n", "flotilla-system",
                          "flotilla-controllers", "-o", "json", check=False)
            return json.loads(out.stdout)["spec"].get("holderIdentity") if out.returncode == 0 \
                else None

        def ready(kubeconfig):
            out = kubectl(kubeconfig, "get", "clusters", "-o", "json", check=False)
            if out.returncode != 0:
                return False
            return any(c["type"] == "Ready" and c["status"] == "True"
                       for item in json.loads(out.stdout)["items"]
                       for c in item.get("status", {}).get("conditions", []))

        for kubeconfig in kubeconfigs:
            wait_for(lambda k=kubeconfig: ready(k), f"the member Ready through {kubeconfig}",
                     timeout=60)
        if agents:
            # The agent dialled the first server; it finds the second by its
            # Lease and keeps a tunnel to each.
            for log in ("federation.log", "federation-2.log"):
                wait_for(lambda log=log: "cluster on-prem: agent" in
                         (directory / log).read_text(), f"the agent's tunnel in {log}",
                         timeout=60)
        first_holder = wait_for(lambda: holder(kubeconfigs[0]), "a leader")
        assert holder(kubeconfigs[1]) == first_holder

        def leading(kubeconfig):
            metrics = kubectl(kubeconfig, "get", "--raw", "/metrics").stdout
            return 'flotilla_leader_election_master_status{name="flotilla-controllers"} 1' \
                in metrics

        # kill -9 of the leading server: the other leads and serves on.
        leader = wait_for(lambda: [i for i in (0, 1) if leading(kubeconfigs[i])],
                          "one server leading")
        assert len(leader) == 1
        data_dir = os.path.dirname(kubeconfigs[leader[0]])
        pid = subprocess.run(["pgrep", "-f", "--", f"--data-dir {data_dir} "],
                             capture_output=True, text=True).stdout.split()
        assert len(pid) == 1, pid
        os.kill(int(pid[0]), signal.SIGKILL)
        reader.wait_for_line(lambda l: "carries on" in l, "up noticing the lost server")
        other = kubeconfigs[1 - leader[0]]
        wait_for(lambda: holder(other) not in (None, first_holder), "the other server leading",
                 timeout=60)
        assert leading(other) and ready(other)
        # Placed and rolled out by the new leader, through its own tunnel
        # when the member is agent-connected.
        kubectl(other, "create", "deployment", "after", "--image=nginx", "--replicas=2")
        kubectl(other, "rollout", "status", "deployment/after", "--timeout=50s")

        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 0
        left = subprocess.run(["pgrep", "-f", str(directory)], capture_output=True, text=True)
        assert left.stdout == "", f"processes left: {left.stdout}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_up_agents_connects_the_members_by_their_agents(tmp_path):
    """`flotilla up --agents`: every member registered by its own agent
    (spec.connection Agent, no Secret), Ready, placing a Deployment; Ctrl-C
    stops the agents too."""
    directory = tmp_path / "up"
    proc = subprocess.Popen(
        [FLOTILLA_BINARY, "up", "--agents", "--dir", str(directory), "--secure-port", "0",
         "--dns-port", "0", "--members", "2", "--storage", "memory"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=_die_with_parent)
    try:
        reader = LineReader(proc.stdout)
        line = reader.wait_for_line(lambda l: UP_RE.search(l) or "exited" in l or "did not" in l,
                                    "the up line", timeout=180)
        assert UP_RE.search(line), line
        reader.wait_for_line(lambda l: "connected by agents" in l, "the agents line")
        kubeconfig = str(directory / "kubeconfig")

        def ready_agent_clusters():
            items = json.loads(kubectl(kubeconfig, "get", "clusters", "-o", "json").stdout)["items"]
            ready = [c for c in items if c["spec"].get("connection") == "Agent"
                     and "secretRef" not in c["spec"]
                     and any(k["type"] == "Ready" and k["status"] == "True"
                             for k in c.get("status", {}).get("conditions", []))]
            return ready if len(ready) == 2 else None

        clusters = wait_for(ready_agent_clusters, "both members Ready through their agents",
                            timeout=60)
        assert {c["metadata"]["labels"]["location"] for c in clusters} == {"on-prem", "cloud"}
        kubectl(kubeconfig, "create", "deployment", "web", "--image=nginx", "--replicas=4")
        kubectl(kubeconfig, "rollout", "status", "deployment/web", "--timeout=120s")
        agents = subprocess.run(["pgrep", "-f", f"agent --name .* {directory}"],
                                capture_output=True, text=True).stdout.split()
        assert len(agents) == 2
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 0
        for pid in agents:
            assert not os.path.exists(f"/proc/{pid}"), f"agent {pid} still running after up"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_up_runs_again_on_the_directory_of_an_earlier_run(tmp_path):
    """`flotilla up` stopped and run again on its directory (SQLite, the
    default): the federation and the members keep their objects, the
    members come back on new ports and are joined again (`join --rejoin`),
    and the federation reaches them there."""
    directory = tmp_path / "up"
    kubeconfig = str(directory / "kubeconfig")
    member_kubeconfig = {m: str(directory / "members" / m / "kubeconfig")
                         for m in ("on-prem", "cloud-east")}

    def run():
        proc = subprocess.Popen(
            [FLOTILLA_BINARY, "up", "--dir", str(directory), "--secure-port", "0",
             "--dns-port", "0", "--members", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            preexec_fn=_die_with_parent)
        reader = LineReader(proc.stdout)
        line = reader.wait_for_line(
            lambda l: UP_RE.search(l) or "exited" in l or "did not" in l or "failed" in l,
            "the up line", timeout=180)
        assert UP_RE.search(line), line
        return proc

    def ready_at_their_addresses():
        items = json.loads(kubectl(kubeconfig, "get", "clusters", "-o", "json").stdout)["items"]
        servers = {m: re.search(r'server: "?([^"\s]+)', open(k).read()).group(1)
                   for m, k in member_kubeconfig.items()}
        ready = {c["metadata"]["name"] for c in items
                 if c["spec"]["serverAddressByClientCIDRs"][0]["serverAddress"]
                 == servers.get(c["metadata"]["name"])
                 and any(k["type"] == "Ready" and k["status"] == "True"
                         for k in c.get("status", {}).get("conditions", []))}
        return ready == set(member_kubeconfig)

    def copies(name):
        out = [kubectl(k, "get", "configmap", name, "-o", "jsonpath={.data.a}", check=False).stdout
               for k in member_kubeconfig.values()]
        return out == ["b", "b"]

    procs = []
    try:
        procs.append(run())
        wait_for(ready_at_their_addresses, "both members Ready", timeout=60)
        kubectl(kubeconfig, "create", "configmap", "first", "--from-literal=a=b")
        wait_for(lambda: copies("first"), "the first ConfigMap in both members", timeout=60)
        procs[0].send_signal(signal.SIGINT)
        assert procs[0].wait(timeout=120) == 0

        procs.append(run())
        wait_for(ready_at_their_addresses, "both members Ready at their new addresses",
                 timeout=60)
        assert kubectl(kubeconfig, "get", "configmap", "first", "-o",
                       "jsonpath={.data.a}").stdout == "b"
        assert copies("first"), "the members kept their objects"
        kubectl(kubeconfig, "create", "configmap", "second", "--from-literal=a=b")
        wait_for(lambda: copies("second"), "a new ConfigMap in both members", timeout=60)
        procs[1].send_signal(signal.SIGINT)
        assert procs[1].wait(timeout=120) == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
