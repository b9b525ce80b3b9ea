"""The real kubectl against a real `flotilla server`: discovery, apply, get
(tables, formats, selectors, watch), describe, patch, edit, label, annotate,
scale, delete with each cascade, wait, explain, and authorization."""

import base64
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

import objects
from conftest import LineReader, stop_process, table, wait_for
from members import MemberProcess

MANIFESTS = os.path.join(os.path.dirname(__file__), "manifests")


def apply(server, ns, *docs, check=True):
    return server.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump_all(docs),
                          check=check)


def get_json(server, ns, ref):
    return json.loads(server.kubectl("get", ref, "-n", ns, "-o", "json").stdout)


def jsonpath(server, ns, ref, path, **kw):
    return server.kubectl("get", ref, "-n", ns, "-o", f"jsonpath={path}", **kw).stdout


def configmap_status(raw, ns, name):
    return raw.get(f"/api/v1/namespaces/{ns}/configmaps/{name}").status_code


def names(server, ns, *args):
    out = server.kubectl("get", *args, "-n", ns, "-o", "name").stdout
    return sorted(out.split())


# --- discovery ---------------------------------------------------------------

API_RESOURCES = {
    # name: (short names, apiVersion, namespaced, kind); None: not checked
    "namespaces": ("ns", "v1", "false", "Namespace"),
    "configmaps": ("cm", "v1", "true", "ConfigMap"),
    "secrets": ("", "v1", "true", "Secret"),
    "services": ("svc", "v1", "true", "Service"),
    "events": ("ev", "v1", "true", "Event"),
    "serviceaccounts": ("sa", "v1", "true", "ServiceAccount"),
    "replicasets": ("rs", "apps/v1", "true", "ReplicaSet"),
    "deployments": ("deploy", "apps/v1", "true", "Deployment"),
    "statefulsets": ("sts", "apps/v1", "true", "StatefulSet"),
    "daemonsets": ("ds", "apps/v1", "true", "DaemonSet"),
    "networkpolicies": ("netpol", "networking.k8s.io/v1", "true", "NetworkPolicy"),
    "limitranges": ("limits", "v1", "true", "LimitRange"),
    "poddisruptionbudgets": ("pdb", "policy/v1", "true", "PodDisruptionBudget"),
    "ingresses": ("ing", "networking.k8s.io/v1", "true", "Ingress"),
    "ingressclasses": ("", "networking.k8s.io/v1", "false", "IngressClass"),
    "horizontalpodautoscalers": ("hpa", "autoscaling/v2", "true", "HorizontalPodAutoscaler"),
    "leases": ("", "coordination.k8s.io/v1", "true", "Lease"),
    "clusters": (None, "federation/v1beta1", "false", "Cluster"),
}


def test_api_resources_lists_kinds_with_short_names(server):
    headers, rows = table(server.kubectl("api-resources").stdout)
    assert headers == ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    by_name = {(r["NAME"], r["APIVERSION"]): r for r in rows}
    for name, (short, api_version, namespaced, kind) in API_RESOURCES.items():
        row = by_name.get((name, api_version))
        assert row, f"{name} ({api_version}) missing from api-resources:\n{rows}"
        if short is not None:
            assert row["SHORTNAMES"] == short, row
        assert row["NAMESPACED"] == namespaced, row
        assert row["KIND"] == kind, row


def test_api_versions_include_every_served_version(server):
    versions = server.kubectl("api-versions").stdout.split()
    for v in ["v1", "apps/v1", "autoscaling/v1", "autoscaling/v2", "coordination.k8s.io/v1",
              "federation/v1beta1"]:
        assert v in versions


def test_raw_readyz_and_server_version(server):
    assert server.kubectl("get", "--raw", "/readyz").stdout.strip() == "ok"
    version = json.loads(server.kubectl("version", "-o", "json").stdout)
    assert version["serverVersion"]["gitVersion"], version


# --- apply ---------------------------------------------------------------------

def test_apply_creates_then_configures_the_same_file(server, namespace, tmp_path):
    path = tmp_path / "app.yaml"
    shutil.copy(os.path.join(MANIFESTS, "app.yaml"), path)
    out = server.kubectl("apply", "-n", namespace, "-f", str(path)).stdout
    assert "configmap/web-config created" in out
    assert "deployment.apps/web created" in out
    assert "service/web created" in out

    shutil.copy(os.path.join(MANIFESTS, "app-v2.yaml"), path)
    out = server.kubectl("apply", "-n", namespace, "-f", str(path)).stdout
    assert "configmap/web-config configured" in out
    assert "deployment.apps/web configured" in out
    assert "service/web unchanged" in out

    cm = get_json(server, namespace, "configmap/web-config")
    assert cm["data"] == {"colour": "green"}, "apply must remove keys dropped from the file"
    assert cm["metadata"]["labels"] == {"app": "web"}
    deploy = get_json(server, namespace, "deployment/web")
    assert deploy["spec"]["replicas"] == 4
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    assert deploy["metadata"]["generation"] == 2

    out = server.kubectl("apply", "-n", namespace, "-f", str(path)).stdout
    assert out.count("unchanged") == 3, out


