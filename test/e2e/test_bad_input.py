"""Bad input straight over HTTPS, as no well-behaved client would send it: each
request gets a clear 4xx with a Kubernetes Status body, the server stays up,
and nothing is written."""

import json

import pytest
import requests

import objects

CONFIGMAPS = "/api/v1/namespaces/{ns}/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/{ns}/deployments"
JSON = "application/json"
MIB = 1024 * 1024


def _json(doc):
    return json.dumps(doc).encode()


def _wrong_type():
    d = objects.deployment("wrong-type")
    d["spec"]["replicas"] = "three"
    return _json(d)


def _unknown_field():
    c = objects.configmap("strict")
    c["dataz"] = {"a": "b"}
    return _json(c)


def _bad_label():
    return _json(objects.configmap("bad-label", labels={"tier": "not a valid value!"}))


CASES = [
    # id, method, path, content type, body, accepted codes, reason, text the Status must contain
    ("malformed-json", "POST", CONFIGMAPS, JSON,
     b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"', {400}, "BadRequest",
     None),
    ("empty-body", "POST", CONFIGMAPS, JSON, b"", {400}, "BadRequest", None),
    ("not-an-object", "POST", CONFIGMAPS, JSON, b'["a", "list"]', {400}, "BadRequest", None),
    ("wrong-field-type", "POST", DEPLOYMENTS, JSON, _wrong_type(), {400, 422}, None, "replicas"),
    ("invalid-name", "POST", CONFIGMAPS, JSON, _json(objects.configmap("Bad_Name")), {422},
     "Invalid", "metadata.name"),
    ("invalid-label-value", "POST", CONFIGMAPS, JSON, _bad_label(), {422}, "Invalid",
     "metadata.labels"),
    ("kind-mismatch", "POST", CONFIGMAPS, JSON, _json(objects.secret("s")), {400}, "BadRequest",
     None),
    ("strict-unknown-field", "POST", CONFIGMAPS + "?fieldValidation=Strict", JSON,
     _unknown_field(), {400}, "BadRequest", "dataz"),
    ("unknown-resource", "GET", "/api/v1/namespaces/{ns}/widgets", None, None, {404}, "NotFound",
     None),
    ("unknown-group", "GET", "/apis/widgets.example.com/v1/widgets", None, None, {404},
     "NotFound", None),
    ("name-mismatch", "PUT", CONFIGMAPS + "/existing", JSON,
     _json(objects.configmap("other")), {400}, "BadRequest", None),
    ("unsupported-patch-type", "PATCH", CONFIGMAPS + "/existing", "text/plain",
     b'{"data": {"colour": "red"}}', {415}, "UnsupportedMediaType", None),
    ("malformed-merge-patch", "PATCH", CONFIGMAPS + "/existing", "application/merge-patch+json",
     b'{"data": ', {400}, "BadRequest", None),
    ("json-patch-not-a-list", "PATCH", CONFIGMAPS + "/existing", "application/json-patch+json",
     b'{"op": "add"}', {400}, "BadRequest", None),
    ("json-patch-bad-path", "PATCH", CONFIGMAPS + "/existing", "application/json-patch+json",
     b'[{"op": "replace", "path": "/data/missing/deeper", "value": "x"}]', {400, 422}, None,
     None),
    ("merge-patch-wrong-type", "PATCH", CONFIGMAPS + "/existing", "application/merge-patch+json",
     b'{"data": "not-a-map"}', {400, 422}, None, "data"),
    ("invalid-update", "PUT", CONFIGMAPS + "/existing", JSON,
     _json(objects.configmap("existing", {"not a key!": "x"})), {422}, "Invalid", "data"),
]


def snapshot(raw, ns):
    """Names and resourceVersions of what the namespace holds."""
    state = {}
    for path in (CONFIGMAPS, DEPLOYMENTS):
        response = raw.get(path.format(ns=ns))
        assert response.status_code == 200, response.text
        state[path] = sorted((i["metadata"]["name"], i["metadata"]["resourceVersion"])
                             for i in response.json()["items"])
    return state


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_request_is_refused_cleanly(server, raw, namespace, case):
    _, method, path, content_type, body, codes, reason, text = case
    created = raw.post(CONFIGMAPS.format(ns=namespace), json=objects.configmap("existing"))
    assert created.status_code == 201, created.text
    before = snapshot(raw, namespace)

    headers = {"Content-Type": content_type} if content_type else {}
    response = raw.request(method, path.format(ns=namespace), data=body, headers=headers)

    assert response.status_code in codes, (response.status_code, response.text[:2000])
    status = response.json()
    assert status["kind"] == "Status" and status["apiVersion"] == "v1", status
    assert status["status"] == "Failure" and status["code"] == response.status_code, status
    assert status["message"], status
    if reason:
        assert status["reason"] == reason, status
    if text:
        assert text in json.dumps(status), status
    if reason == "Invalid":
        causes = status["details"]["causes"]
        assert any(text in c.get("field", "") for c in causes), causes

    assert server.running()
    assert raw.get("/readyz").text == "ok"
    assert snapshot(raw, namespace) == before, "a refused request wrote something"


