"""Coupled applications end to end (docs/federation.md, "Applications"), over
three `flotilla member` clusters of different sizes: a and c have one node
of 8 cpu, b one of 4. Pods take a second to start, so that a move spans
many samples.

A preferentially coupled application of a Deployment and a ReplicaSet
lands whole in b (its preferences favour b and it fits); grown past b's
room it moves whole to a cluster with room, and its running pods never
drop below its size during the move (sampled from the members); that
cluster stopped, it comes up whole in the last one.

Drained, b gives up a decoupled ReplicaSet make-before-break and the
coupled application moves whole; the StatefulSet stays and the drain
lists it.

A decoupled ReplicaSet whose cluster selector changes moves
make-before-break; an application with anti-affinity stays out of the
other one's cluster.

A strictly coupled application stays put when its cluster stops and says
so; `kubectl flotilla migrate --dry-run` says what it would do, and
`kubectl flotilla migrate` moves it. Invalid annotations give 422.
"""

import json
import threading
import time

import pytest

from conftest import table, wait_for
from federation import APPLICATION, LOCATION_AFFINITY, SLOW, condition, plugin, replicaset, \
    running, start_federation

MEMBERS = {"a": "8", "b": "4", "c": "8"}
RS_PREFERENCES = "federation.kubernetes.io/replica-set-preferences"
DEPLOYMENT_PREFERENCES = "federation.kubernetes.io/deployment-preferences"
PREFER_B = json.dumps({"clusters": {"b": {"weight": 2}, "*": {"weight": 1}}})


@pytest.fixture
def fed(tmp_path):
    federation = start_federation(tmp_path, {
        name: ({"location": "cloud" if name != "a" else "on-prem"},
               ["--nodes", "1", "--node-cpu", cpu, "--zones", f"zone-{name}",
                "--pod-startup", "1s"])
        for name, cpu in MEMBERS.items()})
    try:
        federation.create_namespace("shop")
        yield federation
    finally:
        federation.close()


def workload(kind, name, replicas, app, cls, annotations=None):
    preferences = DEPLOYMENT_PREFERENCES if kind == "Deployment" else RS_PREFERENCES
    meta = {"name": name, "labels": {APPLICATION: app},
            "annotations": {LOCATION_AFFINITY: cls, preferences: PREFER_B,
                            **(annotations or {})}}
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"terminationGracePeriodSeconds": 0,
                                           "containers": [{"name": "app", "image": "nginx:1.27",
                                                           "resources": {"requests": {
                                                               "cpu": "1"}}}]}}}}


def running_by_cluster(fed, names, reverse=False):
    """{cluster: running pods of `names`} over the reachable members, read
    one after another (in reverse order of name with `reverse`)."""
    out = {}
    for cluster, member in sorted(fed.members.items(), reverse=reverse):
        if member.stopped or not member.alive():
            continue
        n = sum(1 for name in names for p in member.pods("shop", f"app={name}") if running(p))
        if n:
            out[cluster] = n
    return out


def wait_running(fed, names, expected, timeout=90):
    seen = {}

    def check():
        seen["now"] = running_by_cluster(fed, names)
        return seen["now"] == expected

    wait_for(check, f"running pods of {names} to be {expected} (last {seen})", timeout)


def affinity(fed, resource, name):
    out = fed.kubectl("get", resource, name, "-n", "shop", "-o", "json")
    return condition(json.loads(out.stdout), "LocationAffinity")


def events(fed, kind, name, reason):
    out = fed.kubectl("get", "events", "-n", "shop", "--field-selector",
                      f"involvedObject.name={name},involvedObject.kind={kind},reason={reason}",
                      "-o", "json")
    return [e["message"] for e in json.loads(out.stdout)["items"]]


