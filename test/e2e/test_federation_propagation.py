"""Propagation of plain objects end to end (docs/federation.md,
"Propagation"): a `flotilla server` and `flotilla member` processes joined
with `flotilla join --labels`, driven with the real kubectl. Namespaces,
ConfigMaps, Secrets and Services go to the members the cluster selector
admits, copies edited or deleted by hand come back, a cluster that returns
or joins later receives what it should have, the three deletion modes, objects the
federation does not manage are left alone, and bad annotations are refused
at admission."""

import json

import pytest

from conftest import wait_for
from federation import CLUSTER_SELECTOR, FED_ARGS, FEDERATED_OBJECT, MANAGED_BY, Federation

CM_PATH = "/api/v1/namespaces/{ns}/configmaps/{name}"


@pytest.fixture(scope="module")
def fed(tmp_path_factory):
    f = Federation(tmp_path_factory.mktemp("propagation"), server_args=FED_ARGS).start()
    try:
        f.add_member("a", labels={"region": "eu", "tier": "3"})
        f.add_member("b", labels={"region": "us", "tier": "1"})
        yield f
    finally:
        f.close()


def namespace(fed, ns):
    fed.kubectl("create", "namespace", ns)


def configmap(name, value, selector=None):
    meta = {"name": name}
    if selector is not None:
        meta["annotations"] = {CLUSTER_SELECTOR: json.dumps(selector)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"key": value}}


def copy(member, ns, name):
    return member.get_json(CM_PATH.format(ns=ns, name=name))


def value(member, ns, name):
    cm = copy(member, ns, name)
    return None if cm is None else cm.get("data", {}).get("key")


def wait_value(member, ns, name, want, timeout=30):
    wait_for(lambda: value(member, ns, name) == want,
             f"{member.name}: configmap {ns}/{name} with key={want}", timeout)


def wait_gone(member, ns, name):
    wait_for(lambda: copy(member, ns, name) is None, f"{member.name}: configmap {ns}/{name} gone")


def events(fed, ns, name):
    out = fed.kubectl("get", "events", "-n", ns, "--field-selector",
                      f"involvedObject.name={name}", "-o", "json")
    return json.loads(out.stdout)["items"]


def wait_event(fed, ns, name, reason):
    return wait_for(lambda: [e for e in events(fed, ns, name) if e["reason"] == reason],
                    f"event {reason} on {ns}/{name}")


def test_each_kind_propagates_updates_and_is_restored(fed):
    namespace(fed, "prop")
    fed.apply(configmap("cfg", "v1"), "prop")
    fed.kubectl("create", "secret", "generic", "pw", "-n", "prop", "--from-literal=p=s3cret")
    fed.kubectl("create", "service", "clusterip", "web", "-n", "prop", "--tcp=80:8080")
    a, b = fed["a"], fed["b"]
    for m in (a, b):
        wait_value(m, "prop", "cfg", "v1")
        ns = wait_for(lambda m=m: m.get_json("/api/v1/namespaces/prop"), f"{m.name}: ns prop")
        assert ns["metadata"]["labels"][MANAGED_BY] == "flotilla"
        assert ns["metadata"]["annotations"][FEDERATED_OBJECT] == "prop"
        secret = wait_for(lambda m=m: m.get_json("/api/v1/namespaces/prop/secrets/pw"),
                          f"{m.name}: secret pw")
        assert secret["data"]["p"] == "czNjcmV0"
        svc = wait_for(lambda m=m: m.get_json("/api/v1/namespaces/prop/services/web"),
                       f"{m.name}: service web")
        assert svc["spec"]["ports"][0]["targetPort"] == 8080
        assert svc["spec"]["clusterIP"]  # allocated by the member
        cm = copy(m, "prop", "cfg")
        assert cm["metadata"]["labels"][MANAGED_BY] == "flotilla"
        assert cm["metadata"]["annotations"][FEDERATED_OBJECT] == "prop/cfg"
    fed_cm = json.loads(fed.kubectl("get", "cm", "cfg", "-n", "prop", "-o", "json").stdout)
    assert "federation.kubernetes.io/delete-from-underlying-clusters" in \
        fed_cm["metadata"]["finalizers"]
    wait_event(fed, "prop", "cfg", "CreateInCluster")

    fed.kubectl("patch", "cm", "cfg", "-n", "prop", "--type=merge", "-p",
                '{"data":{"key":"v2"}}')
    wait_value(a, "prop", "cfg", "v2")
    wait_value(b, "prop", "cfg", "v2")
    fed.kubectl("patch", "svc", "web", "-n", "prop", "--type=merge", "-p",
                '{"spec":{"selector":{"tier":"front"}}}')
    for m in (a, b):
        wait_for(lambda m=m: m.get_json("/api/v1/namespaces/prop/services/web")["spec"]
                 .get("selector") == {"app": "web", "tier": "front"},
                 f"{m.name}: service selector updated")

    a.kubectl("patch", "cm", "cfg", "-n", "prop", "--type=merge", "-p",
              '{"data":{"key":"by hand"}}')
    wait_value(a, "prop", "cfg", "v2")
    b.kubectl("delete", "cm", "cfg", "-n", "prop")
    wait_value(b, "prop", "cfg", "v2")
    metrics = fed.api().get("/metrics").text
    assert ('flotilla_federation_member_requests_total{cluster="a",resource="configmaps",'
            'operation="create",result="ok"}') in metrics


