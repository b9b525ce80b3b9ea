"""Custom kinds federated end to end (docs/crds.md, "Federated"): a
CustomResourceDefinition applied to a `flotilla server` reaches the
`flotilla member` clusters, then the custom kind's objects follow to the
clusters their cluster selector admits, whole but for their status; copies
edited or deleted in a member come back; each copy's status is gathered into
the federated object's status-by-cluster annotation; a restarted member
keeps serving the kind and its copies; a bad placement
annotation is refused at admission; deleting an object, and then the CRD,
takes the copies away. Driven with the real kubectl."""

import json

import pytest

from conftest import wait_for
from federation import CLUSTER_SELECTOR, FED_ARGS, FEDERATED_OBJECT, MANAGED_BY, Federation

GROUP = "stable.example.com"
STATUS_BY_CLUSTER = "federation.kubernetes.io/status-by-cluster"
FINALIZER = "federation.kubernetes.io/delete-from-underlying-clusters"


def crd(plural, kind, scope="Namespaced"):
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "cronSpec": {"type": "string"},
            "replicas": {"type": "integer", "default": 1}}},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"}, "phase": {"type": "string"}}}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {"group": GROUP, "scope": scope,
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": schema},
                               "subresources": {"status": {}}}]}}


def crontab(name, cron="* * * * */5", selector=None, kind="CronTab"):
    meta = {"name": name}
    if selector is not None:
        meta["annotations"] = {CLUSTER_SELECTOR: json.dumps(selector)}
    return {"apiVersion": f"{GROUP}/v1", "kind": kind, "metadata": meta,
            "spec": {"cronSpec": cron}}


def path(plural, name=None, ns=None):
    base = f"/apis/{GROUP}/v1" + (f"/namespaces/{ns}" if ns else "") + f"/{plural}"
    return base if name is None else f"{base}/{name}"


def established(obj):
    return obj is not None and any(
        c["type"] == "Established" and c["status"] == "True"
        for c in obj.get("status", {}).get("conditions", []))


