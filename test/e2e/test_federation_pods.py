"""The members' pods on the federation (docs/federation.md, "The members'
pods"): with the federation's kubeconfig alone, the real kubectl and the
official Python client list the pods of every Ready member, each labelled
with its cluster (a Cluster column in the Table, `-l` picks a cluster),
watch them, describe them (with the member's Events about them, which
`kubectl get events` shows too) and read their logs (`kubectl logs POD`,
`kubectl logs rs/web`) from the member that runs them; two pods of one name
in two clusters are told apart; a delete goes to the member that runs the
pod, as the caller, and every other write is refused; a member that stops
being Ready takes its pods out of the view."""

import json
import os

from conftest import API_ONLY_ARGS, FlotillaServer, LineReader, wait_for
from federation import attach_shows_probes, module_federation, replicaset

fed = module_federation("fed-pods", {"a": ({}, []), "b": ({}, []), "c": ({}, [])})

CLUSTER = "federation.kubernetes.io/cluster"


def bare_pod(name, app="bare"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": app}},
            "spec": {"containers": [{"name": "app", "image": "busybox:1.36",
                                     "command": ["sh", "-c"], "args": [f"serve {name}"]}]}}


def in_member(fed, name, obj):
    fed[name].kubectl("create", "-n", "default", "-f", "-", input=json.dumps(obj))


def federation_pods(fed, *args):
    return json.loads(fed.kubectl("get", "pods", "-o", "json", *args).stdout)["items"]


def test_pods_of_every_member_with_their_cluster(fed):
    fed.create(replicaset("web", 6, cpu="100m"), "default")

    def running_in_members():
        pods = {n: sorted(p["metadata"]["name"] for p in fed[n].pods("default", "app=web")
                          if p["status"].get("phase") == "Running") for n in fed.names}
        return sum(len(v) for v in pods.values()) == 6 and pods
    members = wait_for(running_in_members, "web's 6 pods running in the members", timeout=60)

    def seen():
        pods = federation_pods(fed, "-A", "-l", "app=web")
        view = {n: sorted(p["metadata"]["name"] for p in pods
                          if p["metadata"]["labels"][CLUSTER] == n
                          and p["status"].get("phase") == "Running") for n in fed.names}
        return view == members and pods
    pods = wait_for(seen, "the members' pods on the federation", timeout=30)
    # The member's pod as it is there, with its cluster's label.
    first = pods[0]
    cluster = first["metadata"]["labels"][CLUSTER]
    local = json.loads(fed[cluster].kubectl("get", "pod", "-n", "default", "-o", "json",
                                            first["metadata"]["name"]).stdout)
    assert first["metadata"]["uid"] == local["metadata"]["uid"]
    assert first["spec"]["nodeName"] == local["spec"]["nodeName"]
    assert first["metadata"]["ownerReferences"] == local["metadata"]["ownerReferences"]
    assert "managedFields" not in first["metadata"]

    table = fed.kubectl("get", "pods", "-n", "default", "-l", "app=web").stdout.splitlines()
    assert table[0].split() == ["NAME", "CLUSTER", "READY", "STATUS", "RESTARTS", "AGE"], table
    rows = {tuple(line.split()[:2]) for line in table[1:]}
    assert rows == {(p, n) for n, names in members.items() for p in names}, table
    wide = fed.kubectl("get", "pods", "-n", "default", "-l", "app=web", "-o", "wide").stdout
    assert wide.splitlines()[0].split()[6:8] == ["IP", "NODE"], wide

    # -l picks a cluster; `get pods` of the other resources' categories too.
    only_b = federation_pods(fed, "-n", "default", "-l", f"app=web,{CLUSTER}=b")
    assert sorted(p["metadata"]["name"] for p in only_b) == members["b"]
    names = fed.kubectl("get", "all", "-n", "default", "-o", "name").stdout.split()
    assert {f"pod/{p}" for ps in members.values() for p in ps} <= set(names), names