def test_cluster_selector_places_and_moves_copies(fed):
    namespace(fed, "sel")
    a, b = fed["a"], fed["b"]
    cases = {
        "in-eu": ([{"key": "region", "operator": "In", "values": ["eu"]}], {"a"}),
        "notin-eu": ([{"key": "region", "operator": "NotIn", "values": ["eu"]}], {"b"}),
        "has-tier": ([{"key": "tier", "operator": "Exists"}], {"a", "b"}),
        "big": ([{"key": "tier", "operator": "Gt", "values": ["2"]}], {"a"}),
        "nowhere": ([{"key": "gpu", "operator": "Exists"}], set()),
    }
    for name, (selector, _) in cases.items():
        fed.apply(configmap(name, "x", selector), "sel")
    # A marker admitted everywhere: once it is in both, so is everything else.
    fed.apply(configmap("marker", "x"), "sel")
    for m in (a, b):
        wait_value(m, "sel", "marker", "x")
    for name, (_, where) in cases.items():
        for m in (a, b):
            if m.name in where:
                wait_value(m, "sel", name, "x")
            else:
                assert copy(m, "sel", name) is None, f"{name} should not be in {m.name}"

    fed.apply(configmap("in-eu", "x", [{"key": "region", "operator": "In", "values": ["us"]}]),
              "sel")
    wait_value(b, "sel", "in-eu", "x")
    wait_gone(a, "sel", "in-eu")


def test_unmanaged_object_is_left_alone(fed):
    a, b = fed["a"], fed["b"]
    a.create_namespace("mine")
    a.kubectl("apply", "-n", "mine", "-f", "-", input=json.dumps(configmap("cfg", "theirs")))
    namespace(fed, "mine")
    fed.apply(configmap("cfg", "ours"), "mine")
    wait_value(b, "mine", "cfg", "ours")
    wait_event(fed, "mine", "cfg", "NotManagedInCluster")
    assert value(a, "mine", "cfg") == "theirs"
    assert MANAGED_BY not in a.get_json("/api/v1/namespaces/mine")["metadata"].get("labels", {})
    fed.kubectl("delete", "cm", "cfg", "-n", "mine")
    wait_gone(b, "mine", "cfg")
    assert value(a, "mine", "cfg") == "theirs"


def test_deletion_modes(fed):
    namespace(fed, "del")
    a, b = fed["a"], fed["b"]
    names = ["background", "orphan", "raw", "foreground"]
    for name in names:
        fed.apply(configmap(name, "x"), "del")
    for name in names:
        for m in (a, b):
            wait_value(m, "del", name, "x")
        wait_for(lambda name=name: json.loads(fed.kubectl(
            "get", "cm", name, "-n", "del", "-o", "json").stdout)["metadata"].get("finalizers"),
            f"finalizer on {name}")

    fed.kubectl("delete", "cm", "background", "-n", "del")  # kubectl sends Background
    fed.kubectl("delete", "cm", "orphan", "-n", "del", "--cascade=orphan")
    response = fed.api().delete(CM_PATH.format(ns="del", name="raw"))  # no body, no policy
    assert response.status_code in (200, 202), response.text
    fed.kubectl("delete", "cm", "foreground", "-n", "del", "--cascade=foreground")
    for name in names:
        wait_for(lambda name=name: fed.kubectl("get", "cm", name, "-n", "del",
                                               check=False).returncode != 0,
                 f"federated configmap {name} gone")
    for m in (a, b):
        wait_gone(m, "del", "background")
        wait_gone(m, "del", "foreground")
        assert value(m, "del", "orphan") == "x"
        assert value(m, "del", "raw") == "x"


