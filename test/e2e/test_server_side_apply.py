"""Server-side apply with the real kubectl, the official Python client and
raw HTTPS against a real `flotilla server`: create and update by apply,
managedFields and who owns what, conflicts between two field managers and
--force-conflicts, fields removed when their applier stops applying them,
containers merged by name, `kubectl diff --server-side`, dry runs, the
upgrade from client-side apply, the status and scale subresources, and bad
input (nothing stored)."""

import json

import pytest
import yaml
from kubernetes import dynamic
from kubernetes.client.rest import ApiException

APPLY = "application/apply-patch+yaml"


def deployment(name, containers, replicas=2, labels=None):
    meta = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": replicas,
                     "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": containers}}}}


def kubectl_apply(server, ns, doc, *extra, check=True):
    return server.kubectl("apply", "--server-side", "-n", ns, *extra, "-f", "-",
                          input=yaml.safe_dump(doc), check=check)


def get(server, ns, kind, name):
    return json.loads(server.kubectl("get", kind, name, "-n", ns, "-o", "json",
                                     "--show-managed-fields").stdout)


def entries(obj):
    """{(manager, operation, subresource): fieldsV1} of an object."""
    return {(e["manager"], e["operation"], e.get("subresource", "")): e.get("fieldsV1", {})
            for e in obj["metadata"].get("managedFields", [])}


def container_key(name):
    return 'k:{"name":"%s"}' % name


@pytest.fixture
def dyn(server):
    return dynamic.DynamicClient(server.api_client())


def ssa(dyn, body, namespace, manager, force=None):
    """An apply through the official client's dynamic client. This client
    version sends only strings for the apply media type, so the body goes as
    YAML text, as users of it write."""
    resource = dyn.resources.get(api_version=body["apiVersion"], kind=body["kind"])
    return resource.server_side_apply(body=yaml.safe_dump(body), name=body["metadata"]["name"],
                                      namespace=namespace, field_manager=manager,
                                      force_conflicts=force)


def test_kubectl_creates_and_updates_by_apply_and_owns_what_it_applied(server, namespace):
    result = kubectl_apply(server, namespace, deployment("web", [{"name": "nginx",
                                                                   "image": "nginx:1"}]))
    assert "serverside-applied" in result.stdout
    obj = get(server, namespace, "deployment", "web")
    owned = entries(obj)
    assert ("kubectl", "Apply", "") in owned, obj["metadata"]["managedFields"]
    fields = owned[("kubectl", "Apply", "")]
    assert "f:replicas" in fields["f:spec"]
    assert "f:selector" in fields["f:spec"]
    nginx = fields["f:spec"]["f:template"]["f:spec"]["f:containers"][container_key("nginx")]
    assert "f:image" in nginx and "." in nginx
    assert "f:status" not in fields
    # Defaults the server added are nobody's.
    assert "f:revisionHistoryLimit" not in fields["f:spec"]
    assert obj["spec"]["revisionHistoryLimit"] == 10

    kubectl_apply(server, namespace, deployment("web", [{"name": "nginx", "image": "nginx:2"}],
                                                replicas=3))
    obj = get(server, namespace, "deployment", "web")
    assert obj["spec"]["replicas"] == 3
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"
    assert obj["metadata"]["generation"] == 2
    # Without --show-managed-fields kubectl hides them, as it does for kube-apiserver.
    plain = server.kubectl("get", "deployment", "web", "-n", namespace, "-o", "yaml").stdout
    assert "managedFields" not in plain