class Sampler:
    """Counts the running pods of `names` over every reachable member every
    0.1 s, in a thread, and keeps the lowest count."""

    def __init__(self, fed, names):
        self.fed, self.names, self.lowest, self.samples = fed, names, None, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            # A sweep reads the members one after another, not at one
            # instant: pods that moved from a member read late to one read
            # early in between count nowhere (a false low when the sweep is
            # slow, as on a loaded machine). A sweep back, taking each
            # member's larger count, reads every move's destination after
            # its source: a move that leaves no gap is never counted short,
            # and a gap longer than the two sweeps still shows.
            forward = running_by_cluster(self.fed, self.names)
            backward = running_by_cluster(self.fed, self.names, reverse=True)
            n = sum(max(forward.get(c, 0), backward.get(c, 0))
                    for c in set(forward) | set(backward))
            self.lowest = n if self.lowest is None else min(self.lowest, n)
            self.samples += 1
            time.sleep(0.1)

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.lowest


def test_a_coupled_application_moves_whole_and_never_drops_below_its_size(fed):
    fed.create(workload("Deployment", "web", 3, "shop", "preferentially-coupled"), "shop")
    fed.create(workload("ReplicaSet", "db", 1, "shop", "preferentially-coupled"), "shop")
    # 4 cpu in all: b (4 cpu, preferred) has room.
    wait_running(fed, ["web", "db"], {"b": 4})
    placed = wait_for(lambda: affinity(fed, "deployment", "web").get("reason") == "Placed" and
                      affinity(fed, "deployment", "web"), "web Placed")
    assert placed["message"] == "application shop runs in cluster b"

    # Grown to 6 cpu: b has no room; a and c have. Make-before-break.
    sampler = Sampler(fed, ["web", "db"])
    fed.kubectl("scale", "deployment", "web", "-n", "shop", "--replicas", "5")
    dest = wait_for(lambda: next((c for c in ("a", "c")
                                  if running_by_cluster(fed, ["web", "db"]).get(c) == 6), None),
                    "shop running whole in a or c", timeout=90)
    wait_running(fed, ["web", "db"], {dest: 6})
    lowest = sampler.stop()
    assert sampler.samples >= 5  # pods take 1 s to start: the move spans many samples
    assert lowest >= 4, f"running pods dropped to {lowest} during the move"
    assert fed["b"].rs_replicas("shop", "db") is None
    wait_for(lambda: events(fed, "Deployment", "web", "Migrated"), "Migrated event")
    assert events(fed, "ReplicaSet", "db", "MigrationStarted")

    # Its cluster stopped: it comes up whole in the other one with room.
    other = "c" if dest == "a" else "a"
    fed[dest].sigstop()
    fed.wait_not_ready(dest)
    wait_running(fed, ["web", "db"], {other: 6}, timeout=SLOW)
    fed[dest].sigcont()


def test_a_strictly_coupled_application_waits_for_kubectl_flotilla_migrate(fed):
    fed.create(workload("ReplicaSet", "ledger", 2, "books", "strictly-coupled"), "shop")
    wait_running(fed, ["ledger"], {"b": 2})

    out = plugin(fed, "migrate", "books", "-n", "shop", "--to", "c", "--dry-run")
    assert "application books (strictly-coupled): ReplicaSet ledger (b=2)" in out.stdout
    assert "(dry run)" in out.stdout
    out = plugin(fed, "migrate", "nothing", "-n", "shop", "--to", "c", check=False)
    assert out.returncode != 0 and 'application "nothing" has no federated' in out.stderr

    fed["b"].sigstop()
    fed.wait_not_ready("b")
    cond = wait_for(lambda: affinity(fed, "rs", "ledger").get("reason") ==
                    "ManualMigrationRequired" and affinity(fed, "rs", "ledger"),
                    "ManualMigrationRequired")
    assert cond["status"] == "False"
    assert "kubectl flotilla migrate books" in cond["message"]
    assert events(fed, "ReplicaSet", "ledger", "ManualMigrationRequired")
    # Nothing moved by itself.
    assert running_by_cluster(fed, ["ledger"]) == {}

    out = plugin(fed, "migrate", "books", "-n", "shop", "--to", "c", timeout=120)
    assert "asked the federation to move it to c" in out.stdout
    assert "available in c; originals deleted" in out.stdout
    wait_running(fed, ["ledger"], {"c": 2})
    fed["b"].sigcont()


