"""CustomResourceDefinitions with the real kubectl, the official Python
client and raw HTTPS against a real `flotilla server`, and on a simulated
member: a CRD applied and Established, `kubectl explain` of the custom kind,
objects defaulted, pruned and validated by its schema (422s naming each
field, unknown fields refused under strict validation), printer columns,
short names and categories, the status and scale subresources (`kubectl
scale`), two served versions over one storage version, invalid CRDs and
name conflicts refused as kube-apiserver refuses them, server-side apply of
a map list, watch, a restart, and a deleted CRD taking its objects with it
(docs/crds.md)."""

import json

import pytest
import yaml
from kubernetes import dynamic

from conftest import table, wait_for
from members import MemberProcess

GROUP = "stable.example.com"


def crontab_crd(plural="crontabs", kind="CronTab", short_names=("ct",), extra_version=False):
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["cronSpec"],
                "properties": {
                    "cronSpec": {"type": "string", "description": "The schedule, in cron format.",
                                 "pattern": r"^(\S+\s+){4}\S+$"},
                    "image": {"type": "string", "maxLength": 40},
                    "replicas": {"type": "integer", "minimum": 0, "default": 1},
                    "policy": {"type": "string", "enum": ["Allow", "Forbid"], "default": "Allow"},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                              "x-kubernetes-list-map-keys": ["name"],
                              "items": {"type": "object", "required": ["name"],
                                        "properties": {"name": {"type": "string"},
                                                       "port": {"type": "integer"}}}},
                },
            },
            "status": {"type": "object",
                       "properties": {"replicas": {"type": "integer"},
                                      "selector": {"type": "string"}}},
        },
    }
    versions = [{
        "name": "v1", "served": True, "storage": True,
        "schema": {"openAPIV3Schema": schema},
        "subresources": {"status": {}, "scale": {
            "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector"}},
        "additionalPrinterColumns": [
            {"name": "Schedule", "type": "string", "jsonPath": ".spec.cronSpec"},
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Image", "type": "string", "jsonPath": ".spec.image", "priority": 1},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
    }]
    if extra_version:
        versions.append({"name": "v1beta1", "served": True, "storage": False,
                         "schema": {"openAPIV3Schema": schema}})
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                           "shortNames": list(short_names), "categories": ["all"]},
                 "versions": versions},
    }


def crontab(name, version="v1", **spec):
    body = {"cronSpec": "*/5 * * * *", "image": "cron:1"}
    body.update(spec)
    return {"apiVersion": f"{GROUP}/{version}", "kind": "CronTab",
            "metadata": {"name": name}, "spec": body}


def apply(target, doc, *args, check=True, ns=None):
    extra = ["-n", ns] if ns else []
    return target.kubectl("apply", *extra, *args, "-f", "-", input=yaml.safe_dump(doc),
                          check=check)


def established(target, name):
    target.kubectl("wait", "--for", "condition=established", "--timeout=30s", f"crd/{name}")


@pytest.fixture(scope="module")
def crontabs(server):
    apply(server, crontab_crd(extra_version=True))
    established(server, f"crontabs.{GROUP}")
    return server


def get(server, ns, name, version=None):
    resource = f"crontabs.{version}.{GROUP}" if version else "ct"
    return json.loads(server.kubectl("get", resource, name, "-n", ns, "-o", "json").stdout)


def test_a_crd_is_established_and_explained(crontabs):
    crd = json.loads(crontabs.kubectl("get", "crd", f"crontabs.{GROUP}", "-o", "json").stdout)
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert crd["status"]["acceptedNames"]["shortNames"] == ["ct"]
    assert crd["status"]["storedVersions"] == ["v1"]
    assert "customresourcecleanup.apiextensions.k8s.io" in crd["metadata"]["finalizers"]
    explained = crontabs.kubectl("explain", "crontabs.spec.cronSpec").stdout
    assert "The schedule, in cron format." in explained
    resources = crontabs.kubectl("api-resources", "--api-group", GROUP).stdout
    assert "crontabs" in resources and "ct" in resources and "CronTab" in resources