def test_a_second_manager_conflicts_and_force_conflicts_takes_the_field(server, namespace, dyn):
    kubectl_apply(server, namespace, deployment("app", [{"name": "app", "image": "app:1"}]))
    # An autoscaler-like controller applies replicas with the Python client.
    scaler = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app"},
              "spec": {"replicas": 5}}
    with pytest.raises(ApiException) as err:
        ssa(dyn, scaler, namespace, "scaler")
    assert err.value.status == 409
    status = json.loads(err.value.body)
    assert status["reason"] == "Conflict"
    assert status["message"] == ('Apply failed with 1 conflict: conflict with "kubectl": '
                                 '.spec.replicas')
    assert status["details"]["causes"] == [{"reason": "FieldManagerConflict",
                                            "message": 'conflict with "kubectl"',
                                            "field": ".spec.replicas"}]
    assert get(server, namespace, "deployment", "app")["spec"]["replicas"] == 2

    ssa(dyn, scaler, namespace, "scaler", force=True)
    obj = get(server, namespace, "deployment", "app")
    assert obj["spec"]["replicas"] == 5
    owned = entries(obj)
    assert "f:replicas" in owned[("scaler", "Apply", "")]["f:spec"]
    assert "f:replicas" not in owned[("kubectl", "Apply", "")]["f:spec"]

    # kubectl now conflicts in turn, and says so as kubectl does.
    result = kubectl_apply(server, namespace,
                           deployment("app", [{"name": "app", "image": "app:1"}], replicas=2),
                           check=False)
    assert result.returncode != 0
    assert 'conflict with "scaler": .spec.replicas' in result.stderr
    result = kubectl_apply(server, namespace,
                           deployment("app", [{"name": "app", "image": "app:1"}], replicas=2),
                           "--force-conflicts")
    assert get(server, namespace, "deployment", "app")["spec"]["replicas"] == 2

    # Applying the value another manager set shares the field.
    shared = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "app"},
              "spec": {"replicas": 2}}
    ssa(dyn, shared, namespace, "scaler")
    owned = entries(get(server, namespace, "deployment", "app"))
    assert "f:replicas" in owned[("scaler", "Apply", "")]["f:spec"]
    assert "f:replicas" in owned[("kubectl", "Apply", "")]["f:spec"]


def test_a_field_left_out_is_removed_unless_someone_else_owns_it(server, namespace, dyn):
    labels = {"team": "a", "tier": "web"}
    kubectl_apply(server, namespace, deployment("rm", [{"name": "c", "image": "c:1"}],
                                                labels=labels))
    kubectl_apply(server, namespace, deployment("rm", [{"name": "c", "image": "c:1"}],
                                                labels={"team": "a"}))
    obj = get(server, namespace, "deployment", "rm")
    assert obj["metadata"]["labels"] == {"team": "a"}

    # A label another manager also applied stays when kubectl drops it.
    other = {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": "rm", "labels": {"team": "a"}}}
    ssa(dyn, other, namespace, "labeler")
    kubectl_apply(server, namespace, deployment("rm", [{"name": "c", "image": "c:1"}]))
    obj = get(server, namespace, "deployment", "rm")
    assert obj["metadata"]["labels"] == {"team": "a"}
    owned = entries(obj)
    assert "f:labels" not in owned[("kubectl", "Apply", "")].get("f:metadata", {})


def test_containers_merge_by_name_between_managers(server, namespace, dyn):
    kubectl_apply(server, namespace, deployment("mix", [{"name": "app", "image": "app:1"}]))
    sidecar = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mix"},
               "spec": {"template": {"spec": {"containers": [
                   {"name": "proxy", "image": "envoy:1", "ports": [{"containerPort": 9901}]}]}}}}
    ssa(dyn, sidecar, namespace, "injector")
    kubectl_apply(server, namespace, deployment("mix", [{"name": "app", "image": "app:2"}]))
    obj = get(server, namespace, "deployment", "mix")
    containers = {c["name"]: c for c in obj["spec"]["template"]["spec"]["containers"]}
    assert containers["app"]["image"] == "app:2"
    assert containers["proxy"]["image"] == "envoy:1"
    # The server's default (protocol TCP) keys the port as the injector applied it.
    assert containers["proxy"]["ports"] == [{"containerPort": 9901, "protocol": "TCP"}]
    owned = entries(obj)
    injector = owned[("injector", "Apply", "")]["f:spec"]["f:template"]["f:spec"]["f:containers"]
    assert list(injector) == [container_key("proxy")]
    assert 'k:{"containerPort":9901,"protocol":"TCP"}' in injector[container_key("proxy")]["f:ports"]