def test_the_python_client_lists_and_reads_member_pods(fed):
    from kubernetes import client
    core = client.CoreV1Api(fed.server.api_client())
    pods = core.list_pod_for_all_namespaces(label_selector=f"app=web,{CLUSTER}=a").items
    assert pods and all(p.metadata.labels[CLUSTER] == "a" for p in pods)
    one = core.read_namespaced_pod(pods[0].metadata.name, "default")
    assert one.metadata.uid == pods[0].metadata.uid and one.spec.node_name


def test_a_watch_sees_pods_come_and_go_in_any_member(fed):
    watch = fed.server.kubectl_popen("get", "pods", "-n", "default", "-l", "app=watched", "-w",
                                     "-o", "custom-columns=NAME:.metadata.name,"
                                     f"CLUSTER:.metadata.labels.federation\\.kubernetes\\.io/cluster,"
                                     "PHASE:.status.phase")
    try:
        lines = LineReader(watch.stdout)
        # The first comes in the list or the watch; once it is printed the
        # watch is open, and the second can only come through it.
        in_member(fed, "b", bare_pod("watched-1", "watched"))
        lines.wait_for_line(lambda l: l.split()[:3] == ["watched-1", "b", "Running"],
                            "watched-1 running in b, through the watch")
        in_member(fed, "c", bare_pod("watched-2", "watched"))
        lines.wait_for_line(lambda l: l.split()[:2] == ["watched-2", "c"], "watched-2 in c")
    finally:
        watch.kill()
        watch.wait()


def test_logs_and_describe_read_the_member_that_runs_the_pod(fed):
    in_member(fed, "a", bare_pod("logger"))
    wait_for(lambda: fed.kubectl("logs", "logger", check=False).returncode == 0,
             "logger's logs through the federation", timeout=60)
    logs = fed.kubectl("logs", "logger").stdout.splitlines()
    assert logs[0].startswith('[flotilla-sim] container "app" started: image busybox:1.36'), logs
    assert logs[1] == "[flotilla-sim] exec: sh -c serve logger", logs
    # Through a workload's selector: kubectl lists the federation's pods.
    by_rs = fed.kubectl("logs", "rs/web").stdout
    assert '[flotilla-sim] container "' in by_rs, by_rs
    with_ts = fed.kubectl("logs", "logger", "--timestamps", "--tail", "1").stdout.splitlines()
    assert len(with_ts) == 1 and with_ts[0][:4].isdigit(), with_ts
    described = fed.kubectl("describe", "pod", "logger").stdout
    assert "Name:             logger" in described, described
    assert f"{CLUSTER}=a" in described, described


def test_exec_and_attach_reach_the_member_that_runs_the_pod(fed):
    """`kubectl exec` and `attach` on the federation: the WebSocket upgrade
    goes on to the member that runs the pod, as the caller."""
    shell = bare_pod("shell")
    shell["spec"]["containers"][0]["readinessProbe"] = {
        "exec": {"command": ["cat", "/tmp/ready"]}, "periodSeconds": 1}
    in_member(fed, "b", shell)
    wait_for(lambda: fed.kubectl("exec", "shell", "--", "true", check=False).returncode == 0,
             "an exec into shell through the federation", timeout=60)
    ran = fed.kubectl("exec", "shell", "--", "sh", "-c", "hostname; cat /etc/hosts; exit 3",
                      check=False)
    assert ran.returncode == 3, (ran.stdout, ran.stderr)
    assert ran.stdout.startswith("shell\n# Kubernetes-managed hosts file."), ran.stdout
    assert "command terminated with exit code 3" in ran.stderr, ran.stderr
    typed = fed.kubectl("exec", "-i", "shell", "--", "sh", input="echo one\nprintenv HOSTNAME\n")
    assert typed.stdout == "one\nshell\n", typed.stdout
    # attach shows what the main process writes from now on: a probe a second.
    attach_shows_probes(fed.server, "shell")

    # RBAC: get on pods/exec alone runs nothing; create is asked for too.
    fed.kubectl("create", "serviceaccount", "execer", "-n", "default")
    fed.kubectl("create", "role", "exec-get", "-n", "default", "--verb=get",
                "--resource=pods,pods/exec")
    fed.kubectl("create", "rolebinding", "exec-get", "-n", "default", "--role=exec-get",
                "--serviceaccount=default:execer")
    token = fed.kubectl("create", "token", "execer", "-n", "default").stdout.strip()
    as_execer = ("--server", fed.server.url, "--token", token, "--certificate-authority",
                 fed.server.ca_file())
    user = "system:serviceaccount:default:execer"
    refused = fed.server.kubectl(*as_execer, "exec", "shell", "--", "true",
                                 kubeconfig=os.devnull, check=False)
    assert refused.returncode == 1
    assert f'User "{user}" cannot create resource "pods/exec"' in refused.stderr, refused.stderr