def test_apply_of_a_list_and_of_get_output(server, namespace):
    """kubectl validates the items of a `kind: List` against the OpenAPI v2
    document in protobuf (docs/openapi.md): a List applies, so does what
    `kubectl get -o yaml` wrote, and an item with an unknown field is
    refused before anything is sent."""
    doc = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "first"},
         "data": {"a": "1"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "listed"},
         "spec": {"selector": {"matchLabels": {"app": "listed"}},
                  "template": {"metadata": {"labels": {"app": "listed"}},
                               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}]}
    out = server.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump(doc))
    assert "configmap/first created" in out.stdout
    assert "deployment.apps/listed created" in out.stdout
    written = server.kubectl("get", "configmap/first", "deployment/listed", "-n", namespace,
                             "-o", "yaml").stdout
    assert yaml.safe_load(written)["kind"] == "List"
    out = server.kubectl("apply", "-n", namespace, "-f", "-", input=written)
    assert "configmap/first" in out.stdout
    bad = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typo"},
         "dataa": {"a": "1"}}]}
    out = server.kubectl("apply", "-n", namespace, "-f", "-", input=yaml.safe_dump(bad),
                         check=False)
    assert out.returncode != 0
    assert 'unknown field "dataa"' in out.stderr, out.stderr
    assert server.kubectl("get", "configmap", "typo", "-n", namespace,
                          check=False).returncode != 0


def test_apply_rejects_unknown_field_on_create(server, namespace):
    result = server.kubectl("apply", "-n", namespace, "-f",
                            os.path.join(MANIFESTS, "unknown-field.yaml"), check=False)
    assert result.returncode != 0
    assert "replicaz" in result.stderr, result.stderr
    missing = server.kubectl("get", "deployment", "typo", "-n", namespace, check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_apply_rejects_unknown_field_on_update(server, namespace):
    apply(server, namespace, objects.deployment("web"))
    bad = objects.deployment("web", replicas=5)
    bad["spec"]["template"]["spec"]["containers"][0]["imagePullPolicee"] = "Always"
    result = apply(server, namespace, bad, check=False)
    assert result.returncode != 0
    assert "imagePullPolicee" in result.stderr, result.stderr
    assert jsonpath(server, namespace, "deployment/web", "{.spec.replicas}") == "3"


def test_apply_without_validation_drops_unknown_field(server, namespace):
    server.kubectl("apply", "--validate=false", "-n", namespace, "-f",
                   os.path.join(MANIFESTS, "unknown-field.yaml"))
    deploy = get_json(server, namespace, "deployment/typo")
    assert "replicaz" not in deploy["spec"]
    assert deploy["spec"]["replicas"] == 1, "replicas defaults to 1"


# --- imperative create: kubectl's typed clients send protobuf -----------------

SERVER_SET_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation",
                       "managedFields")


def user_view(obj):
    """`obj` without the metadata the server sets."""
    obj = dict(obj, metadata=dict(obj["metadata"]))
    for key in SERVER_SET_METADATA:
        obj["metadata"].pop(key, None)
    return obj