def test_objects_are_defaulted_pruned_and_printed(crontabs, namespace):
    apply(crontabs, crontab("daily"), ns=namespace)
    obj = get(crontabs, namespace, "daily")
    assert obj["spec"]["replicas"] == 1 and obj["spec"]["policy"] == "Allow"
    assert obj["metadata"]["generation"] == 1
    headers, rows = table(crontabs.kubectl("get", "ct", "-n", namespace).stdout)
    assert headers == ["NAME", "SCHEDULE", "REPLICAS", "AGE"]
    assert rows[0]["SCHEDULE"] == "*/5 * * * *" and rows[0]["REPLICAS"] == "1"
    headers, _ = table(crontabs.kubectl("get", "ct", "-n", namespace, "-o", "wide").stdout)
    assert "IMAGE" in headers
    # The category: `kubectl get all` lists them.
    assert "crontab.stable.example.com/daily" in crontabs.kubectl(
        "get", "all", "-n", namespace).stdout
    # Without strict validation an unknown field is dropped, with a warning.
    doc = crontab("loose")
    doc["spec"]["imagee"] = "typo"
    out = apply(crontabs, doc, "--validate=warn", ns=namespace)
    assert 'unknown field "spec.imagee"' in out.stderr
    assert "imagee" not in get(crontabs, namespace, "loose")["spec"]


@pytest.mark.parametrize("spec,message", [
    ({"cronSpec": 5}, 'spec.cronSpec: Invalid value: "integer": spec.cronSpec in body must be of '
                      'type string: "integer"'),
    ({"cronSpec": "sometimes"}, "spec.cronSpec in body should match"),
    ({"cronSpec": "* * * * *", "replicas": -1},
     "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal "
     "to 0"),
    ({"cronSpec": "* * * * *", "policy": "Replace"},
     'spec.policy: Unsupported value: "Replace": supported values: "Allow", "Forbid"'),
    ({"cronSpec": "* * * * *", "ports": [{"name": "a"}, {"name": "a"}]},
     'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}'),
    ({"image": "x"}, "spec.cronSpec: Required value"),
])
def test_invalid_objects_get_422s_naming_the_field(crontabs, namespace, spec, message):
    doc = {"apiVersion": f"{GROUP}/v1", "kind": "CronTab", "metadata": {"name": "bad"},
           "spec": spec}
    out = apply(crontabs, doc, check=False, ns=namespace)
    assert out.returncode != 0
    assert 'The CronTab "bad" is invalid' in out.stderr, out.stderr
    if "Duplicate" in message:
        message = "spec.ports[1]: Duplicate value"
    assert message in out.stderr, out.stderr
    assert crontabs.kubectl("get", "ct", "bad", "-n", namespace, check=False).returncode != 0


def test_unknown_fields_are_refused_under_strict_validation(crontabs, namespace):
    doc = crontab("strict")
    doc["spec"]["imagee"] = "typo"
    out = apply(crontabs, doc, check=False, ns=namespace)
    assert out.returncode != 0
    assert 'strict decoding error: unknown field "spec.imagee"' in out.stderr, out.stderr


def test_scale_and_status_subresources(crontabs, namespace):
    apply(crontabs, crontab("scaled"), ns=namespace)
    crontabs.kubectl("scale", "ct", "scaled", "--replicas=3", "-n", namespace)
    obj = get(crontabs, namespace, "scaled")
    assert obj["spec"]["replicas"] == 3 and obj["metadata"]["generation"] == 2
    # Status only through its subresource.
    crontabs.kubectl("patch", "ct", "scaled", "-n", namespace, "--subresource=status",
                     "--type=merge", "-p", '{"status": {"replicas": 3, "selector": "app=cron"}}')
    crontabs.kubectl("patch", "ct", "scaled", "-n", namespace, "--type=merge",
                     "-p", '{"status": {"replicas": 9}}')
    obj = get(crontabs, namespace, "scaled")
    assert obj["status"] == {"replicas": 3, "selector": "app=cron"}
    assert obj["metadata"]["generation"] == 2  # status is no spec change
    scale = json.loads(crontabs.kubectl(
        "get", "--raw", f"/apis/{GROUP}/v1/namespaces/{namespace}/crontabs/scaled/scale").stdout)
    assert scale["spec"]["replicas"] == 3
    assert scale["status"] == {"replicas": 3, "selector": "app=cron"}
    # Status by server-side apply, as a controller of the kind writes it.
    status = {"apiVersion": f"{GROUP}/v1", "kind": "CronTab", "metadata": {"name": "scaled"},
              "status": {"replicas": 2}}
    response = crontabs.raw().patch(
        f"/apis/{GROUP}/v1/namespaces/{namespace}/crontabs/scaled/status",
        params={"fieldManager": "crontab-controller", "force": "true"},
        headers={"Content-Type": "application/apply-patch+yaml"}, data=json.dumps(status))
    assert response.status_code == 200, response.text
    managers = {(e["manager"], e.get("subresource", ""))
                for e in response.json()["metadata"]["managedFields"]}
    assert ("crontab-controller", "status") in managers
    assert get(crontabs, namespace, "scaled")["status"]["replicas"] == 2