def test_finalizer_comes_with_the_create(fed):
    """With a cluster joined, the admission puts the federation's finalizer on
    a new object in its create: the controller copies it without writing the
    federated object first."""
    namespace(fed, "held")
    created = json.loads(fed.kubectl("create", "configmap", "early", "-n", "held",
                                     "--from-literal=key=x", "-o", "json").stdout)
    assert created["metadata"]["finalizers"] == [
        "federation.kubernetes.io/delete-from-underlying-clusters"]
    for m in (fed["a"], fed["b"]):
        wait_value(m, "held", "early", "x")
    stored = json.loads(fed.kubectl("get", "cm", "early", "-n", "held", "-o", "json").stdout)
    assert stored["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    fed.kubectl("delete", "cm", "early", "-n", "held")
    for m in (fed["a"], fed["b"]):
        wait_gone(m, "held", "early")


def test_admission_refuses_bad_annotations(fed):
    bad = configmap("bad", "x", [{"key": "region", "operator": "Near", "values": ["eu"]}])
    out = fed.kubectl("apply", "-n", "default", "-f", "-", input=json.dumps(bad), check=False)
    assert out.returncode != 0
    assert f"metadata.annotations[{CLUSTER_SELECTOR}][0].operator" in out.stderr, out.stderr
    assert fed.kubectl("get", "cm", "bad", "-n", "default", check=False).returncode != 0

    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "bad", "annotations": {
              "federation.kubernetes.io/replica-set-preferences":
                  '{"clusters": {"a": {"minReplicas": 3, "maxReplicas": 1}}}'}},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "bad"}},
                   "template": {"metadata": {"labels": {"app": "bad"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    out = fed.kubectl("apply", "-n", "default", "-f", "-", input=json.dumps(rs), check=False)
    assert out.returncode != 0
    assert ("metadata.annotations[federation.kubernetes.io/replica-set-preferences]"
            ".clusters[a].maxReplicas") in out.stderr, out.stderr
    assert fed.kubectl("get", "rs", "bad", "-n", "default", check=False).returncode != 0

    # Members are plain clusters: the annotation means nothing to them.
    fed["a"].kubectl("apply", "-n", "default", "-f", "-", input=json.dumps(bad))


def test_returning_cluster_catches_up(fed):
    namespace(fed, "away")
    fed.apply(configmap("cfg", "v1"), "away")
    a, b = fed["a"], fed["b"]
    wait_value(b, "away", "cfg", "v1")
    b.sigstop()
    try:
        fed.wait_not_ready("b")
        fed.apply(configmap("cfg", "v2"), "away")
        fed.apply(configmap("new", "x"), "away")
        wait_value(a, "away", "new", "x")
    finally:
        b.sigcont()
    fed.wait_ready("b")
    wait_value(b, "away", "cfg", "v2")
    wait_value(b, "away", "new", "x")


def test_cluster_joined_later_receives_objects(fed):
    namespace(fed, "late")
    fed.apply(configmap("cfg", "x"), "late")
    fed.apply(configmap("eu", "x", [{"key": "region", "operator": "In", "values": ["eu"]}]),
              "late")
    wait_value(fed["a"], "late", "cfg", "x")
    c = fed.add_member("c", labels={"region": "eu", "tier": "0"})
    try:
        wait_value(c, "late", "cfg", "x")
    except pytest.fail.Exception:
        # Seen once under load; the server's log says what the sync did.
        pytest.fail(f"c never received late/cfg; the server's log ends with:\n"
                    f"{fed.server.log_tail(120)}")
    wait_value(c, "late", "eu", "x")
    ns = c.get_json("/api/v1/namespaces/late")
    assert ns["metadata"]["labels"][MANAGED_BY] == "flotilla"