def test_describe_and_get_events_show_what_the_member_said(fed):
    in_member(fed, "a", bare_pod("talker"))

    def described():
        out = fed.kubectl("describe", "pod", "talker", check=False).stdout
        return "Started container app" in out and out
    out = wait_for(described, "the member's Events in describe pod", timeout=60)
    events_part = out[out.index("Events:"):]
    assert "Scheduled" in events_part and "kubelet" in events_part, out

    # The federation's copies: labelled with their cluster, about the
    # member's pod (its uid, as the view shows it).
    pod = json.loads(fed.kubectl("get", "pod", "talker", "-o", "json").stdout)
    events = json.loads(fed.kubectl("get", "events", "-n", "default", "-o", "json",
                                    "--field-selector", "involvedObject.name=talker")
                        .stdout)["items"]
    assert {"Scheduled", "Started"} <= {e["reason"] for e in events}, events
    assert all(e["metadata"]["labels"][CLUSTER] == "a" for e in events), events
    assert all(e["involvedObject"]["uid"] == pod["metadata"]["uid"] for e in events), events
    table = fed.kubectl("get", "events", "-n", "default", "-l", f"{CLUSTER}=a",
                        "--field-selector", "involvedObject.name=talker").stdout
    assert "pod/talker" in table and "Started container app" in table, table

    from kubernetes import client
    core = client.CoreV1Api(fed.server.api_client())
    listed = core.list_namespaced_event("default", label_selector=f"{CLUSTER}=a",
                                        field_selector="involvedObject.name=talker").items
    assert {"Scheduled", "Started"} <= {e.reason for e in listed}

    # An Event gone in the member is gone here.
    started = next(e for e in events if e["reason"] == "Started")
    member_name = started["metadata"]["name"][:-len(".a")]
    fed["a"].kubectl("delete", "event", "-n", "default", member_name)
    wait_for(lambda: fed.kubectl("get", "event", "-n", "default", started["metadata"]["name"],
                                 check=False).returncode != 0,
             "the copy of the deleted Event gone", timeout=30)


def test_one_name_in_two_clusters(fed):
    in_member(fed, "a", bare_pod("twin"))
    in_member(fed, "b", bare_pod("twin"))
    wait_for(lambda: len(federation_pods(fed, "-n", "default", "--field-selector",
                                         "metadata.name=twin")) == 2, "both twins listed")
    got = fed.kubectl("get", "pod", "twin", check=False)
    assert got.returncode == 1, got.stdout
    assert 'pods "twin" run in several clusters (a, b)' in got.stderr, got.stderr
    assert f"--field-selector metadata.name=twin -l {CLUSTER}=CLUSTER" in got.stderr, got.stderr
    picked = federation_pods(fed, "-n", "default", "--field-selector", "metadata.name=twin",
                             "-l", f"{CLUSTER}=b")
    assert [p["metadata"]["labels"][CLUSTER] for p in picked] == ["b"]
    logs = fed.kubectl("logs", "twin", check=False)
    assert logs.returncode == 1 and "run in several clusters" in logs.stderr, logs.stderr
    ran = fed.kubectl("exec", "twin", "--", "true", check=False)
    assert ran.returncode == 1 and "run in several clusters" in ran.stderr, ran.stderr