def test_imperative_create_commands(server, namespace, tmp_path):
    ns = namespace
    key, crt = tmp_path / "tls.key", tmp_path / "tls.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(crt), "-days", "1", "-subj", "/CN=web.example"],
                   check=True, capture_output=True)
    # Each of these POSTs application/vnd.kubernetes.protobuf.
    server.kubectl("create", "namespace", f"{ns}-created")
    server.kubectl("create", "configmap", "literal", "--from-literal=a=1", "--from-literal=b=two",
                   "-n", ns)
    server.kubectl("create", "secret", "generic", "secret", "--from-literal=p=q", "-n", ns)
    server.kubectl("create", "secret", "tls", "tls", f"--cert={crt}", f"--key={key}", "-n", ns)
    server.kubectl("create", "serviceaccount", "robot", "-n", ns)
    server.kubectl("create", "deployment", "web", "--image=nginx:1.25", "--replicas=2",
                   "--port=80", "-n", ns)

    created = json.loads(server.kubectl("get", "ns", f"{ns}-created", "-o", "json").stdout)
    assert created["metadata"]["name"] == f"{ns}-created"
    assert created["status"] == {"phase": "Active"}
    assert user_view(get_json(server, ns, "cm/literal")) == {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "literal", "namespace": ns},
        "data": {"a": "1", "b": "two"}}
    assert user_view(get_json(server, ns, "secret/secret")) == {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "secret", "namespace": ns},
        "data": {"p": "cQ=="}, "type": "Opaque"}
    tls = get_json(server, ns, "secret/tls")
    assert tls["type"] == "kubernetes.io/tls"
    assert base64.b64decode(tls["data"]["tls.crt"]) == crt.read_bytes()
    assert base64.b64decode(tls["data"]["tls.key"]) == key.read_bytes()
    assert user_view(get_json(server, ns, "sa/robot")) == {
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "robot", "namespace": ns}}
    deploy = get_json(server, ns, "deploy/web")
    assert deploy["metadata"]["labels"] == {"app": "web"}
    assert deploy["spec"]["replicas"] == 2
    assert deploy["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    template = deploy["spec"]["template"]
    assert template["metadata"] == {"labels": {"app": "web"}}
    container = template["spec"]["containers"][0]
    assert (container["name"], container["image"]) == ("nginx", "nginx:1.25")
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert container["resources"] == {}
    # Left out on the wire as zero values, then defaulted as for JSON.
    assert deploy["spec"]["strategy"]["type"] == "RollingUpdate"
    assert template["spec"]["restartPolicy"] == "Always"


def test_imperative_services_and_autoscale(server, namespace):
    ns = namespace
    server.kubectl("create", "deployment", "web", "--image=nginx", "-n", ns)
    server.kubectl("create", "service", "clusterip", "web", "--tcp=80:8080", "-n", ns)
    server.kubectl("create", "service", "loadbalancer", "lb", "--tcp=443:8443", "-n", ns)
    server.kubectl("create", "service", "externalname", "ext", "--external-name=example.com",
                   "-n", ns)
    server.kubectl("expose", "deployment", "web", "--name=exposed", "--port=90",
                   "--target-port=http", "-n", ns)
    # `autoscale` POSTs an autoscaling/v1 object as protobuf; read back as v2.
    server.kubectl("autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu-percent=70",
                   "-n", ns)

    web = get_json(server, ns, "svc/web")
    assert web["metadata"]["labels"] == {"app": "web"}
    assert web["spec"]["type"] == "ClusterIP"
    assert web["spec"]["ports"] == [
        {"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}]
    assert web["spec"]["selector"] == {"app": "web"}
    assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", web["spec"]["clusterIP"])
    lb = get_json(server, ns, "svc/lb")
    assert lb["spec"]["type"] == "LoadBalancer"
    assert [(p["port"], p["targetPort"]) for p in lb["spec"]["ports"]] == [(443, 8443)]
    assert lb["spec"]["ports"][0]["nodePort"] > 0
    ext = get_json(server, ns, "svc/ext")
    assert (ext["spec"]["type"], ext["spec"]["externalName"]) == ("ExternalName", "example.com")
    assert "clusterIP" not in ext["spec"]
    exposed = get_json(server, ns, "svc/exposed")
    assert exposed["spec"]["ports"] == [{"port": 90, "protocol": "TCP", "targetPort": "http"}]
    assert exposed["spec"]["selector"] == {"app": "web"}
    hpa = get_json(server, ns, "hpa/web")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2, "maxReplicas": 5,
        "metrics": [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}


def _pb_field(number, payload):
    """A length-delimited protobuf field."""
    tag, size, out = number << 3 | 2, len(payload), bytearray()
    for value in (tag, size):
        while True:
            out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
            value >>= 7
            if not value:
                break
    return bytes(out) + payload


def _pb_body(api_version, kind, raw):
    type_meta = _pb_field(1, api_version.encode()) + _pb_field(2, kind.encode())
    return b"k8s\x00" + _pb_field(1, type_meta) + _pb_field(2, raw)


PROTOBUF = "application/vnd.kubernetes.protobuf"


def test_protobuf_bodies_that_do_not_decode(server, namespace):
    raw = server.raw()
    configmaps = f"/api/v1/namespaces/{namespace}/configmaps"
    meta = _pb_field(1, _pb_field(1, b"pb"))

    def post(path, body):
        response = raw.post(path, data=body, headers={"Content-Type": PROTOBUF})
        return response.status_code, response.json()

    code, status = post(configmaps, _pb_body("v1", "ConfigMap", meta))
    assert code == 201, status
    assert status["metadata"]["name"] == "pb"
    # Updates (PUT) decode too: data {a: 1} as a map entry {key = 1, value = 2}.
    entry = _pb_field(2, _pb_field(1, b"a") + _pb_field(2, b"1"))
    response = raw.put(f"{configmaps}/pb", data=_pb_body("v1", "ConfigMap", meta + entry),
                       headers={"Content-Type": PROTOBUF})
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"a": "1"}
    # A Secret sent to the configmaps URL: as for a JSON body of another kind.
    code, status = post(configmaps, _pb_body("v1", "Secret", meta))
    assert (code, status["reason"]) == (400, "BadRequest")
    assert "does not match the expected API version" in status["message"]
    # Field 9 is no field of ConfigMap.
    code, status = post(configmaps, _pb_body("v1", "ConfigMap", meta + _pb_field(9, b"x")))
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"] == ("unable to decode protobuf body: ConfigMap field 9: "
                                 "unknown field (wire type 2)")
    code, status = post(configmaps, b"k8s\x00\x0a\x7f")
    assert (code, status["reason"]) == (400, "BadRequest")
    assert status["message"].startswith("unable to decode protobuf body: Unknown:")
    # A kind without a protobuf schema keeps answering 415.
    code, status = post("/apis/federation/v1beta1/clusters",
                        _pb_body("federation/v1beta1", "Cluster", meta))
    assert (code, status["reason"]) == (415, "UnsupportedMediaType")
    assert raw.get(f"{configmaps}/pb").status_code == 200


def test_kubectl_run_on_a_member(tmp_path):
    # Pods are served by members, not by the federation.
    member = MemberProcess(str(tmp_path / "member"), ["--pod-startup", "200ms"])
    try:
        cluster = member.cluster
        cluster.kubectl("run", "web", "--image=nginx", "--port=80", "--labels=app=web",
                        "--env=A=1")
        cluster.kubectl("run", "once", "--image=busybox", "--restart=Never", "--command", "--",
                        "sh", "-c", "echo hi")
        pod = cluster.get("pod", "web")
        assert pod["metadata"]["labels"] == {"app": "web"}
        container = pod["spec"]["containers"][0]
        assert (container["name"], container["image"]) == ("web", "nginx")
        assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
        assert container["env"] == [{"name": "A", "value": "1"}]
        once = cluster.get("pod", "once")
        assert once["spec"]["restartPolicy"] == "Never"
        assert once["spec"]["containers"][0]["command"] == ["sh", "-c", "echo hi"]
        wait_for(lambda: cluster.get("pod", "web")["status"].get("phase") == "Running",
                 "pod web Running")
    finally:
        assert member.stop() == 0


# --- get: tables ---------------------------------------------------------------

def _event_for(ns):
    return objects.event("web-config.started", ns, "web-config")


TABLES = [
    # (resource as typed, object, headers, cells of its row)
    ("cm", lambda ns: objects.configmap("c", {"a": "1", "b": "2"}),
     ["NAME", "DATA", "AGE"], {"NAME": "c", "DATA": "2"}),
    ("secrets", lambda ns: objects.secret("s"),
     ["NAME", "TYPE", "DATA", "AGE"], {"NAME": "s", "TYPE": "Opaque", "DATA": "1"}),
    ("svc", lambda ns: objects.service("web"),
     ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"],
     {"NAME": "web", "TYPE": "ClusterIP", "EXTERNAL-IP": "<none>", "PORT(S)": "80/TCP"}),
    ("sa", lambda ns: objects.serviceaccount("robot"),
     ["NAME", "SECRETS", "AGE"], {"NAME": "robot", "SECRETS": "0"}),
    ("ev", _event_for,
     ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
     {"TYPE": "Normal", "REASON": "Started", "OBJECT": "configmap/web-config",
      "MESSAGE": "e2e test event"}),
    ("rs", lambda ns: objects.replicaset("web"),
     ["NAME", "DESIRED", "CURRENT", "READY", "AGE"],
     {"NAME": "web", "DESIRED": "2", "CURRENT": "0", "READY": "0"}),
    ("deploy", lambda ns: objects.deployment("web"),
     ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
     {"NAME": "web", "READY": "0/3", "UP-TO-DATE": "0", "AVAILABLE": "0"}),
    ("sts", lambda ns: objects.statefulset("db"),
     ["NAME", "READY", "AGE"], {"NAME": "db", "READY": "0/2"}),
    ("hpa", lambda ns: objects.hpa_v2("web"),
     ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"],
     {"NAME": "web", "REFERENCE": "Deployment/web", "MINPODS": "1", "MAXPODS": "5",
      "REPLICAS": "0"}),
    ("leases", lambda ns: objects.lease("leader"),
     ["NAME", "HOLDER", "AGE"], {"NAME": "leader", "HOLDER": "flotilla-0"}),
]


@pytest.mark.parametrize("resource,make,headers,cells", TABLES, ids=[t[0] for t in TABLES])
def test_get_table_columns(server, namespace, resource, make, headers, cells):
    apply(server, namespace, make(namespace))
    got_headers, rows = table(server.kubectl("get", resource, "-n", namespace).stdout)
    assert got_headers == headers
    assert len(rows) == 1, rows
    for column, value in cells.items():
        assert rows[0][column] == value, (column, rows[0])
    age = rows[0]["LAST SEEN" if "LAST SEEN" in headers else "AGE"]
    assert re.fullmatch(r"\d+[smhdy](\d+[smhdy])?", age), rows[0]


def test_get_table_for_namespaces_and_clusters(server, namespace):
    headers, rows = table(server.kubectl("get", "ns", namespace).stdout)
    assert headers == ["NAME", "STATUS", "AGE"]
    assert rows[0]["NAME"] == namespace and rows[0]["STATUS"] == "Active"

    apply(server, namespace, objects.cluster(namespace))
    headers, rows = table(server.kubectl("get", "clusters", namespace).stdout)
    assert headers[0] == "NAME" and headers[-1] == "AGE", headers
    assert rows[0]["NAME"] == namespace


def test_get_wide_deployment_adds_containers_images_selector(server, namespace):
    apply(server, namespace, objects.deployment("web"))
    headers, rows = table(server.kubectl("get", "deploy", "-o", "wide", "-n", namespace).stdout)
    assert headers == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS",
                       "IMAGES", "SELECTOR"]
    assert rows[0]["IMAGES"] == "nginx:1.25" and rows[0]["SELECTOR"] == "app=web"