def test_both_served_versions_read_the_same_objects(crontabs, namespace):
    apply(crontabs, crontab("versioned", version="v1beta1"), ns=namespace)
    v1 = get(crontabs, namespace, "versioned", version="v1")
    beta = get(crontabs, namespace, "versioned", version="v1beta1")
    assert v1["apiVersion"] == f"{GROUP}/v1" and beta["apiVersion"] == f"{GROUP}/v1beta1"
    assert v1["spec"] == beta["spec"]


def test_server_side_apply_merges_a_map_list_by_its_keys(crontabs, namespace):
    first = crontab("ports", ports=[{"name": "http", "port": 80}])
    apply(crontabs, first, "--server-side", "--field-manager=team-a", ns=namespace)
    second = {"apiVersion": f"{GROUP}/v1", "kind": "CronTab", "metadata": {"name": "ports"},
              "spec": {"ports": [{"name": "metrics", "port": 9090}]}}
    apply(crontabs, second, "--server-side", "--field-manager=team-b", ns=namespace)
    obj = get(crontabs, namespace, "ports")
    assert sorted(p["name"] for p in obj["spec"]["ports"]) == ["http", "metrics"]
    # team-b owns its entry alone: a conflicting change of team-a's is refused.
    clash = {"apiVersion": f"{GROUP}/v1", "kind": "CronTab", "metadata": {"name": "ports"},
             "spec": {"ports": [{"name": "http", "port": 8080}]}}
    out = apply(crontabs, clash, "--server-side", "--field-manager=team-b", check=False,
                ns=namespace)
    assert out.returncode != 0 and "conflict" in out.stderr.lower(), out.stderr
    # Dropping its entry from its apply removes it and leaves team-a's.
    apply(crontabs, {**second, "spec": {"ports": []}}, "--server-side",
          "--field-manager=team-b", ns=namespace)
    obj = get(crontabs, namespace, "ports")
    assert [p["name"] for p in obj["spec"]["ports"]] == ["http"]


def test_the_python_client_creates_and_watches_custom_objects(crontabs, namespace):
    dyn = dynamic.DynamicClient(crontabs.api_client())
    res = dyn.resources.get(api_version=f"{GROUP}/v1", kind="CronTab")
    created = res.create(body=crontab("from-python"), namespace=namespace)
    assert created.spec.replicas == 1
    events = []
    for event in res.watch(namespace=namespace, timeout=5):
        events.append((event["type"], event["object"].metadata.name))
        if ("ADDED", "from-python") in events:
            break
    assert ("ADDED", "from-python") in events
    listed = res.get(namespace=namespace)
    assert "from-python" in [i.metadata.name for i in listed.items]


