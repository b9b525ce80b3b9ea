"""Restarting `flotilla server` on the same data dir, after SIGTERM and after
kill -9: acknowledged writes are kept, resourceVersions keep increasing, and
the kubeconfig, tokens and certificates are reused."""

import ssl
import threading

import requests
import yaml

import objects
from conftest import Kubeconfig, RawClient

NS = "restart"
CONFIGMAPS = f"/api/v1/namespaces/{NS}/configmaps"


def create_namespace(raw):
    response = raw.post("/api/v1/namespaces", json=objects.namespace(NS))
    assert response.status_code == 201, response.text


def state(raw):
    """name -> (uid, resourceVersion, data) of every ConfigMap in NS, and the
    list's resourceVersion."""
    listed = raw.get(CONFIGMAPS).json()
    items = {i["metadata"]["name"]: (i["metadata"]["uid"], i["metadata"]["resourceVersion"],
                                     i.get("data"))
             for i in listed["items"]}
    return items, int(listed["metadata"]["resourceVersion"])


def write_some(raw):
    """Creates, updates and deletes; returns the highest resourceVersion seen."""
    rvs = []
    for i in range(5):
        r = raw.post(CONFIGMAPS, json=objects.configmap(f"cm-{i}", {"i": str(i)}))
        assert r.status_code == 201, r.text
        rvs.append(int(r.json()["metadata"]["resourceVersion"]))
    r = raw.patch(f"{CONFIGMAPS}/cm-0", data='{"data": {"i": "updated"}}',
                  headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    rvs.append(int(r.json()["metadata"]["resourceVersion"]))
    r = raw.delete(f"{CONFIGMAPS}/cm-4")
    assert r.status_code == 200, r.text
    r = raw.post("/apis/apps/v1/namespaces/restart/deployments", json=objects.deployment("web"))
    assert r.status_code == 201, r.text
    rvs.append(int(r.json()["metadata"]["resourceVersion"]))
    return max(rvs)


def assert_resource_versions_increase(raw, previous_max):
    r = raw.post(CONFIGMAPS, json=objects.configmap("after-restart"))
    assert r.status_code == 201, r.text
    assert int(r.json()["metadata"]["resourceVersion"]) > previous_max
    _, list_rv = state(raw)
    assert list_rv > previous_max


def serving_certificate(port):
    return ssl.get_server_certificate(("127.0.0.1", port))


def test_graceful_restart_keeps_objects_credentials_and_certificates(server_factory, tmp_path):
    srv = server_factory().start()
    raw = srv.raw()
    create_namespace(raw)
    max_rv = write_some(raw)
    before, _ = state(raw)
    assert sorted(before) == ["cm-0", "cm-1", "cm-2", "cm-3"]
    old_kubeconfig = Kubeconfig(srv.kubeconfig)
    old_readonly = Kubeconfig(srv.readonly_kubeconfig)
    old_certificate = serving_certificate(srv.port)

    assert srv.stop() == 0, "SIGTERM stops the server cleanly"
    srv.start()

    raw = srv.raw()
    after, _ = state(raw)
    assert after == before
    assert raw.get("/apis/apps/v1/namespaces/restart/deployments/web").status_code == 200
    assert_resource_versions_increase(raw, max_rv)

    new_kubeconfig = Kubeconfig(srv.kubeconfig)
    assert new_kubeconfig.ca_pem == old_kubeconfig.ca_pem, "the CA is reused"
    assert new_kubeconfig.token == old_kubeconfig.token, "the admin token is reused"
    assert Kubeconfig(srv.readonly_kubeconfig).token == old_readonly.token
    assert serving_certificate(srv.port) == old_certificate, "the serving certificate is reused"

    # The kubeconfig written before the restart still works; only the port moved,
    # because the test asks for a free one each time.
    doc = old_kubeconfig.doc
    for cluster in doc["clusters"]:
        cluster["cluster"]["server"] = srv.url
    old_path = tmp_path / "old-kubeconfig"
    old_path.write_text(yaml.safe_dump(doc))
    out = srv.kubectl("get", "cm", "cm-0", "-n", NS, "-o", "jsonpath={.data.i}",
                      kubeconfig=str(old_path)).stdout
    assert out == "updated"


def test_kill_9_keeps_acknowledged_writes(server_factory):
    srv = server_factory().start()
    raw = srv.raw()
    create_namespace(raw)
    max_rv = write_some(raw)
    before, _ = state(raw)

    srv.kill9()
    srv.start()

    raw = srv.raw()
    after, _ = state(raw)
    assert after == before
    assert_resource_versions_increase(raw, max_rv)


def test_kill_9_mid_write_keeps_every_acknowledged_write(server_factory):
    srv = server_factory().start()
    raw = srv.raw()
    create_namespace(raw)
    acknowledged = []
    enough = threading.Event()
    # Its own client: the fixture's clients are closed when the server is killed.
    writer_raw = RawClient(srv.url, srv.ca_file(), Kubeconfig(srv.kubeconfig).token)

    def writer():
        for i in range(100000):
            try:
                r = writer_raw.post(CONFIGMAPS, json=objects.configmap(f"w-{i}"), timeout=30)
            except requests.RequestException:
                return  # the server is gone
            if r.status_code != 201:
                return
            acknowledged.append((f"w-{i}", int(r.json()["metadata"]["resourceVersion"])))
            if len(acknowledged) >= 30:
                enough.set()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    assert enough.wait(timeout=120), f"only {len(acknowledged)} writes acknowledged"
    srv.kill9()
    thread.join(timeout=60)
    assert not thread.is_alive()
    writer_raw.close()

    srv.start()
    raw = srv.raw()
    after, _ = state(raw)
    missing = [name for name, _ in acknowledged if name not in after]
    assert not missing, f"acknowledged but lost after kill -9: {missing}"
    for name, rv in acknowledged:
        assert int(after[name][1]) == rv
    assert_resource_versions_increase(raw, max(rv for _, rv in acknowledged))


def test_restarts_in_a_row_keep_increasing_resource_versions(server_factory):
    srv = server_factory().start()
    raw = srv.raw()
    create_namespace(raw)
    seen = []
    for round_ in range(3):
        r = raw.post(CONFIGMAPS, json=objects.configmap(f"round-{round_}"))
        assert r.status_code == 201, r.text
        seen.append(int(r.json()["metadata"]["resourceVersion"]))
        if round_ % 2:
            srv.kill9()
        else:
            assert srv.stop() == 0
        srv.start()
        raw = srv.raw()
    assert seen == sorted(set(seen))
    after, _ = state(raw)
    assert sorted(after) == ["round-0", "round-1", "round-2"]
    assert_resource_versions_increase(raw, seen[-1])