def test_get_all_namespaces_adds_namespace_column(server, namespace):
    apply(server, namespace, objects.configmap("c"))
    headers, rows = table(server.kubectl("get", "cm", "-A").stdout)
    assert headers == ["NAMESPACE", "NAME", "DATA", "AGE"]
    assert [r["NAME"] for r in rows if r["NAMESPACE"] == namespace] == ["c"]


def test_get_empty_namespace_says_no_resources(server, namespace):
    result = server.kubectl("get", "deployments", "-n", namespace)
    assert result.stdout == ""
    assert f"No resources found in {namespace} namespace." in result.stderr


def test_get_missing_object_is_not_found(server, namespace):
    result = server.kubectl("get", "cm", "nope", "-n", namespace, check=False)
    assert result.returncode == 1
    assert 'Error from server (NotFound): configmaps "nope" not found' in result.stderr


# --- get: formats and selectors -------------------------------------------------

def test_get_yaml_and_json(server, namespace):
    apply(server, namespace, objects.configmap("c", {"k": "v"}, labels={"tier": "web"}))
    as_json = get_json(server, namespace, "cm/c")
    as_yaml = yaml.safe_load(server.kubectl("get", "cm", "c", "-n", namespace, "-o", "yaml").stdout)
    for obj in (as_json, as_yaml):
        assert obj["apiVersion"] == "v1" and obj["kind"] == "ConfigMap"
        assert obj["metadata"]["name"] == "c" and obj["metadata"]["namespace"] == namespace
        assert obj["metadata"]["labels"] == {"tier": "web"}
        assert obj["metadata"]["uid"] and obj["metadata"]["resourceVersion"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
                            obj["metadata"]["creationTimestamp"])
        assert obj["data"] == {"k": "v"}
    assert as_json["metadata"]["uid"] == as_yaml["metadata"]["uid"]

    listed = json.loads(server.kubectl("get", "cm", "-n", namespace, "-o", "json").stdout)
    assert listed["kind"] == "List"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["c"]