def test_kubectl_diff_server_side_exit_codes(server, namespace):
    doc = deployment("diff", [{"name": "c", "image": "c:1"}])
    kubectl_apply(server, namespace, doc)
    same = server.kubectl("diff", "--server-side", "-n", namespace, "-f", "-",
                          input=yaml.safe_dump(doc), check=False)
    assert same.returncode == 0, same.stderr + same.stdout
    changed = deployment("diff", [{"name": "c", "image": "c:2"}])
    differs = server.kubectl("diff", "--server-side", "-n", namespace, "-f", "-",
                             input=yaml.safe_dump(changed), check=False)
    assert differs.returncode == 1, differs.stderr
    assert "c:2" in differs.stdout
    # Nothing was written by either.
    obj = get(server, namespace, "deployment", "diff")
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "c:1"
    # A dry run of the apply answers the result and stores nothing.
    out = kubectl_apply(server, namespace, changed, "--dry-run=server", "-o", "json")
    assert json.loads(out.stdout)["spec"]["template"]["spec"]["containers"][0]["image"] == "c:2"
    obj = get(server, namespace, "deployment", "diff")
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "c:1"


def test_server_side_apply_takes_over_from_client_side_apply(server, namespace):
    doc = deployment("csa", [{"name": "c", "image": "c:1"}])
    server.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump(doc))
    obj = get(server, namespace, "deployment", "csa")
    assert ("kubectl-client-side-apply", "Update", "") in entries(obj)
    doc["spec"]["replicas"] = 4
    kubectl_apply(server, namespace, doc)
    obj = get(server, namespace, "deployment", "csa")
    assert obj["spec"]["replicas"] == 4
    owned = entries(obj)
    assert "f:replicas" in owned[("kubectl", "Apply", "")]["f:spec"]
    # kubectl then moves client-side apply's entry into its own (a JSON
    # patch of managedFields) and keeps the annotation as its own manager.
    assert ("kubectl-client-side-apply", "Update", "") not in owned, owned.keys()
    assert ("kubectl-last-applied", "Apply", "") in owned, owned.keys()
    # The last-applied annotation follows what was applied, so a later
    # client-side apply still computes its patch right.
    last = json.loads(
        obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 4
    doc["spec"]["replicas"] = 1
    server.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump(doc))
    assert get(server, namespace, "deployment", "csa")["spec"]["replicas"] == 1


def test_status_and_scale_are_applied_through_their_subresources(server, namespace):
    kubectl_apply(server, namespace, deployment("sub", [{"name": "c", "image": "c:1"}]))
    raw = server.raw()
    base = f"/apis/apps/v1/namespaces/{namespace}/deployments/sub"
    status = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sub"},
              "status": {"observedGeneration": 1, "replicas": 2, "readyReplicas": 1}}
    r = raw.patch(base + "/status?fieldManager=status-writer", data=json.dumps(status),
                  headers={"Content-Type": APPLY})
    assert r.status_code == 200, r.text
    obj = r.json()
    assert obj["status"]["readyReplicas"] == 1
    owned = entries(obj)
    assert "f:readyReplicas" in owned[("status-writer", "Apply", "status")]["f:status"]
    # Status applied through the object itself is not taken.
    r = raw.patch(base + "?fieldManager=sneaky", headers={"Content-Type": APPLY},
                  data=json.dumps({**status, "status": {"readyReplicas": 9}}))
    assert r.status_code == 200, r.text
    assert r.json()["status"]["readyReplicas"] == 1

    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "sub"},
             "spec": {"replicas": 6}}
    r = raw.patch(base + "/scale?fieldManager=autoscaler&force=true",
                  headers={"Content-Type": APPLY}, data=yaml.safe_dump(scale))
    assert r.status_code == 200, r.text
    assert r.json()["kind"] == "Scale" and r.json()["spec"]["replicas"] == 6
    obj = get(server, namespace, "deployment", "sub")
    assert obj["spec"]["replicas"] == 6
    assert "f:replicas" in entries(obj)[("autoscaler", "Apply", "scale")]["f:spec"]