@pytest.fixture(scope="module")
def fed(tmp_path_factory):
    f = Federation(tmp_path_factory.mktemp("custom"), server_args=FED_ARGS).start()
    try:
        f.add_member("a", labels={"region": "eu"})
        # On SQLite, as `flotilla up` runs them: what it stored outlives a restart.
        f.add_member("b", labels={"region": "us"}, args=["--storage", "sqlite"])
        f.apply(crd("crontabs", "CronTab"), "default")
        f.kubectl("wait", "--for", "condition=established", "--timeout=60s",
                  f"crd/crontabs.{GROUP}")
        for m in (f["a"], f["b"]):
            wait_for(lambda m=m: established(m.get_json(
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.{GROUP}")),
                f"{m.name}: the CRD established")
        yield f
    finally:
        f.close()


def federated(fed, name, ns):
    response = fed.api().get(path("crontabs", name, ns), timeout=10)
    return response.json() if response.status_code == 200 else None


def copy_of(member, name, ns, plural="crontabs"):
    return member.get_json(path(plural, name, ns))


def cron_of(member, name, ns):
    c = copy_of(member, name, ns)
    return None if c is None else c["spec"].get("cronSpec")


def test_the_crd_is_propagated_as_it_was_written(fed):
    for m in (fed["a"], fed["b"]):
        copy = m.get_json(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.{GROUP}")
        assert copy["metadata"]["labels"][MANAGED_BY] == "flotilla"
        assert copy["spec"]["names"]["kind"] == "CronTab"
        props = copy["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
        assert props["spec"]["properties"]["replicas"]["default"] == 1


def test_objects_follow_restored_and_their_status_comes_back(fed):
    fed.kubectl("create", "namespace", "jobs")
    fed.apply(crontab("nightly"), "jobs")
    a, b = fed["a"], fed["b"]
    for m in (a, b):
        wait_for(lambda m=m: cron_of(m, "nightly", "jobs") == "* * * * */5",
                 f"{m.name}: crontab jobs/nightly")
        c = copy_of(m, "nightly", "jobs")
        assert c["metadata"]["labels"][MANAGED_BY] == "flotilla"
        assert c["metadata"]["annotations"][FEDERATED_OBJECT] == "jobs/nightly"
        assert c["spec"]["replicas"] == 1  # defaulted on the federation, copied whole
    assert FINALIZER in federated(fed, "nightly", "jobs")["metadata"]["finalizers"]

    # An update on the federation reaches both.
    fed.apply(crontab("nightly", cron="0 3 * * *"), "jobs")
    for m in (a, b):
        wait_for(lambda m=m: cron_of(m, "nightly", "jobs") == "0 3 * * *",
                 f"{m.name}: the update")

    # Edited in a member: restored. Deleted in a member: made again.
    a.kubectl("patch", "crontabs.stable.example.com", "nightly", "-n", "jobs", "--type=merge",
              "-p", '{"spec":{"cronSpec":"edited"}}')
    wait_for(lambda: cron_of(a, "nightly", "jobs") == "0 3 * * *", "a: the edit undone")
    b.kubectl("delete", "crontabs.stable.example.com", "nightly", "-n", "jobs")
    wait_for(lambda: cron_of(b, "nightly", "jobs") == "0 3 * * *", "b: the copy made again")

    # Each member's status comes back in the annotation.
    for m, phase in ((a, "Running"), (b, "Waiting")):
        c = copy_of(m, "nightly", "jobs")
        c["status"] = {"replicas": 1, "phase": phase}
        r = m.api().put(path("crontabs", "nightly", "jobs") + "/status", json=c, timeout=10)
        assert r.status_code == 200, r.text

    def gathered():
        obj = federated(fed, "nightly", "jobs")
        text = obj["metadata"].get("annotations", {}).get(STATUS_BY_CLUSTER)
        return json.loads(text) if text else None
    wait_for(lambda: gathered() == {"a": {"replicas": 1, "phase": "Running"},
                                    "b": {"replicas": 1, "phase": "Waiting"}},
             "the status of both copies on the federated object")
    assert STATUS_BY_CLUSTER not in copy_of(a, "nightly", "jobs")["metadata"]["annotations"]
    # The status of the federated object is its own (not the members').
    assert "status" not in federated(fed, "nightly", "jobs")

    fed.kubectl("delete", "crontabs.stable.example.com", "nightly", "-n", "jobs")
    for m in (a, b):
        wait_for(lambda m=m: copy_of(m, "nightly", "jobs") is None, f"{m.name}: copy deleted")


def test_the_cluster_selector_places_and_moves_objects(fed):
    fed.kubectl("create", "namespace", "placed")
    fed.apply(crontab("eu-only", selector=[{"key": "region", "operator": "In",
                                            "values": ["eu"]}]), "placed")
    a, b = fed["a"], fed["b"]
    wait_for(lambda: cron_of(a, "eu-only", "placed") is not None, "a: the copy")
    fed.apply(crontab("eu-only", selector=[{"key": "region", "operator": "In",
                                            "values": ["us"]}]), "placed")
    wait_for(lambda: cron_of(b, "eu-only", "placed") is not None, "b: the copy")
    wait_for(lambda: copy_of(a, "eu-only", "placed") is None, "a: the copy removed")


def test_a_restarted_member_keeps_serving_the_kind_and_its_copies(fed):
    b = fed["b"]
    wait_for(lambda: cron_of(b, "eu-only", "placed") is not None, "b: the copy")
    b.restart()
    fed.wait_ready("b")
    assert established(b.get_json(
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.{GROUP}"))
    assert cron_of(b, "eu-only", "placed") == "* * * * */5"
    # And the federation writes there again.
    fed.apply(crontab("eu-only", cron="0 4 * * *", selector=[
        {"key": "region", "operator": "In", "values": ["us"]}]), "placed")
    wait_for(lambda: cron_of(b, "eu-only", "placed") == "0 4 * * *", "b: the update")


def test_a_bad_placement_annotation_is_refused(fed):
    fed.kubectl("create", "namespace", "bad")
    obj = crontab("bad")
    obj["metadata"]["annotations"] = {CLUSTER_SELECTOR: "not json"}
    result = fed.create(obj, "bad", check=False)
    assert result.returncode != 0
    assert "is invalid" in result.stderr and CLUSTER_SELECTOR in result.stderr, result.stderr
    assert federated(fed, "bad", "bad") is None


def test_a_cluster_scoped_kind_and_deleting_its_crd(fed):
    fed.apply(crd("backends", "Backend", scope="Cluster"), "default")
    fed.kubectl("wait", "--for", "condition=established", "--timeout=60s",
                f"crd/backends.{GROUP}")
    a, b = fed["a"], fed["b"]
    fed.kubectl("apply", "-f", "-", input=json.dumps(crontab("shared", kind="Backend")))
    for m in (a, b):
        wait_for(lambda m=m: copy_of(m, "shared", None, "backends") is not None,
                 f"{m.name}: backend shared")
    fed.kubectl("delete", "crd", f"backends.{GROUP}")
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/backends.{GROUP}"
    wait_for(lambda: fed.api().get(crd_path, timeout=10).status_code == 404,
             "the CRD gone from the federation")
    for m in (a, b):
        wait_for(lambda m=m: m.get_json(crd_path) is None, f"{m.name}: the CRD gone")