def test_get_label_selector(server, namespace):
    apply(server, namespace,
          objects.configmap("web-1", labels={"tier": "web"}),
          objects.configmap("web-canary", labels={"tier": "web", "canary": "true"}),
          objects.configmap("db-1", labels={"tier": "db"}),
          objects.configmap("plain"))
    assert names(server, namespace, "cm", "-l", "tier=web") == [
        "configmap/web-1", "configmap/web-canary"]
    assert names(server, namespace, "cm", "-l", "tier in (web,db),!canary") == [
        "configmap/db-1", "configmap/web-1"]
    assert names(server, namespace, "cm", "-l", "tier!=web") == ["configmap/db-1", "configmap/plain"]
    assert names(server, namespace, "cm", "-l", "tier") == [
        "configmap/db-1", "configmap/web-1", "configmap/web-canary"]


def test_get_field_selector(server, namespace):
    apply(server, namespace, objects.configmap("a"), objects.configmap("b"),
          objects.secret("s"))
    assert names(server, namespace, "cm", "--field-selector", "metadata.name=a") == [
        "configmap/a"]
    assert names(server, namespace, "cm", "--field-selector", "metadata.name!=a") == [
        "configmap/b"]
    assert names(server, namespace, "secrets", "--field-selector", "type=Opaque") == ["secret/s"]
    bad = server.kubectl("get", "cm", "-n", namespace, "--field-selector", "metadata.name",
                         check=False)
    assert bad.returncode != 0
    assert "BadRequest" in bad.stderr and "metadata.name" in bad.stderr, bad.stderr


@pytest.mark.parametrize("who", ["admin", "readonly"])
def test_get_watch_sees_later_changes(server, namespace, who):
    apply(server, namespace, objects.configmap("first"))
    kubeconfig = server.kubeconfig if who == "admin" else server.readonly_kubeconfig
    proc = server.kubectl_popen("get", "cm", "-n", namespace, "-w", kubeconfig=kubeconfig)
    try:
        out = LineReader(proc.stdout)
        out.wait_for_line(lambda l: l.startswith("first "), "the row listed at start")
        apply(server, namespace, objects.configmap("later", {"a": "1", "b": "2"}))
        row = out.wait_for_line(lambda l: l.startswith("later "), "a row for the new configmap")
        assert row.split()[1] == "2"
        server.kubectl("patch", "cm", "first", "-n", namespace, "--type", "merge",
                       "-p", '{"data": {"x": "1", "y": "2"}}')
        row = out.wait_for_line(lambda l: l.startswith("first "), "a row for the change")
        assert row.split()[1] == "3"
    finally:
        stop_process(proc, timeout=10)


def test_get_watch_output_watch_events(server, namespace):
    apply(server, namespace, objects.configmap("first"))
    proc = server.kubectl_popen("get", "cm", "-n", namespace, "-w", "--output-watch-events")
    try:
        out = LineReader(proc.stdout)
        header = out.wait_for_line(lambda l: l.startswith("EVENT"), "the header")
        assert header.split() == ["EVENT", "NAME", "DATA", "AGE"]
        out.wait_for_line(lambda l: l.split()[:2] == ["ADDED", "first"], "ADDED first")
        server.kubectl("patch", "cm", "first", "-n", namespace, "--type", "merge",
                       "-p", '{"data": {"x": "1"}}')
        row = out.wait_for_line(lambda l: "first" in l.split(), "the MODIFIED row")
        assert row.split()[:3] == ["MODIFIED", "first", "2"]
        server.kubectl("delete", "cm", "first", "-n", namespace)
        row = out.wait_for_line(lambda l: "first" in l.split(), "the DELETED row")
        assert row.split()[:2] == ["DELETED", "first"]
    finally:
        stop_process(proc, timeout=10)


# --- describe ----------------------------------------------------------------------