def test_writes_by_other_verbs_are_recorded_as_updates(server, namespace):
    server.kubectl("create", "configmap", "cm", "-n", namespace, "--from-literal=a=1")
    server.kubectl("label", "configmap", "cm", "-n", namespace, "x=1")
    raw = server.raw()
    r = raw.patch(f"/api/v1/namespaces/{namespace}/configmaps/cm?fieldManager=editor",
                  headers={"Content-Type": "application/merge-patch+json"},
                  data=json.dumps({"data": {"b": "2"}}))
    assert r.status_code == 200, r.text
    owned = entries(get(server, namespace, "configmap", "cm"))
    assert "f:a" in owned[("kubectl-create", "Update", "")]["f:data"]
    assert "f:x" in owned[("kubectl-label", "Update", "")]["f:metadata"]["f:labels"]
    assert "f:b" in owned[("editor", "Update", "")]["f:data"]
    # Without a fieldManager the User-Agent's product names the writer.
    r = raw.patch(f"/api/v1/namespaces/{namespace}/configmaps/cm",
                  headers={"Content-Type": "application/merge-patch+json",
                           "User-Agent": "my-operator/1.2 (linux)"},
                  data=json.dumps({"data": {"c": "3"}}))
    assert r.status_code == 200, r.text
    assert ("my-operator", "Update", "") in entries(r.json())
    # An apply over an updater's field conflicts with it, naming its version.
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
          "data": {"b": "other"}}
    r = raw.patch(f"/api/v1/namespaces/{namespace}/configmaps/cm?fieldManager=gitops",
                  headers={"Content-Type": APPLY}, data=yaml.safe_dump(cm))
    assert r.status_code == 409, r.text
    assert r.json()["message"] == ('Apply failed with 1 conflict: conflict with "editor" using '
                                   'v1: .data.b')


BAD = [
    # (query, body, code, message fragment)
    ("", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: bad}\n", 422,
     'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for '
     'apply patch'),
    ("?fieldManager=m", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: bad\n", 400,
     "error decoding patch: yaml: "),
    ("?fieldManager=m", "- 1\n- 2\n", 400,
     "error decoding patch: the applied configuration must be an object, got array"),
    ("?fieldManager=m", "kind: ConfigMap\napiVersion: v2\nmetadata: {name: bad}\n", 400,
     "Incorrect version specified in apply patch. Specified patch version: v2, expected: v1"),
    ("?fieldManager=m", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: other}\n", 400,
     "the name of the object (other) does not match the name on the URL (bad)"),
    ("?fieldManager=m", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: bad}\ndata: [1]\n",
     400, "cannot unmarshal array into Go struct field ConfigMap.data"),
    ("?fieldManager=m&fieldValidation=Strict",
     "kind: ConfigMap\napiVersion: v1\nmetadata: {name: bad}\ndatta: {a: b}\n", 400,
     'unknown field "datta"'),
    ("?fieldManager=m", "kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: bad\n"
     "  managedFields: [{manager: x}]\n", 400, "metadata.managedFields must be nil"),
    ("?fieldManager=a%07b", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: bad}\n", 422,
     "fieldManager: Invalid value: \"a\\ab\": invalid character U+0007 (at position 1)"),
]


@pytest.mark.parametrize("query,body,code,message", BAD)
def test_bad_applies_are_refused_and_store_nothing(server, namespace, query, body, code,
                                                   message):
    raw = server.raw()
    path = f"/api/v1/namespaces/{namespace}/configmaps/bad"
    r = raw.patch(path + query, data=body, headers={"Content-Type": APPLY})
    assert r.status_code == code, r.text
    assert message in r.json()["message"], r.json()["message"]
    assert raw.get(path).status_code == 404


def test_bad_applies_to_an_existing_object_change_nothing(server, namespace):
    kubectl_apply(server, namespace, deployment("keep", [{"name": "c", "image": "c:1"}]))
    raw = server.raw()
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/keep"
    before = raw.get(path).json()
    cases = [
        ("spec:\n  template:\n    spec:\n      containers:\n      - image: x\n", 400,
         '.spec.template.spec.containers: element 0: associative list with keys has an element '
         'that omits key field "name" (and doesn\'t have default value)'),
        ("spec:\n  template:\n    spec:\n      containers:\n      - {name: a}\n      - {name: a}\n",
         400, '.spec.template.spec.containers: duplicate entries for key [name="a"]'),
        ("spec:\n  replicas: three\n", 400,
         "cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type "
         "int32"),
        ("spec:\n  replicas: -1\n", 422, "spec.replicas"),
    ]
    for text, code, message in cases:
        body = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: keep}\n" + text
        r = raw.patch(path + "?fieldManager=m&force=true", data=body,
                      headers={"Content-Type": APPLY})
        assert r.status_code == code, (text, r.text)
        assert message in r.json()["message"], r.json()["message"]
    after = raw.get(path).json()
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    # force belongs to apply alone.
    r = raw.patch(path + "?force=true", data="{}",
                  headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 422, r.text
    assert "force: Forbidden: may not be specified for non-apply patch" in r.json()["message"]
