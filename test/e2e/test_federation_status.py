"""`kubectl flotilla status` and `kubectl flotilla clusters` end to end
(docs/dashboard.md), over three `flotilla member` clusters with a federated
ReplicaSet and a federated Deployment, checked cell by cell against what
the members run; the JSON output carries the same; a cordon, a new
federated ConfigMap and a stopped member show up in the clusters table,
and the stopped member's share leaves its column."""

import json

import pytest

from conftest import table, wait_for
from federation import SLOW, plugin, replicaset, start_federation
from objects import configmap, deployment

MEMBERS = ("a", "b", "c")


@pytest.fixture(scope="module")
def fed(tmp_path_factory):
    federation = start_federation(tmp_path_factory.mktemp("status"), {
        name: ({}, ["--nodes", "2", "--node-cpu", "4", "--zones", f"zone-{name}", "--region", "r1"])
        for name in MEMBERS})
    try:
        federation.create(replicaset("web", 6, cpu="100m"), "default")
        federation.create(deployment("api", 3), "default")
        wait_for(lambda: ready(federation, "replicasets", "web") == 6, "web ready")
        wait_for(lambda: ready(federation, "deployments", "api") == 3, "api ready")
        yield federation
    finally:
        federation.close()


def ready(fed, resource, name):
    out = fed.kubectl("get", resource, name, "-o", "json", check=False)
    return json.loads(out.stdout).get("status", {}).get("readyReplicas", 0) if out.returncode == 0 else 0


def rows(output):
    """The table's rows by NAME, without the legend lines under it."""
    lines = [l for l in output.splitlines() if not l[:2] in ("*:", "!:")]
    headers, parsed = table("\n".join(lines))
    return headers, {r["NAME"]: r for r in parsed}


def running_in(member, kind, name):
    """What the member's local object says: (ready, spec.replicas)."""
    obj = json.loads(member.kubectl("get", kind, name, "-o", "json").stdout)
    return obj.get("status", {}).get("readyReplicas", 0), obj["spec"]["replicas"]


def test_status_has_a_cell_per_cluster_with_what_the_member_runs(fed):
    def settled():
        headers, by_name = rows(plugin(fed, "status").stdout)
        web, api = by_name.get("replicaset/web"), by_name.get("deployment/api")
        return (web and api and web["READY"] == "6/6" and api["READY"] == "3/3" and
                api["ROLLOUT"] == "complete" and (headers, web, api))
    headers, web, api = wait_for(settled, "status shows both workloads ready")
    assert headers == ["NAME", "READY", "a", "b", "c", "ROLLOUT", "HPA", "AFFINITY"]
    for name in MEMBERS:
        r, planned = running_in(fed[name], "replicaset", "web")
        assert web[name] == f"{r}/{planned}", (name, web)
        r, planned = running_in(fed[name], "deployment", "api")
        assert api[name] == f"{r}/{planned}", (name, api)
    assert sum(int(web[n].split("/")[1]) for n in MEMBERS) == 6
    assert web["ROLLOUT"] == "-" and web["HPA"] == "-"
    assert web["AFFINITY"] == api["AFFINITY"] == "strictly-decoupled"

    one = plugin(fed, "status", "deploy/api").stdout
    assert "deployment/api" in one and "replicaset/web" not in one
    assert "\033[" not in one  # not a terminal: no colour

    doc = json.loads(plugin(fed, "status", "-o", "json").stdout)
    assert [c["name"] for c in doc["clusters"]] == list(MEMBERS)
    by_name = {w["name"]: w for w in doc["workloads"]}
    assert by_name["api"]["kind"] == "Deployment"
    assert by_name["api"]["rollout"]["state"] == "complete"
    assert sorted(by_name["api"]["rollout"]["done"]) == [
        n for n in MEMBERS if by_name["api"]["clusters"].get(n, {}).get("planned", 0) > 0]
    assert sum(c["ready"] for c in by_name["web"]["clusters"].values()) == 6

    wide = plugin(fed, "status", "-A", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[:3] == ["NAMESPACE", "NAME", "READY"]
    assert wide[1].split() == ["r1/zone-a", "r1/zone-b", "r1/zone-c"]

    missing = plugin(fed, "status", "deployment/nope", check=False)
    assert missing.returncode == 1 and "not found" in missing.stderr
    bad = plugin(fed, "status", "pods/x", check=False)
    assert bad.returncode == 1 and "expected " in bad.stderr and "deployment/NAME" in bad.stderr


def test_clusters_shows_health_capacity_cordon_and_objects(fed):
    def settled():
        headers, by_name = rows(plugin(fed, "clusters").stdout)
        return all(by_name.get(n, {}).get("OBJECTS", "-") != "-" for n in MEMBERS) and (
            headers, by_name)
    headers, by_name = wait_for(settled, "clusters with their object counts")
    assert headers == ["NAME", "STATUS", "SCHEDULING", "REGION", "ZONES", "VERSION", "CPU",
                       "MEMORY", "OBJECTS", "MESSAGE"]
    for name in MEMBERS:
        row = by_name[name]
        assert (row["STATUS"], row["SCHEDULING"], row["ZONES"]) == (
            "Ready", "Schedulable", f"zone-{name}")
        assert row["VERSION"].startswith("v1.")
        # Two nodes of 4 cpu; what the pods there request (web's 100m each).
        assert row["CPU"].split(" ")[0].endswith("/8"), row
        assert row["MESSAGE"] == ""
    doc = json.loads(plugin(fed, "clusters", "-o", "json").stdout)
    assert [c["readyNodes"] for c in doc["clusters"]] == [2, 2, 2]

    objects = {n: int(by_name[n]["OBJECTS"]) for n in MEMBERS}
    fed.create(configmap("settings"), "default")
    # A change of the count alone is written once a minute has passed since
    # the status's last write, at the probe (every 10 s) after that.
    wait_for(lambda: all(int(rows(plugin(fed, "clusters").stdout)[1][n]["OBJECTS"]) ==
                         objects[n] + 1 for n in MEMBERS), "one more federated object each",
             timeout=100, interval=1)

    plugin(fed, "cordon", "b")
    wait_for(lambda: rows(plugin(fed, "clusters").stdout)[1]["b"]["SCHEDULING"] == "Cordoned",
             "b cordoned")
    plugin(fed, "uncordon", "b")

    fed["c"].terminate()
    fed.wait_not_ready("c")
    row = wait_for(lambda: rows(plugin(fed, "clusters").stdout)[1]["c"], "c")
    assert row["STATUS"] in ("Offline", "NotReady"), row
    assert row["MESSAGE"] != "", row
    # Its share moves to the others: c's cell empties, a and b plan all 6.
    web = wait_for(lambda: (lambda w: w["c"] == "-" and w)(
        rows(plugin(fed, "status").stdout)[1]["replicaset/web"]), "web off c")
    assert sum(int(web[n].split("/")[1].rstrip("*!")) for n in ("a", "b")) == 6, web