def test_writes_other_than_delete_are_refused(fed):
    in_member(fed, "a", bare_pod("kept"))
    wait_for(lambda: fed.kubectl("get", "pod", "kept", check=False).returncode == 0, "kept listed")
    for args in (("label", "pod", "kept", "x=y"), ("annotate", "pod", "kept", "x=y")):
        result = fed.kubectl(*args, check=False)
        assert result.returncode == 1, (args, result.stdout)
        assert "read-only view of the member clusters' pods" in result.stderr, (args,
                                                                                 result.stderr)
    created = fed.create(bare_pod("made-here"), "default", check=False)
    assert created.returncode == 1 and "read-only view" in created.stderr, created.stderr
    local = json.loads(fed["a"].kubectl("get", "pod", "kept", "-n", "default", "-o",
                                        "json").stdout)
    assert "x" not in local["metadata"].get("labels", {}), local["metadata"]
    assert fed.kubectl("get", "pod", "made-here", check=False).returncode == 1
    for name in fed.names:
        assert fed[name].kubectl("get", "pod", "made-here", "-n", "default",
                                 check=False).returncode == 1


def test_a_delete_goes_to_the_member_as_the_caller(fed):
    in_member(fed, "b", bare_pod("doomed"))
    wait_for(lambda: fed.kubectl("get", "pod", "doomed", check=False).returncode == 0,
             "doomed listed")
    # kubectl deletes, then waits on the federation's watch until it is gone.
    deleted = fed.kubectl("delete", "pod", "doomed", "--timeout=60s")
    assert 'pod "doomed" deleted' in deleted.stdout, deleted.stdout
    assert fed["b"].kubectl("get", "pod", "doomed", "-n", "default",
                            check=False).returncode == 1
    assert fed.kubectl("get", "pod", "doomed", check=False).returncode == 1
    # The member judges the impersonated caller: a federation user allowed
    # to delete pods there, whom the member does not allow, is refused by it.
    in_member(fed, "b", bare_pod("guarded"))
    wait_for(lambda: fed.kubectl("get", "pod", "guarded", check=False).returncode == 0,
             "guarded listed")
    user = "reaper@example.com"
    fed.kubectl("create", "clusterrole", "pod-reaper", "--verb=get,list,watch,delete",
                "--resource=pods")
    fed.kubectl("create", "clusterrolebinding", "pod-reaper", "--clusterrole=pod-reaper",
                f"--user={user}")
    allowed = fed.kubectl("auth", "can-i", "delete", "pods", "--as", user, check=False)
    assert allowed.stdout.strip() == "yes", allowed.stdout
    refused = fed.kubectl("delete", "pod", "guarded", "--as", user, "--wait=false", check=False)
    assert refused.returncode == 1, refused.stdout
    assert f'User "{user}" cannot delete resource "pods"' in refused.stderr, refused.stderr
    assert fed["b"].kubectl("get", "pod", "guarded", "-n", "default",
                            check=False).returncode == 0
    # Without the federation's permission nothing reaches the member.
    viewer = "viewer@example.com"
    forbidden = fed.kubectl("delete", "pod", "guarded", "--as", viewer, "--wait=false",
                            check=False)
    assert forbidden.returncode == 1 and "forbidden" in forbidden.stderr, forbidden.stderr


def test_a_member_that_stops_being_ready_takes_its_pods_out(fed):
    in_member(fed, "c", bare_pod("in-c"))
    wait_for(lambda: fed.kubectl("get", "pod", "in-c", check=False).returncode == 0,
             "in-c listed")
    fed["c"].kill9()
    fed.wait_not_ready("c")
    wait_for(lambda: not federation_pods(fed, "-A", "-l", f"{CLUSTER}=c"),
             "c's pods gone from the view", timeout=30)
    assert federation_pods(fed, "-A", "-l", f"{CLUSTER}=a"), "a's pods stay"


def test_member_pods_false_serves_no_pods(tmp_path):
    server = FlotillaServer(str(tmp_path / "no-pods"), API_ONLY_ARGS + ["--member-pods=false"])
    server.start()
    try:
        resources = server.kubectl("api-resources", "--api-group=", "-o", "name").stdout.split()
        assert "pods" not in resources and "configmaps" in resources, resources
        listed = server.kubectl("get", "pods", "-A", check=False)
        assert listed.returncode != 0, listed.stdout
        assert 'the server doesn\'t have a resource type "pods"' in listed.stderr, listed.stderr
    finally:
        server.stop()