@pytest.mark.parametrize("client", ["requests", "kubectl"])
def test_body_over_3mib_is_413(server, raw, namespace, tmp_path, client):
    # Both clients send the whole body before they read the answer (kubectl
    # reads an early answer only if the connection is still open), so the
    # server has to read on past the limit, or at least not reset the
    # connection, for the 413 to arrive.
    body = json.dumps(objects.configmap("huge", {"blob": "x" * (4 * MIB)}))
    if client == "requests":
        try:
            response = raw.post(CONFIGMAPS.format(ns=namespace), data=body,
                                headers={"Content-Type": JSON})
        except requests.ConnectionError as e:
            pytest.fail(f"the connection failed instead of answering 413: {e}")
        assert response.status_code == 413, response.text[:2000]
        status = response.json()
        assert status["kind"] == "Status" and status["reason"] == "RequestEntityTooLarge"
    else:
        path = tmp_path / "huge.json"
        path.write_text(body)
        result = server.kubectl("create", "-f", str(path), "-n", namespace, check=False)
        assert result.returncode != 0
        assert "Error from server (RequestEntityTooLarge)" in result.stderr, result.stderr
        assert "limit is 3145728" in result.stderr, result.stderr
    assert raw.get("/readyz").text == "ok"
    assert raw.get(f"{CONFIGMAPS.format(ns=namespace)}/huge").status_code == 404


def test_invalid_name_names_the_field_and_the_rule(raw, namespace):
    response = raw.post(CONFIGMAPS.format(ns=namespace), json=objects.configmap("Bad_Name"))
    status = response.json()
    assert response.status_code == 422
    assert status["details"]["name"] == "Bad_Name" and status["details"]["kind"] == "ConfigMap"
    cause = status["details"]["causes"][0]
    assert cause["field"] == "metadata.name" and cause["reason"] == "FieldValueInvalid"
    assert "RFC 1123" in cause["message"], cause


def test_unknown_fields_are_dropped_with_a_warning_unless_strict(raw, namespace):
    path = CONFIGMAPS.format(ns=namespace)
    for validation in ("Warn", "Ignore"):
        body = objects.configmap(f"lenient-{validation.lower()}")
        body["dataz"] = {"a": "b"}
        response = raw.post(path, params={"fieldValidation": validation}, json=body)
        assert response.status_code == 201, response.text
        assert "dataz" not in response.json(), f"{validation}: unknown fields are not stored"
        stored = raw.get(f"{path}/{body['metadata']['name']}").json()
        assert "dataz" not in stored, stored
        warning = response.headers.get("Warning", "")
        if validation == "Warn":
            assert 'unknown field \\"dataz\\"' in warning or 'unknown field "dataz"' in warning, (
                warning)
        else:
            assert "dataz" not in warning


def test_many_bad_requests_in_a_row_leave_the_server_serving(server, raw, namespace):
    path = CONFIGMAPS.format(ns=namespace)
    garbage = [b"{", b"}", b"null", b"\x00\xff\xfe", b'{"kind": 7}', b"[[[[[[[[[[", b'"str"',
               b'{"metadata": {"name": {"nested": true}}}', b"1e999999", b'{"a":' * 1000]
    for body in garbage:
        response = raw.post(path, data=body, headers={"Content-Type": JSON})
        assert 400 <= response.status_code < 500, (body[:40], response.status_code)
    assert server.running()
    assert raw.get(path).json()["items"] == []


# --- authentication and authorization over raw HTTPS ---------------------------------

def test_no_credentials_is_401_but_health_is_open(server, namespace):
    anonymous = server.raw(anonymous=True)
    response = anonymous.get(CONFIGMAPS.format(ns=namespace))
    assert response.status_code == 401
    status = response.json()
    assert status["kind"] == "Status" and status["reason"] == "Unauthorized"
    for path in ("/readyz", "/livez", "/healthz"):
        assert anonymous.get(path).text == "ok", path


def test_wrong_token_is_401(server, namespace):
    response = server.raw(token="wrong").get(CONFIGMAPS.format(ns=namespace))
    assert response.status_code == 401 and response.json()["reason"] == "Unauthorized"


def test_readonly_token_may_read_but_not_write(server, raw, namespace):
    raw.post(CONFIGMAPS.format(ns=namespace), json=objects.configmap("c"))
    viewer = server.raw(kubeconfig=server.readonly_kubeconfig)
    assert viewer.get(CONFIGMAPS.format(ns=namespace) + "/c").status_code == 200
    watch = viewer.get(CONFIGMAPS.format(ns=namespace),
                       params={"watch": "true", "timeoutSeconds": "1"})
    assert watch.status_code == 200 and '"ADDED"' in watch.text

    attempts = [
        ("POST", CONFIGMAPS.format(ns=namespace), objects.configmap("x"), JSON),
        ("PUT", CONFIGMAPS.format(ns=namespace) + "/c", objects.configmap("c", {"a": "b"}), JSON),
        ("PATCH", CONFIGMAPS.format(ns=namespace) + "/c", {"data": {"a": "b"}},
         "application/merge-patch+json"),
        ("DELETE", CONFIGMAPS.format(ns=namespace) + "/c", None, JSON),
    ]
    for method, path, body, content_type in attempts:
        response = viewer.request(method, path, data=json.dumps(body) if body else None,
                                  headers={"Content-Type": content_type})
        assert response.status_code == 403, (method, response.text)
        status = response.json()
        assert status["reason"] == "Forbidden" and "flotilla-viewer" in status["message"]
    assert raw.get(CONFIGMAPS.format(ns=namespace) + "/c").json()["data"] == {"colour": "blue"}