@pytest.mark.parametrize("change,message", [
    (lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].pop(
        "type"),
     "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be "
     "empty for specified object fields"),
    (lambda c: c["spec"].update(group="example"),
     'spec.group: Invalid value: "example": should be a domain with at least one dot'),
    (lambda c: c["spec"]["names"].update(plural="tabs"),
     'metadata.name: Invalid value: "crontabs.stable.example.com": must be '
     'spec.names.plural+"."+spec.group'),
    (lambda c: c["spec"]["versions"][0].update(storage=False),
     "must have exactly one version marked as storage version"),
    (lambda c: c["spec"].update(conversion={"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"], "clientConfig": {"url": "https://x.example.com"}}}),
     'spec.conversion.strategy: Unsupported value: "Webhook"'),
])
def test_invalid_crds_are_refused_with_field_paths(server_factory, change, message):
    srv = server_factory()
    srv.start()
    crd = crontab_crd()
    change(crd)
    out = apply(srv, crd, check=False)
    assert out.returncode != 0
    assert "is invalid" in out.stderr and message in out.stderr, out.stderr
    assert srv.kubectl("get", "crd", "-o", "name").stdout.strip() == ""


def test_a_crd_whose_names_are_taken_is_not_served(server_factory):
    srv = server_factory()
    srv.start()
    apply(srv, crontab_crd())
    established(srv, f"crontabs.{GROUP}")
    apply(srv, crontab_crd(plural="crontabs2", kind="CronTab2", short_names=("ct",)))

    def conflict():
        crd = json.loads(srv.kubectl("get", "crd", f"crontabs2.{GROUP}", "-o", "json").stdout)
        conds = {c["type"]: c for c in crd.get("status", {}).get("conditions", [])}
        names = conds.get("NamesAccepted")
        return names if names and names["status"] == "False" else None

    names = wait_for(conflict, "the second CRD refused for its names", timeout=30)
    assert names["reason"] == "NameConflict" and '"ct" is already in use' in names["message"]
    assert srv.kubectl("get", "crontabs2", check=False).returncode != 0


def test_a_deleted_crd_takes_its_objects_and_a_restart_keeps_them(server_factory, tmp_path):
    srv = server_factory()
    srv.start()
    apply(srv, crontab_crd())
    established(srv, f"crontabs.{GROUP}")
    apply(srv, crontab("kept"), ns="default")
    srv.stop()
    srv.start()
    established(srv, f"crontabs.{GROUP}")
    assert get(srv, "default", "kept")["spec"]["cronSpec"] == "*/5 * * * *"
    srv.kubectl("delete", "crd", f"crontabs.{GROUP}", "--timeout=60s")
    assert srv.kubectl("get", "crd", "-o", "name").stdout.strip() == ""
    assert srv.kubectl("get", "ct", check=False).returncode != 0
    # Created again, it starts empty.
    apply(srv, crontab_crd())
    established(srv, f"crontabs.{GROUP}")
    assert srv.kubectl("get", "ct", "-A", "-o", "name").stdout.strip() == ""


def test_objects_stored_before_the_storage_version_moved_read_at_every_version(server_factory):
    srv = server_factory()
    srv.start()
    apply(srv, crontab_crd())
    established(srv, f"crontabs.{GROUP}")
    apply(srv, crontab("old"), ns="default")
    # v2 becomes the storage version; "old" stays stored as v1 until written.
    crd = crontab_crd()
    v2 = dict(crd["spec"]["versions"][0], name="v2")
    crd["spec"]["versions"][0]["storage"] = False
    crd["spec"]["versions"].append(v2)
    apply(srv, crd)
    wait_for(lambda: json.loads(srv.kubectl("get", "crd", f"crontabs.{GROUP}", "-o", "json")
                                .stdout)["status"]["storedVersions"] == ["v1", "v2"],
             "v2 among the stored versions")
    apply(srv, crontab("new", version="v2"), ns="default")
    for version in ("v1", "v2"):
        for name in ("old", "new"):
            assert get(srv, "default", name, version=version)["apiVersion"] == f"{GROUP}/{version}"
        listed = json.loads(srv.kubectl("get", f"crontabs.{version}.{GROUP}", "-n", "default",
                                        "-o", "json").stdout)
        assert {i["apiVersion"] for i in listed["items"]} == {f"{GROUP}/{version}"}
        watched = srv.kubectl("get", "--raw", f"/apis/{GROUP}/{version}/namespaces/default/"
                              "crontabs?watch=1&timeoutSeconds=1").stdout
        events = [json.loads(line) for line in watched.splitlines() if line.strip()]
        assert {e["object"]["metadata"]["name"] for e in events} == {"old", "new"}
        assert {e["object"]["apiVersion"] for e in events} == {f"{GROUP}/{version}"}


