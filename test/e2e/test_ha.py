"""Several federation servers on one etcd (issue: high availability).

One etcd member started from Debian's etcd-server, two `flotilla server
--storage etcd` processes sharing it (the second on a copy of the first's
data directory, so one kubeconfig serves both), leader election on a short
lease so that the test runs in seconds: what is written through one server is
read at once through the other, a watch on one sees every write made through
the other in order, and after kill -9 of the leading server the other leads
and finishes the placements without placing anything twice; the killed
server, restarted, is a follower.
"""

import json
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest

from conftest import (ETCD, Etcd, FlotillaServer, _die_with_parent, free_port, stop_process,
                      wait_for)
from federation import FAST_FED_ARGS, Federation, plan, replicaset

LEASE = ["--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s",
         "--leader-elect-retry-period", "500ms"]
CLUSTERS = ["a", "b"]
MEMBER_ARGS = ["--nodes", "1", "--node-cpu", "40", "--pod-startup", "100ms"]


@pytest.fixture
def etcd(tmp_path):
    member = Etcd(str(tmp_path / "etcd"))
    try:
        yield member.url
    finally:
        member.stop()


def etcd_args(url):
    return ["--storage", "etcd", "--etcd-servers", url] + LEASE


def leading(server):
    """This server's own view: 1 while it runs the controllers (asked on one
    kept-alive connection per server start)."""
    if getattr(server, "metrics_client", None) not in server._clients:
        server.metrics_client = server.raw()
    text = server.metrics_client.get("/metrics", timeout=10).text
    for line in text.splitlines():
        if line.startswith("flotilla_leader_election_master_status"):
            return line.rsplit(" ", 1)[1] == "1"
    raise AssertionError("no leader election metric")


def second_server(first, root, args):
    """A server on a copy of `first`'s data directory (its CA, serving
    certificate and tokens), as docs/storage.md describes."""
    data_dir = os.path.join(root, "second")
    shutil.copytree(os.path.join(first.data_dir, "pki"), os.path.join(data_dir, "pki"))
    return FlotillaServer(data_dir, args)


def test_two_servers_serve_one_federation(etcd, tmp_path):
    args = ["--controllers=cluster"] + etcd_args(etcd)
    one = FlotillaServer(str(tmp_path / "one"), args).start()
    two = second_server(one, str(tmp_path), args).start()
    try:
        # The first server's kubeconfig is good for the second.
        two_raw = one.raw()
        two_raw.base = two.url
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ha"}}
        assert one.raw().post("/api/v1/namespaces", json=ns).status_code == 201
        path = "/api/v1/namespaces/ha/configmaps"
        start_rv = two.raw().get(path).json()["metadata"]["resourceVersion"]
        events = []
        ready = threading.Event()

        def watch():
            with two.raw().get(f"{path}?watch=1&resourceVersion={start_rv}", stream=True,
                               timeout=60) as response:
                ready.set()
                for line in response.iter_lines():
                    if line:
                        events.append(json.loads(line))
                    if len(events) >= 40:
                        return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        ready.wait(30)
        written = []
        for i in range(20):
            cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm{i}"},
                  "data": {"i": str(i)}}
            created = one.raw().post(path, json=cm)
            assert created.status_code == 201, created.text
            rv = created.json()["metadata"]["resourceVersion"]
            written.append(("ADDED", f"cm{i}", rv))
            # Read at once through the other server, at the same version.
            read = two_raw.get(f"{path}/cm{i}")
            assert read.status_code == 200, read.text
            assert read.json()["metadata"]["resourceVersion"] == rv
            cm["data"]["i"] = f"{i}!"
            cm["metadata"]["resourceVersion"] = rv
            updated = one.raw().put(f"{path}/cm{i}", json=cm)
            assert updated.status_code == 200, updated.text
            written.append(("MODIFIED", f"cm{i}", updated.json()["metadata"]["resourceVersion"]))
        watcher.join(60)
        seen = [(e["type"], e["object"]["metadata"]["name"],
                 e["object"]["metadata"]["resourceVersion"]) for e in events]
        assert seen == written
        # Both serve the same list at one revision.
        names = lambda s: [i["metadata"]["name"] for i in s.raw().get(path).json()["items"]]
        assert names(one) == names(two) and len(names(one)) == 20
        # The kubectl of the first server's kubeconfig, pointed at the second.
        out = one.kubectl("get", "configmaps", "-n", "ha", "--server", two.url, "-o", "name").stdout
        assert len(out.split()) == 20
    finally:
        two.stop()
        one.stop()