def test_describe_deployment(server, namespace):
    apply(server, namespace, objects.deployment("web"))
    out = server.kubectl("describe", "deployment", "web", "-n", namespace).stdout
    assert re.search(r"^Name:\s+web$", out, re.M), out
    assert re.search(rf"^Namespace:\s+{namespace}$", out, re.M)
    assert re.search(r"^Selector:\s+app=web$", out, re.M)
    assert re.search(r"^Replicas:\s+3 desired \| 0 updated \| 0 total \| 0 available", out, re.M)
    assert re.search(r"^StrategyType:\s+RollingUpdate$", out, re.M), "defaulted strategy"
    assert re.search(r"^\s+Image:\s+nginx:1\.25$", out, re.M)


def test_describe_configmap_shows_data_and_its_events(server, namespace):
    apply(server, namespace, objects.configmap("web-config", {"colour": "blue"}))
    uid = jsonpath(server, namespace, "cm/web-config", "{.metadata.uid}")
    event = objects.event("web-config.started", namespace, "web-config", reason="Rolled")
    event["involvedObject"]["uid"] = uid
    apply(server, namespace, event)
    out = server.kubectl("describe", "cm", "web-config", "-n", namespace).stdout
    assert re.search(r"^Name:\s+web-config$", out, re.M), out
    assert re.search(r"^colour:\n-+\nblue$", out, re.M), out
    assert re.search(r"Normal\s+Rolled\s+.*flotilla-e2e\s+e2e test event", out), out


# --- patch, edit, label, annotate ------------------------------------------------------

def test_patch_merge(server, namespace):
    apply(server, namespace, objects.configmap("c", {"a": "1", "b": "2"}))
    out = server.kubectl("patch", "cm", "c", "-n", namespace, "--type", "merge",
                         "-p", '{"data": {"b": null, "c": "3"}}').stdout
    assert "configmap/c patched" in out
    assert get_json(server, namespace, "cm/c")["data"] == {"a": "1", "c": "3"}


def test_patch_json(server, namespace):
    apply(server, namespace, objects.configmap("c", {"a": "1"}))
    patch = [{"op": "replace", "path": "/data/a", "value": "x"},
             {"op": "add", "path": "/data/b", "value": "y"}]
    server.kubectl("patch", "cm", "c", "-n", namespace, "--type", "json", "-p", json.dumps(patch))
    assert get_json(server, namespace, "cm/c")["data"] == {"a": "x", "b": "y"}

    failing = [{"op": "test", "path": "/data/a", "value": "not-x"},
               {"op": "replace", "path": "/data/a", "value": "z"}]
    result = server.kubectl("patch", "cm", "c", "-n", namespace, "--type", "json",
                            "-p", json.dumps(failing), check=False)
    assert result.returncode != 0
    assert get_json(server, namespace, "cm/c")["data"] == {"a": "x", "b": "y"}


def test_patch_strategic_merges_lists_by_key(server, namespace):
    two = [{"name": "a", "image": "busybox:1"}, {"name": "b", "image": "busybox:1"}]
    apply(server, namespace, objects.deployment("strategic", containers=two),
          objects.deployment("merge", containers=two))
    patch = json.dumps({"spec": {"template": {"spec": {"containers": [
        {"name": "b", "image": "busybox:2"}]}}}})
    server.kubectl("patch", "deploy", "strategic", "-n", namespace, "--type", "strategic",
                   "-p", patch)
    server.kubectl("patch", "deploy", "merge", "-n", namespace, "--type", "merge", "-p", patch)

    def images(name):
        d = get_json(server, namespace, f"deploy/{name}")
        return [(c["name"], c["image"]) for c in d["spec"]["template"]["spec"]["containers"]]

    assert images("strategic") == [("a", "busybox:1"), ("b", "busybox:2")]
    assert images("merge") == [("b", "busybox:2")], "a merge patch replaces the whole list"


def test_edit_with_kube_editor(server, namespace, tmp_path):
    apply(server, namespace, objects.configmap("c", {"colour": "blue"}))
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/colour: blue/colour: green/' \"$1\"\n")
    editor.chmod(0o755)
    out = server.kubectl("edit", "cm/c", "-n", namespace,
                         env={"KUBE_EDITOR": str(editor), "EDITOR": str(editor)}).stdout
    assert "configmap/c edited" in out
    assert get_json(server, namespace, "cm/c")["data"] == {"colour": "green"}

    result = server.kubectl("edit", "cm/c", "-n", namespace,
                            env={"KUBE_EDITOR": str(editor), "EDITOR": str(editor)})
    assert "Edit cancelled, no changes made." in result.stdout + result.stderr


def test_label(server, namespace):
    apply(server, namespace, objects.configmap("c"), objects.configmap("d"))
    assert "configmap/c labeled" in server.kubectl("label", "cm", "c", "tier=web",
                                                   "-n", namespace).stdout
    assert names(server, namespace, "cm", "-l", "tier=web") == ["configmap/c"]

    clash = server.kubectl("label", "cm", "c", "tier=db", "-n", namespace, check=False)
    assert clash.returncode != 0 and "already has a value (web)" in clash.stderr
    server.kubectl("label", "cm", "c", "tier=db", "--overwrite", "-n", namespace)
    assert names(server, namespace, "cm", "-l", "tier=db") == ["configmap/c"]

    assert "configmap/c unlabeled" in server.kubectl("label", "cm", "c", "tier-",
                                                     "-n", namespace).stdout
    assert "tier" not in (get_json(server, namespace, "cm/c")["metadata"].get("labels") or {})