def test_the_federation_controllers_are_granted_each_served_kind_and_no_more(server_factory):
    srv = server_factory()
    srv.start()
    role = "flotilla:federation-controller:custom-kinds"

    def rules():
        out = srv.kubectl("get", "clusterrole", role, "-o", "json", check=False)
        return json.loads(out.stdout).get("rules", []) if out.returncode == 0 else None

    apply(srv, crontab_crd())
    established(srv, f"crontabs.{GROUP}")
    wait_for(lambda: rules() == [{"apiGroups": [GROUP],
                                  "resources": ["crontabs", "crontabs/status", "crontabs/scale"],
                                  "verbs": ["*"]}], "the role granting crontabs")
    can = srv.kubectl("auth", "can-i", "update", f"crontabs.{GROUP}",
                      "--as=system:flotilla:federation-controller", check=False)
    assert can.stdout.strip() == "yes", can
    cannot = srv.kubectl("auth", "can-i", "create", "clusterrolebindings",
                         "--as=system:flotilla:federation-controller", check=False)
    assert cannot.stdout.strip() == "no", cannot
    srv.kubectl("delete", "crd", f"crontabs.{GROUP}", "--timeout=60s")
    wait_for(lambda: rules() == [], "the role emptied")


def test_a_member_serves_the_crds_it_is_given(tmp_path):
    m = MemberProcess(str(tmp_path / "member"), ["--nodes", "1"])
    try:
        member = m.cluster
        apply(member, crontab_crd())
        established(member, f"crontabs.{GROUP}")
        apply(member, crontab("on-member"), ns="default")
        headers, rows = table(member.kubectl("get", "ct", "-n", "default").stdout)
        assert rows[0]["NAME"] == "on-member" and rows[0]["REPLICAS"] == "1"
    finally:
        m.stop()


def test_custom_objects_are_garbage_collected_and_go_with_their_namespace(crontabs):
    ns = "crontab-gc"
    crontabs.kubectl("create", "namespace", ns)
    owner = json.loads(crontabs.kubectl("create", "configmap", "owner", "-n", ns,
                                        "-o", "json").stdout)
    owned = crontab("owned")
    owned["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap",
                                             "name": "owner", "uid": owner["metadata"]["uid"]}]
    apply(crontabs, owned, ns=ns)
    apply(crontabs, crontab("standalone"), ns=ns)
    crontabs.kubectl("delete", "configmap", "owner", "-n", ns)
    wait_for(lambda: crontabs.kubectl("get", "ct", "owned", "-n", ns,
                                      check=False).returncode != 0,
             "the CronTab whose owner went to be collected")
    assert get(crontabs, ns, "standalone")["metadata"]["name"] == "standalone"
    crontabs.kubectl("delete", "namespace", ns, "--timeout=60s")
    assert crontabs.kubectl("get", "ct", "-A", "--field-selector", f"metadata.namespace={ns}",
                            "-o", "name").stdout.strip() == ""


def test_a_crd_over_a_mebibyte_applies_server_side(crontabs):
    """Operators ship CRDs of over 1 MiB (long descriptions on deep
    schemas); they apply server-side (client-side apply would need a
    last-applied annotation over its 256 KiB limit)."""
    fields = {f"field{i:04d}": {"type": "string", "description": "x" * 600}
              for i in range(2000)}
    crd = crontab_crd(plural="bigs", kind="Big", short_names=())
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"].update(fields)
    text = yaml.safe_dump(crd)
    assert len(text) > 1024 * 1024
    crontabs.kubectl("apply", "--server-side", "-f", "-", input=text)
    established(crontabs, f"bigs.{GROUP}")
    big = {"apiVersion": f"{GROUP}/v1", "kind": "Big", "metadata": {"name": "b"},
           "spec": {"cronSpec": "* * * * *", "field1999": "set"}}
    apply(crontabs, big, ns="default")
    obj = json.loads(crontabs.kubectl("get", "bigs", "b", "-n", "default", "-o", "json").stdout)
    assert obj["spec"]["field1999"] == "set"
    assert "field1999" in crontabs.kubectl("explain", "bigs.spec").stdout