def test_the_follower_takes_over_when_the_leader_is_killed(etcd, tmp_path):
    fed = Federation(tmp_path, FAST_FED_ARGS + etcd_args(etcd)).start()
    standby = second_server(fed.server, str(tmp_path), FAST_FED_ARGS + etcd_args(etcd))
    try:
        wait_for(lambda: leading(fed.server), "the first server leads")
        standby.start()
        assert not leading(standby)
        for name in CLUSTERS:
            fed.add_member(name, {"zone": name}, MEMBER_ARGS, wait=False)
        for name in CLUSTERS:
            fed.wait_ready(name)
        fed.create_namespace("shop")
        fed.create(replicaset("web", 10), "shop")
        fed.wait_layout("shop", "web", plan(10, CLUSTERS, "shop/web"))
        uids = {c: fed[c].local_rs("shop", "web")["metadata"]["uid"] for c in CLUSTERS}

        # Placements in flight when the leader dies.
        for i in range(5):
            fed.create(replicaset(f"api{i}", 4), "shop")
        fed.server.kill9()
        killed = time.monotonic()
        wait_for(lambda: leading(standby), "the standby leads", timeout=60)
        print(f"standby leading {time.monotonic() - killed:.2f} s after kill -9 of the leader "
              f"(lease duration 4 s)")
        fed.server = standby  # the federation is now served by the standby
        fed._api = None
        for i in range(5):
            fed.wait_layout("shop", f"api{i}", plan(4, CLUSTERS, f"shop/api{i}"))
        fed.wait_layout("shop", "web", plan(10, CLUSTERS, "shop/web"))
        # Nothing placed twice: one local ReplicaSet per cluster and name,
        # the first ones never replaced.
        for c in CLUSTERS:
            assert fed[c].local_rs("shop", "web")["metadata"]["uid"] == uids[c]
            names = fed[c].kubectl("get", "rs", "-n", "shop", "-o", "name").stdout.split()
            assert sorted(names) == sorted(["replicaset.apps/web"] +
                                           [f"replicaset.apps/api{i}" for i in range(5)])

        # The killed server, restarted, follows.
        first = FlotillaServer(os.path.join(str(tmp_path), "federation"),
                               FAST_FED_ARGS + etcd_args(etcd)).start()
        try:
            assert not leading(first)
            assert leading(standby)
            holder = json.loads(standby.kubectl("get", "lease", "-n", "flotilla-system",
                                                "flotilla-controllers", "-o", "json").stdout)
            assert holder["spec"]["holderIdentity"]
        finally:
            first.stop()
    finally:
        fed.close()
        if standby.running():
            standby.stop()


def test_a_leader_cut_off_from_etcd_stops_before_the_other_takes_over(etcd, tmp_path):
    """The leader reaches etcd through an `etcd grpc-proxy` that is then
    frozen (SIGSTOP): its requests hang rather than fail, as across a
    partition. It must stop its controllers at its renew deadline, before
    the other server, which reaches etcd directly, takes the lease."""
    port = free_port()
    log = open(tmp_path / "proxy.log", "w")
    proxy = subprocess.Popen(
        [ETCD, "grpc-proxy", "start", "--endpoints", etcd.replace("http://", ""),
         "--listen-addr", f"127.0.0.1:{port}", "--data-dir", str(tmp_path / "proxy")],
        stdout=subprocess.DEVNULL, stderr=log, preexec_fn=_die_with_parent)
    lease = ["--leader-elect-lease-duration", "6s", "--leader-elect-renew-deadline", "3s",
             "--leader-elect-retry-period", "500ms"]
    cut = FlotillaServer(str(tmp_path / "cut"), ["--controllers=cluster", "--storage", "etcd",
                                                 "--etcd-servers", f"http://127.0.0.1:{port}",
                                                 *lease]).start()
    other = second_server(cut, str(tmp_path), ["--controllers=cluster", "--storage", "etcd",
                                               "--etcd-servers", etcd, *lease])
    try:
        wait_for(lambda: leading(cut), "the server behind the proxy leads")
        other.start()
        assert not leading(other)
        proxy.send_signal(signal.SIGSTOP)
        frozen = time.monotonic()
        stopped = started = None
        while stopped is None or started is None:
            assert time.monotonic() - frozen < 60, (stopped, started)
            if stopped is None and not leading(cut):
                stopped = time.monotonic() - frozen
            if started is None and leading(other):
                started = time.monotonic() - frozen
            time.sleep(0.02)
        print(f"the cut-off leader stopped {stopped:.2f} s after the freeze, the other led "
              f"{started:.2f} s after it (lease 6 s, renew deadline 3 s)")
        assert stopped < started
    finally:
        proxy.send_signal(signal.SIGCONT)
        other.stop()
        cut.stop()
        stop_process(proxy)
        log.close()


def test_compaction_expires_old_watches_and_a_relist_misses_nothing(etcd, tmp_path):
    srv = FlotillaServer(str(tmp_path / "one"), ["--controllers=cluster", "--storage", "etcd",
                                                 "--etcd-servers", etcd,
                                                 "--etcd-compaction-interval", "1s"]).start()
    try:
        api = srv.raw()
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "compact"}}
        assert api.post("/api/v1/namespaces", json=ns).status_code == 201
        path = "/api/v1/namespaces/compact/configmaps"

        def write(i, value):
            cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm{i}"},
                  "data": {"v": value}}
            r = api.put(f"{path}/cm{i}", json=cm)
            if r.status_code == 404:
                r = api.post(path, json=cm)
            assert r.status_code in (200, 201), r.text

        def listed():
            body = api.get(path).json()
            return ({i["metadata"]["name"]: i["data"]["v"] for i in body["items"]},
                    body["metadata"]["resourceVersion"])

        for i in range(10):
            write(i, "first")
        # An informer lists, then is away while writes happen and etcd is
        # compacted past what it saw.
        cache, rv = listed()
        for i in range(5, 15):
            write(i, "second")

        def gone():
            r = api.get(path, params={"watch": "true", "resourceVersion": rv,
                                      "timeoutSeconds": "1"}, stream=True)
            with r:
                if r.status_code == 410:
                    return True
                first = next(r.iter_lines(), b"")
                return b'"code":410' in first
        wait_for(gone, "the compactor to compact past the informer's resourceVersion", timeout=60)

        # Its watch gets 410, so it re-lists: the new list has every write.
        cache, rv = listed()
        assert cache == {f"cm{i}": ("first" if i < 5 else "second") for i in range(15)}
        # And it follows from the new list's resourceVersion.
        write(0, "third")
        with api.get(path, params={"watch": "true", "resourceVersion": rv,
                                   "timeoutSeconds": "10"}, stream=True) as r:
            event = json.loads(next(r.iter_lines()))
        assert event["type"] == "MODIFIED" and event["object"]["data"] == {"v": "third"}
    finally:
        srv.stop()