def test_annotate(server, namespace):
    apply(server, namespace, objects.configmap("c"))
    out = server.kubectl("annotate", "cm", "c", "example.com/note=first", "-n", namespace).stdout
    assert "configmap/c annotated" in out
    assert jsonpath(server, namespace, "cm/c",
                    r"{.metadata.annotations.example\.com/note}") == "first"
    server.kubectl("annotate", "cm", "c", "example.com/note=second", "--overwrite",
                   "-n", namespace)
    assert jsonpath(server, namespace, "cm/c",
                    r"{.metadata.annotations.example\.com/note}") == "second"
    server.kubectl("annotate", "cm", "c", "example.com/note-", "-n", namespace)
    annotations = get_json(server, namespace, "cm/c")["metadata"].get("annotations") or {}
    assert "example.com/note" not in annotations


# --- scale -----------------------------------------------------------------------------

SCALABLE = [("deployment.apps", objects.deployment), ("statefulset.apps", objects.statefulset),
            ("replicaset.apps", objects.replicaset)]


@pytest.mark.parametrize("resource,make", SCALABLE, ids=[s[0] for s in SCALABLE])
def test_scale(server, namespace, resource, make):
    apply(server, namespace, make("web", replicas=2))
    out = server.kubectl("scale", f"{resource}/web", "--replicas=5", "-n", namespace).stdout
    assert f"{resource}/web scaled" in out
    assert jsonpath(server, namespace, f"{resource}/web", "{.spec.replicas}") == "5"

    stale = server.kubectl("scale", f"{resource}/web", "--current-replicas=2", "--replicas=7",
                           "-n", namespace, check=False)
    assert stale.returncode != 0
    assert jsonpath(server, namespace, f"{resource}/web", "{.spec.replicas}") == "5"


# --- delete and wait ---------------------------------------------------------------------

def make_owner_with_dependents(server, ns, dependent_finalizers=()):
    """A ConfigMap "owner" and two ConfigMaps that name it in ownerReferences
    (blockOwnerDeletion), dep-1 with `dependent_finalizers`."""
    apply(server, ns, objects.configmap("owner"))
    uid = jsonpath(server, ns, "cm/owner", "{.metadata.uid}")
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid,
           "blockOwnerDeletion": True}
    deps = []
    for i in (1, 2):
        dep = objects.configmap(f"dep-{i}", labels={"role": "dependent"})
        dep["metadata"]["ownerReferences"] = [ref]
        if i == 1 and dependent_finalizers:
            dep["metadata"]["finalizers"] = list(dependent_finalizers)
        deps.append(dep)
    apply(server, ns, *deps)
    return uid


def test_delete_cascade_orphan_keeps_dependents(server, namespace, raw):
    uid = make_owner_with_dependents(server, namespace)
    out = server.kubectl("delete", "cm", "owner", "--cascade=orphan", "-n", namespace).stdout
    assert 'configmap "owner" deleted' in out
    assert configmap_status(raw, namespace, "owner") == 404
    listed = json.loads(server.kubectl("get", "cm", "-l", "role=dependent", "-n", namespace,
                                       "-o", "json").stdout)
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["dep-1", "dep-2"]
    for item in listed["items"]:
        refs = item["metadata"].get("ownerReferences") or []
        assert uid not in [r["uid"] for r in refs], "orphaning removes the owner reference"


def test_delete_cascade_background_removes_dependents(server, namespace, raw):
    make_owner_with_dependents(server, namespace)
    server.kubectl("delete", "cm", "owner", "--cascade=background", "--wait=false",
                   "-n", namespace)
    assert configmap_status(raw, namespace, "owner") == 404, "background deletes the owner first"
    wait_for(lambda: all(configmap_status(raw, namespace, d) == 404 for d in ("dep-1", "dep-2")),
             "the garbage collector to delete the dependents")


def test_delete_cascade_foreground_removes_dependents_first(server, namespace, raw):
    make_owner_with_dependents(server, namespace)
    server.kubectl("delete", "cm", "owner", "--cascade=foreground", "-n", namespace)
    # kubectl waited for the owner to disappear; its blocking dependents went before it.
    assert configmap_status(raw, namespace, "owner") == 404
    assert configmap_status(raw, namespace, "dep-1") == 404
    assert configmap_status(raw, namespace, "dep-2") == 404