def test_bad_application_annotations_are_refused(fed):
    bad = workload("ReplicaSet", "web", 1, "shop", "preferentially-coupled",
                   {"federation.kubernetes.io/migration-window": "2am-4am"})
    out = fed.create(bad, "shop", check=False)
    assert out.returncode != 0
    assert "migration-window" in out.stderr and "HH:MM-HH:MM" in out.stderr
    bad = workload("ReplicaSet", "web", 1, "shop", "preferentially-coupled",
                   {"federation.kubernetes.io/anti-affinity": "shop"})
    out = fed.create(bad, "shop", check=False)
    assert out.returncode != 0 and "cannot avoid itself" in out.stderr


def statefulset(name, replicas):
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "serviceName": name,
                     "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"terminationGracePeriodSeconds": 0,
                                           "containers": [{"name": "app", "image": "nginx:1.27",
                                                           "resources": {"requests": {
                                                               "cpu": "100m"}}}]}}}}


def test_a_drain_moves_what_can_move_make_before_break_and_lists_what_stays(fed):
    fed.create(replicaset("spread", 6, cpu="100m"), "shop")
    fed.create(workload("Deployment", "web", 2, "shop", "preferentially-coupled"), "shop")
    fed.create(workload("ReplicaSet", "db", 1, "shop", "preferentially-coupled"), "shop")
    fed.create(statefulset("ledger", 3), "shop")
    wait_running(fed, ["spread"], {"a": 2, "b": 2, "c": 2})
    wait_running(fed, ["web", "db"], {"b": 3})
    wait_running(fed, ["ledger"], {"a": 1, "b": 1, "c": 1})

    spread, shop = Sampler(fed, ["spread"]), Sampler(fed, ["web", "db"])
    out = plugin(fed, "drain", "b", timeout=120)
    lines = out.stdout.splitlines()
    assert lines[0] == "cluster.federation/b draining"
    assert "ReplicaSet shop/spread moved off" in lines
    assert "Deployment shop/web moved off" in lines and "ReplicaSet shop/db moved off" in lines
    assert "left: StatefulSet shop/ledger (1 replicas): stateful replicas keep their " \
           "cluster" in lines
    assert lines[-1] == "cluster.federation/b drained"
    wait_running(fed, ["spread"], {"a": 3, "c": 3})
    assert set(running_by_cluster(fed, ["web", "db"])) in ({"a"}, {"c"})
    assert spread.stop() >= 6, "the decoupled ReplicaSet lost running pods during the drain"
    assert shop.stop() >= 3, "the application lost running pods during the drain"
    assert running_by_cluster(fed, ["ledger"]) == {"a": 1, "b": 1, "c": 1}

    headers, rows = table(fed.kubectl("get", "clusters").stdout)
    assert {row["NAME"]: row["SCHEDULING"] for row in rows} == \
        {"a": "Enabled", "b": "Draining", "c": "Enabled"}
    assert plugin(fed, "uncordon", "b").stdout.strip() == "cluster.federation/b uncordoned"


def test_a_changed_selector_moves_a_decoupled_workload_make_before_break(fed):
    cloud = [{"key": "location", "operator": "In", "values": ["cloud"]}]
    fed.create(replicaset("spread", 4, cpu="100m", selector=cloud), "shop")
    wait_running(fed, ["spread"], {"b": 2, "c": 2})
    sampler = Sampler(fed, ["spread"])
    obj = replicaset("spread", 4, cpu="100m",
                     selector=[{"key": "location", "operator": "In", "values": ["on-prem"]}])
    fed.apply(obj, "shop")
    wait_running(fed, ["spread"], {"a": 4})
    assert sampler.stop() >= 4, "the ReplicaSet lost running pods while it moved"
    assert fed["b"].rs_replicas("shop", "spread") is None


def test_anti_affinity_keeps_an_application_out_of_the_others_cluster(fed):
    fed.create(workload("ReplicaSet", "primary", 1, "db", "preferentially-coupled"), "shop")
    wait_running(fed, ["primary"], {"b": 1})
    fed.create(workload("ReplicaSet", "replica", 1, "db-replica", "preferentially-coupled",
                        {"federation.kubernetes.io/anti-affinity": "db"}), "shop")
    placed = wait_for(lambda: {c: n for c, n in running_by_cluster(fed, ["replica"]).items()},
                      "replica running")
    assert "b" not in placed and sum(placed.values()) == 1, placed