def test_delete_cascade_foreground_waits_for_a_finalizing_dependent(server, namespace, raw):
    make_owner_with_dependents(server, namespace, dependent_finalizers=["example.com/hold"])
    server.kubectl("delete", "cm", "owner", "--cascade=foreground", "--wait=false",
                   "-n", namespace)

    def cm(name):
        r = raw.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
        return r.json() if r.status_code == 200 else None

    wait_for(lambda: configmap_status(raw, namespace, "dep-2") == 404, "dep-2 to be deleted")
    wait_for(lambda: (cm("dep-1") or {}).get("metadata", {}).get("deletionTimestamp"),
             "dep-1 to be marked for deletion")
    owner = cm("owner")
    assert owner, "the owner waits for its blocking dependent"
    assert owner["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in owner["metadata"]["finalizers"]

    server.kubectl("patch", "cm", "dep-1", "-n", namespace, "--type", "json",
                   "-p", '[{"op": "remove", "path": "/metadata/finalizers"}]')
    # The owner may be gone before kubectl looks; then wait succeeds silently.
    server.kubectl("wait", "--for=delete", "cm/owner", "--timeout=60s", "-n", namespace)
    assert configmap_status(raw, namespace, "owner") == 404
    assert configmap_status(raw, namespace, "dep-1") == 404


def test_wait_for_delete(server, namespace):
    held = objects.configmap("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    apply(server, namespace, held)
    server.kubectl("delete", "cm", "held", "--wait=false", "-n", namespace)

    early = server.kubectl("wait", "--for=delete", "cm/held", "--timeout=1s", "-n", namespace,
                           check=False)
    assert early.returncode != 0, "the finalizer still holds the object"
    assert "timed out" in early.stderr, early.stderr

    # -v=6 logs each request: once the watch is open, the deletion cannot be missed.
    proc = server.kubectl_popen("wait", "--for=delete", "cm/held", "--timeout=120s", "-v=6",
                                "-n", namespace)
    try:
        out = LineReader(proc.stdout)
        out.wait_for_line(lambda l: "watch=true" in l, "kubectl wait to open its watch")
        server.kubectl("patch", "cm", "held", "-n", namespace, "--type", "merge",
                       "-p", '{"metadata": {"finalizers": null}}')
        out.wait_for_line(lambda l: "condition met" in l, "kubectl wait to see the deletion")
        assert proc.wait(timeout=60) == 0
    finally:
        stop_process(proc, timeout=10)


# --- explain -------------------------------------------------------------------------

def test_explain_field(server):
    out = server.kubectl("explain", "deployment.spec.replicas").stdout
    assert re.search(r"^KIND:\s+Deployment$", out, re.M), out
    assert re.search(r"^FIELD:\s+replicas\s+<integer>$", out, re.M), out
    assert "Number of desired pods" in out


def test_explain_versions_and_clusters(server):
    out = server.kubectl("explain", "hpa.spec.targetCPUUtilizationPercentage",
                         "--api-version=autoscaling/v1").stdout
    assert re.search(r"^VERSION:\s+v1$", out, re.M), out
    assert "<integer>" in out
    out = server.kubectl("explain", "clusters.spec").stdout
    assert re.search(r"^KIND:\s+Cluster$", out, re.M), out
    assert "secretRef" in out and "serverAddressByClientCIDRs" in out
    missing = server.kubectl("explain", "deployment.spec.nope", check=False)
    assert missing.returncode != 0 and "nope" in missing.stderr


# --- authentication and authorization ------------------------------------------------

def test_readonly_kubeconfig_reads_but_cannot_write(server, namespace):
    apply(server, namespace, objects.configmap("c", {"a": "1"}), objects.deployment("web"))
    ro = server.readonly_kubeconfig
    assert server.kubectl("get", "cm", "-n", namespace, "-o", "name",
                          kubeconfig=ro).stdout.split() == ["configmap/c"]
    assert "web" in server.kubectl("describe", "deploy", "web", "-n", namespace,
                                   kubeconfig=ro).stdout

    writes = [
        ("create", "configmap", "x", "-n", namespace),
        ("delete", "configmap", "c", "-n", namespace),
        ("patch", "configmap", "c", "-n", namespace, "--type", "merge", "-p", '{"data":{"a":"2"}}'),
        ("label", "configmap", "c", "x=y", "-n", namespace),
        ("scale", "deployment/web", "--replicas=9", "-n", namespace),
        ("create", "namespace", f"{namespace}-x"),
    ]
    for args in writes:
        result = server.kubectl(*args, kubeconfig=ro, check=False)
        assert result.returncode != 0, args
        assert "forbidden" in result.stderr.lower(), (args, result.stderr)
        assert 'User "flotilla-viewer" cannot' in result.stderr, (args, result.stderr)
    assert get_json(server, namespace, "cm/c")["data"] == {"a": "1"}
    assert "labels" not in get_json(server, namespace, "cm/c")["metadata"]
    assert jsonpath(server, namespace, "deploy/web", "{.spec.replicas}") == "3"
    assert names(server, namespace, "cm") == ["configmap/c"]


def _kubeconfig_with_user(server, tmp_path, user):
    with open(server.kubeconfig) as f:
        doc = yaml.safe_load(f)
    for entry in doc["users"]:
        entry["user"] = dict(user)
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


# A user with no credentials at all makes kubectl prompt for a password, so
# that case is tested over raw HTTPS (test_bad_input.py); basic auth is not
# accepted by the server, so it is as good as none.
@pytest.mark.parametrize("user", [{"username": "nobody", "password": "nothing"},
                                  {"token": "not-a-real-token"}], ids=["basic-auth", "bad-token"])
def test_unaccepted_credentials_are_unauthorized(server, tmp_path, user):
    kubeconfig = _kubeconfig_with_user(server, tmp_path, user)
    result = server.kubectl("get", "namespaces", kubeconfig=kubeconfig, check=False)
    assert result.returncode != 0
    assert "Unauthorized" in result.stderr, result.stderr
