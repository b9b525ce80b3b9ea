"""The official Kubernetes Python client (python3-kubernetes) against a real
`flotilla server`: CRUD on every kind, list-then-watch, patches, the scale and
status subresources, optimistic concurrency and expired watches.

The suite runs twice: as the admin, and as a service account bound to the
`edit` ClusterRole with a token from `kubectl create token`, as a workload
inside a cluster would. What `edit` does not allow in Kubernetes either
(namespaces, Clusters, Leases, writing status) runs as the admin only, and says so."""

import base64
import json
import queue
import threading

import pytest
import yaml
from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException

import objects
from conftest import namespace_name, wait_for


IDENTITIES = ["admin", "edit-serviceaccount"]


@pytest.fixture(scope="module", params=IDENTITIES)
def identity(request):
    return request.param


def edit_serviceaccount_kubeconfig(server, directory):
    """A kubeconfig holding a token of service account default/python-suite,
    bound to `edit` in every namespace."""
    server.kubectl("create", "serviceaccount", "python-suite", "-n", "default")
    server.kubectl("create", "clusterrolebinding", "python-suite-edit", "--clusterrole=edit",
                   "--serviceaccount=default:python-suite")
    token = server.kubectl("create", "token", "python-suite", "-n", "default",
                           "--duration=2h").stdout.strip()
    with open(server.kubeconfig) as f:
        doc = yaml.safe_load(f)
    for entry in doc["users"]:
        entry["user"] = {"token": token}
    path = directory / "python-suite.kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    wait_for(lambda: server.kubectl("auth", "can-i", "create", "deployments", "-n", "default",
                                    kubeconfig=str(path), check=False).stdout.strip() == "yes",
             "the service account's binding to take effect")
    return str(path)


@pytest.fixture(scope="module")
def api(server, identity, tmp_path_factory):
    if identity == "admin":
        return server.api_client()
    path = edit_serviceaccount_kubeconfig(server, tmp_path_factory.mktemp("python-suite"))
    return server.api_client(kubeconfig=path)


def admin_only(identity, what):
    """Skips, visibly, what the `edit` role does not allow in Kubernetes."""
    if identity != "admin":
        pytest.skip(f"{what} is outside the edit role (as in Kubernetes): runs as the admin")


@pytest.fixture
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture
def apps(api):
    return client.AppsV1Api(api)


@pytest.fixture
def dyn(api, tmp_path):
    return dynamic.DynamicClient(api, cache_file=str(tmp_path / "discovery.json"))


def status_of(exc):
    """The Kubernetes Status body of an ApiException, as a dict."""
    body = json.loads(exc.body)
    assert body["kind"] == "Status" and body["status"] == "Failure", body
    assert body["code"] == exc.status, body
    return body


def expect_api_error(code, reason, fn, *args, **kwargs):
    with pytest.raises(ApiException) as info:
        fn(*args, **kwargs)
    assert info.value.status == code, info.value
    body = status_of(info.value)
    assert body["reason"] == reason, body
    return body


def rv(obj):
    return int(obj.metadata.resource_version)


# --- CRUD on every namespaced kind of the typed clients -------------------------------

class Kind:
    """How the typed client spells one kind's verbs, a minimal object of it and
    what the server must have filled in on create."""

    def __init__(self, api_class, suffix, make, check=lambda obj: None):
        self.api_class, self.suffix, self.make, self.check = api_class, suffix, make, check

    def ops(self, api):
        typed = self.api_class(api)
        return lambda verb: getattr(typed, f"{verb}_namespaced_{self.suffix}")


def _check_secret(s):
    assert s.data == {"password": base64.b64encode(b"hunter2").decode()}
    assert not s.string_data, "stringData is folded into data"


def _check_service(s):
    assert s.spec.type == "ClusterIP"
    assert s.spec.cluster_ip and s.spec.cluster_ip != "None", "a cluster IP is allocated"
    assert s.spec.cluster_i_ps == [s.spec.cluster_ip]
    assert s.spec.ports[0].protocol == "TCP" and s.spec.session_affinity == "None"


def _check_deployment(d):
    assert d.metadata.generation == 1
    assert d.spec.strategy.type == "RollingUpdate"
    assert d.spec.strategy.rolling_update.max_surge == "25%"
    assert d.spec.revision_history_limit == 10 and d.spec.progress_deadline_seconds == 600
    container = d.spec.template.spec.containers[0]
    assert container.image_pull_policy == "IfNotPresent"
    assert container.termination_message_path == "/dev/termination-log"
    assert d.spec.template.spec.restart_policy == "Always"


def _check_statefulset(s):
    assert s.spec.pod_management_policy == "OrderedReady"
    assert s.spec.update_strategy.type == "RollingUpdate"


def _check_configmap(c):
    assert c.data == {"colour": "blue"}


def _check_event(e):
    assert e.involved_object.name == "web" and e.reason == "Started"


def _check_generation(obj):
    assert obj.metadata.generation == 1


def _check_hpa_v1(h):
    assert h.spec.target_cpu_utilization_percentage == 50 and h.spec.max_replicas == 5


def _check_lease(lease):
    assert lease.spec.holder_identity == "flotilla-0"
    assert lease.spec.lease_duration_seconds == 15


KINDS = {
    "configmap": Kind(client.CoreV1Api, "config_map", lambda n, ns: objects.configmap(n),
                      _check_configmap),
    "secret": Kind(client.CoreV1Api, "secret", lambda n, ns: objects.secret(n), _check_secret),
    "service": Kind(client.CoreV1Api, "service", lambda n, ns: objects.service(n), _check_service),
    "event": Kind(client.CoreV1Api, "event", lambda n, ns: objects.event(n, ns, "web"),
                  _check_event),
    "serviceaccount": Kind(client.CoreV1Api, "service_account",
                           lambda n, ns: objects.serviceaccount(n)),
    "replicaset": Kind(client.AppsV1Api, "replica_set", lambda n, ns: objects.replicaset(n),
                       _check_generation),
    "deployment": Kind(client.AppsV1Api, "deployment", lambda n, ns: objects.deployment(n),
                       _check_deployment),
    "statefulset": Kind(client.AppsV1Api, "stateful_set", lambda n, ns: objects.statefulset(n),
                        _check_statefulset),
    "hpa-v1": Kind(client.AutoscalingV1Api, "horizontal_pod_autoscaler",
                   lambda n, ns: objects.hpa_v1(n), _check_hpa_v1),
    "lease": Kind(client.CoordinationV1Api, "lease", lambda n, ns: objects.lease(n),
                  _check_lease),
}


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
def test_crud(api, identity, namespace, kind):
    if kind.suffix == "lease":
        admin_only(identity, "coordination.k8s.io Leases")
    op = kind.ops(api)
    created = op("create")(namespace, kind.make("crud", namespace))
    assert created.metadata.name == "crud" and created.metadata.namespace == namespace
    assert created.metadata.uid and created.metadata.creation_timestamp
    kind.check(created)

    got = op("read")("crud", namespace)
    assert (got.metadata.uid, rv(got)) == (created.metadata.uid, rv(created))
    kind.check(got)

    listed = op("list")(namespace)
    assert [i.metadata.name for i in listed.items] == ["crud"]
    assert int(listed.metadata.resource_version) >= rv(created)

    got.metadata.labels = {"e2e": "replaced"}
    replaced = op("replace")("crud", namespace, got)
    assert replaced.metadata.labels == {"e2e": "replaced"}
    assert rv(replaced) > rv(created)

    patched = op("patch")("crud", namespace, {"metadata": {"annotations": {"e2e": "patched"}}})
    assert patched.metadata.annotations == {"e2e": "patched"}
    assert patched.metadata.labels == {"e2e": "replaced"}
    assert rv(patched) > rv(replaced)

    op("delete")("crud", namespace)
    expect_api_error(404, "NotFound", op("read"), "crud", namespace)
    assert op("list")(namespace).items == []


def test_create_in_missing_namespace_is_not_found(core):
    expect_api_error(404, "NotFound", core.create_namespaced_config_map,
                     "no-such-namespace", objects.configmap("c"))


def test_namespace_crud_and_lifecycle(core, identity, request):
    admin_only(identity, "Namespaces")
    name = namespace_name(request.node.name)
    created = core.create_namespace(objects.namespace(name, labels={"team": "e2e"}))
    assert created.status.phase == "Active"
    assert created.metadata.labels["kubernetes.io/metadata.name"] == name
    assert name in [n.metadata.name for n in core.list_namespace(label_selector="team=e2e").items]

    created.metadata.labels["team"] = "other"
    assert core.replace_namespace(name, created).metadata.labels["team"] == "other"
    assert core.patch_namespace(name, {"metadata": {"annotations": {"a": "b"}}}
                                ).metadata.annotations == {"a": "b"}

    core.create_namespaced_config_map(name, objects.configmap("inside"))
    core.create_namespaced_secret(name, objects.secret("inside"))
    core.delete_namespace(name)

    def gone():
        try:
            ns = core.read_namespace(name)
        except ApiException as e:
            return e.status == 404
        assert ns.status.phase == "Terminating", ns.status
        return False

    wait_for(gone, "the namespace to be deleted")
    expect_api_error(404, "NotFound", core.read_namespaced_config_map, "inside", name)
    expect_api_error(404, "NotFound", core.read_namespaced_secret, "inside", name)


def test_hpa_created_as_v1_reads_as_v2_and_back(api, dyn, namespace):
    v1 = client.AutoscalingV1Api(api)
    v2 = dyn.resources.get(api_version="autoscaling/v2", kind="HorizontalPodAutoscaler")
    v1.create_namespaced_horizontal_pod_autoscaler(namespace, objects.hpa_v1("web", utilization=60))

    as_v2 = v2.get(name="web", namespace=namespace)
    assert as_v2.apiVersion == "autoscaling/v2"
    metric = as_v2.spec.metrics[0]
    assert metric.type == "Resource" and metric.resource.name == "cpu"
    assert metric.resource.target.type == "Utilization"
    assert metric.resource.target.averageUtilization == 60

    body = as_v2.to_dict()
    body["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = 70
    body["spec"]["maxReplicas"] = 8
    v2.replace(body=body, namespace=namespace)

    back = v1.read_namespaced_horizontal_pod_autoscaler("web", namespace)
    assert back.spec.target_cpu_utilization_percentage == 70
    assert back.spec.max_replicas == 8


def test_hpa_v2_crud(dyn, namespace):
    v2 = dyn.resources.get(api_version="autoscaling/v2", kind="HorizontalPodAutoscaler")
    created = v2.create(body=objects.hpa_v2("web"), namespace=namespace)
    assert created.metadata.uid and created.spec.maxReplicas == 5
    assert [i.metadata.name for i in v2.get(namespace=namespace).items] == ["web"]
    patched = v2.patch(name="web", namespace=namespace, body={"spec": {"minReplicas": 2}},
                       content_type="application/merge-patch+json")
    assert patched.spec.minReplicas == 2 and patched.spec.maxReplicas == 5
    v2.delete(name="web", namespace=namespace)
    with pytest.raises(ApiException) as info:
        v2.get(name="web", namespace=namespace)
    assert info.value.status == 404


CLUSTERS = ("federation", "v1beta1", "clusters")


def test_cluster_crud_and_status(api, identity, request):
    admin_only(identity, "federation Clusters")
    co = client.CustomObjectsApi(api)
    name = namespace_name(request.node.name)
    created = co.create_cluster_custom_object(*CLUSTERS, objects.cluster(name))
    assert created["metadata"]["uid"] and "namespace" not in created["metadata"]
    assert created["metadata"]["generation"] == 1
    got = co.get_cluster_custom_object(*CLUSTERS, name)
    assert got["spec"]["secretRef"] == {"name": f"{name}-kubeconfig"}
    assert name in [c["metadata"]["name"] for c in co.list_cluster_custom_object(*CLUSTERS)["items"]]

    # The server's cluster controller probes the new Cluster and writes its
    # status meanwhile: read-modify-write again on a conflict, as a client
    # next to a controller does.
    def replace_labels():
        current = co.get_cluster_custom_object(*CLUSTERS, name)
        current["metadata"]["labels"] = {"region": "eu"}
        current["status"] = {"region": "ignored-on-the-main-resource"}
        try:
            return co.replace_cluster_custom_object(*CLUSTERS, name, current)
        except ApiException as e:
            if e.status == 409:
                return None
            raise

    replaced = wait_for(replace_labels, "a replace without a conflict")
    assert replaced["metadata"]["labels"] == {"region": "eu"}
    assert (replaced.get("status") or {}).get("region") != "ignored-on-the-main-resource"
    assert replaced["metadata"]["generation"] == 1, "labels are not spec"

    status = {"status": {"region": "eu-west", "zones": ["eu-west-1a"], "conditions": [
        {"type": "Ready", "status": "True", "lastProbeTime": "2024-01-01T00:00:00Z",
         "lastTransitionTime": "2024-01-01T00:00:00Z"}]}}
    updated = co.patch_cluster_custom_object_status(*CLUSTERS, name, status)
    assert updated["status"]["region"] == "eu-west"
    assert updated["status"]["conditions"][0]["type"] == "Ready"
    assert updated["status"]["zones"] == ["eu-west-1a"]
    assert co.get_cluster_custom_object_status(*CLUSTERS, name)["kind"] == "Cluster"
    spec_via_status = co.patch_cluster_custom_object_status(
        *CLUSTERS, name, {"spec": {"secretRef": {"name": "changed"}}})
    assert spec_via_status["spec"]["secretRef"] == {"name": f"{name}-kubeconfig"}

    co.delete_cluster_custom_object(*CLUSTERS, name)
    with pytest.raises(ApiException) as info:
        co.get_cluster_custom_object(*CLUSTERS, name)
    assert info.value.status == 404


# --- watch ------------------------------------------------------------------------------

class Watcher:
    """Streams watch events on a thread into a queue; stop() ends the stream."""

    def __init__(self, list_fn, *args, **kwargs):
        self.events = queue.Queue()
        self._watch = watch.Watch()
        self._thread = threading.Thread(target=self._run, args=(list_fn, args, kwargs),
                                        daemon=True)
        self._thread.start()

    def _run(self, list_fn, args, kwargs):
        try:
            for event in self._watch.stream(list_fn, *args, timeout_seconds=120, **kwargs):
                self.events.put(event)
        except Exception as exc:  # handed to the test thread
            self.events.put(exc)
        self.events.put(None)

    def take(self, n):
        got = []
        for _ in range(n):
            item = self.events.get(timeout=30)
            if isinstance(item, Exception):
                raise item
            assert item is not None, f"the watch ended after {got}"
            got.append(item)
        return got

    def stop(self, poke):
        """Stops after the next event, which `poke()` causes."""
        self._watch.stop()
        poke()
        self._thread.join(timeout=30)
        assert not self._thread.is_alive(), "the watch did not end"


def test_list_then_watch_sees_every_later_event_in_order(core, namespace):
    core.create_namespaced_config_map(namespace, objects.configmap("before"))
    listed = core.list_namespaced_config_map(namespace)
    list_rv = int(listed.metadata.resource_version)

    # Written before the watch starts: replayed from the server's history.
    core.create_namespaced_config_map(namespace, objects.configmap("a"))
    core.patch_namespaced_config_map("a", namespace, {"data": {"x": "1"}})
    watcher = Watcher(core.list_namespaced_config_map, namespace,
                      resource_version=listed.metadata.resource_version)
    events = watcher.take(2)
    # Written while it runs.
    core.create_namespaced_config_map(namespace, objects.configmap("b"))
    core.delete_namespaced_config_map("a", namespace)
    core.delete_namespaced_config_map("before", namespace)
    events += watcher.take(3)
    watcher.stop(lambda: core.create_namespaced_config_map(namespace, objects.configmap("z")))

    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "a"), ("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a"),
        ("DELETED", "before")]
    rvs = [rv(e["object"]) for e in events]
    assert rvs == sorted(set(rvs)) and rvs[0] > list_rv, rvs
    assert events[1]["object"].data == {"colour": "blue", "x": "1"}


def test_watch_with_label_selector(core, namespace):
    listed = core.list_namespaced_config_map(namespace, label_selector="tier=web")
    watcher = Watcher(core.list_namespaced_config_map, namespace, label_selector="tier=web",
                      resource_version=listed.metadata.resource_version)
    core.create_namespaced_config_map(namespace, objects.configmap("other"))
    core.create_namespaced_config_map(namespace, objects.configmap("web", labels={"tier": "web"}))
    core.patch_namespaced_config_map("web", namespace, {"metadata": {"labels": {"tier": "db"}}})
    events = watcher.take(2)
    watcher.stop(lambda: core.create_namespaced_config_map(
        namespace, objects.configmap("poke", labels={"tier": "web"})))
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "web"), ("DELETED", "web")], "leaving the selector is a DELETED event"


# --- patch, scale, status ------------------------------------------------------------------

def test_patch_strategic_json_and_merge(apps, dyn, namespace):
    two = [{"name": "a", "image": "busybox:1"}, {"name": "b", "image": "busybox:1"}]
    apps.create_namespaced_deployment(namespace, objects.deployment("web", containers=two))

    # A dict is sent as a strategic merge patch: containers merge by name.
    d = apps.patch_namespaced_deployment("web", namespace, {"spec": {"template": {"spec": {
        "containers": [{"name": "b", "image": "busybox:2"}]}}}})
    assert [(c.name, c.image) for c in d.spec.template.spec.containers] == [
        ("a", "busybox:1"), ("b", "busybox:2")]
    assert d.metadata.generation == 2

    # A list is sent as a JSON patch.
    d = apps.patch_namespaced_deployment("web", namespace, [
        {"op": "test", "path": "/spec/replicas", "value": 3},
        {"op": "replace", "path": "/spec/replicas", "value": 6}])
    assert d.spec.replicas == 6 and d.metadata.generation == 3

    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    d = deployments.patch(name="web", namespace=namespace,
                          content_type="application/merge-patch+json",
                          body={"metadata": {"labels": {"patched": "merge"}}})
    assert d.metadata.labels["patched"] == "merge"
    assert d.metadata.generation == 3, "metadata changes do not bump the generation"


def test_scale_subresource(apps, namespace):
    apps.create_namespaced_deployment(namespace, objects.deployment("web", replicas=2))
    scale = apps.read_namespaced_deployment_scale("web", namespace)
    assert scale.kind == "Scale" and scale.api_version == "autoscaling/v1"
    assert scale.spec.replicas == 2 and scale.status.selector == "app=web"

    scale = apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 4}})
    assert scale.spec.replicas == 4
    assert apps.read_namespaced_deployment("web", namespace).spec.replicas == 4

    apps.create_namespaced_stateful_set(namespace, objects.statefulset("db", replicas=1))
    body = apps.read_namespaced_stateful_set_scale("db", namespace)
    body.spec.replicas = 3
    apps.replace_namespaced_stateful_set_scale("db", namespace, body)
    assert apps.read_namespaced_stateful_set("db", namespace).spec.replicas == 3

    apps.create_namespaced_replica_set(namespace, objects.replicaset("rs", replicas=1))
    apps.patch_namespaced_replica_set_scale("rs", namespace, {"spec": {"replicas": 0}})
    assert apps.read_namespaced_replica_set("rs", namespace).spec.replicas == 0

    body = expect_api_error(422, "Invalid", apps.patch_namespaced_deployment_scale, "web",
                            namespace, {"spec": {"replicas": -1}})
    assert "spec.replicas" in json.dumps(body)
    assert apps.read_namespaced_deployment("web", namespace).spec.replicas == 4


def test_status_subresource(apps, identity, namespace):
    admin_only(identity, "Writing the status subresource (controllers' work)")
    apps.create_namespaced_deployment(namespace, objects.deployment("web"))
    d = apps.patch_namespaced_deployment_status("web", namespace, {"status": {
        "replicas": 3, "readyReplicas": 2, "observedGeneration": 1}})
    assert (d.status.replicas, d.status.ready_replicas) == (3, 2)

    d.status.ready_replicas = 0
    d.spec.replicas = 5
    d = apps.replace_namespaced_deployment("web", namespace, d)
    assert d.status.ready_replicas == 2, "the main resource ignores status"
    assert d.spec.replicas == 5

    labels = d.metadata.labels
    d.spec.replicas = 9
    d.status.ready_replicas = 3
    d.metadata.annotations = {**(d.metadata.annotations or {}), "example.com/note": "with status"}
    d.metadata.labels = {"moved": "yes"}
    d = apps.replace_namespaced_deployment_status("web", namespace, d)
    assert d.status.ready_replicas == 3
    assert d.spec.replicas == 5, "the status subresource ignores spec"
    assert d.metadata.annotations["example.com/note"] == "with status", \
        "as in Kubernetes, a built-in kind's status write takes its metadata"
    assert d.metadata.labels == labels, "as in Kubernetes, a Deployment's status keeps its labels"


# --- concurrency ------------------------------------------------------------------------------

def test_stale_update_conflicts(core, namespace):
    stale = core.create_namespaced_config_map(namespace, objects.configmap("c"))
    fresh = core.read_namespaced_config_map("c", namespace)
    fresh.data = {"colour": "red"}
    core.replace_namespaced_config_map("c", namespace, fresh)

    stale.data = {"colour": "green"}
    body = expect_api_error(409, "Conflict", core.replace_namespaced_config_map, "c", namespace,
                            stale)
    assert "the object has been modified" in body["message"]
    assert core.read_namespaced_config_map("c", namespace).data == {"colour": "red"}

    options = client.V1DeleteOptions(
        preconditions=client.V1Preconditions(resource_version=stale.metadata.resource_version))
    expect_api_error(409, "Conflict", core.delete_namespaced_config_map, "c", namespace,
                     body=options)
    assert core.read_namespaced_config_map("c", namespace).data == {"colour": "red"}


def test_create_existing_is_already_exists(core, namespace):
    core.create_namespaced_config_map(namespace, objects.configmap("c"))
    body = expect_api_error(409, "AlreadyExists", core.create_namespaced_config_map, namespace,
                            objects.configmap("c", {"other": "data"}))
    assert body["details"]["name"] == "c" and body["details"]["kind"] == "configmaps"
    assert core.read_namespaced_config_map("c", namespace).data == {"colour": "blue"}


def test_events_expire_after_the_event_ttl(server_factory):
    srv = server_factory(["--storage", "sqlite", "--event-ttl", "2s"]).start()
    core = client.CoreV1Api(srv.api_client())
    core.create_namespace(objects.namespace("ttl"))
    core.create_namespaced_config_map("ttl", objects.configmap("kept"))
    event = core.create_namespaced_event("ttl", client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="short-lived"),
        involved_object=client.V1ObjectReference(kind="ConfigMap", namespace="ttl", name="kept"),
        reason="Tested", message="gone in two seconds", type="Normal"))
    deleted = None
    for change in watch.Watch().stream(core.list_namespaced_event, "ttl",
                                       resource_version=event.metadata.resource_version,
                                       timeout_seconds=60):
        if change["type"] == "DELETED":
            deleted = change["object"]
            break
    assert deleted is not None and deleted.metadata.name == "short-lived"
    assert core.list_namespaced_event("ttl").items == []
    assert core.read_namespaced_config_map("kept", "ttl").metadata.name == "kept"
    metrics = srv.raw().get("/metrics").text
    assert 'apiserver_storage_objects{resource="events"} 0' in metrics, metrics
    assert 'apiserver_storage_objects{resource="configmaps"} 1' in metrics, metrics


def test_limited_lists_say_how_many_remain(core, namespace):
    for i in range(5):
        core.create_namespaced_config_map(namespace, objects.configmap(f"r{i}"))
    page = core.list_namespaced_config_map(namespace, limit=2)
    assert len(page.items) == 2 and page.metadata.remaining_item_count == 3
    rest = core.list_namespaced_config_map(namespace, limit=2, _continue=page.metadata._continue)
    assert rest.metadata.remaining_item_count == 1
    last = core.list_namespaced_config_map(namespace, limit=2, _continue=rest.metadata._continue)
    assert len(last.items) == 1 and last.metadata.remaining_item_count is None


def test_watch_from_compacted_resource_version_is_gone(server_factory):
    srv = server_factory(["--storage", "memory", "--watch-history", "10"]).start()
    core = client.CoreV1Api(srv.api_client())
    core.create_namespace(objects.namespace("history"))
    first = core.create_namespaced_config_map("history", objects.configmap("cm-0"))
    for i in range(1, 20):
        core.create_namespaced_config_map("history", objects.configmap(f"cm-{i}"))

    with pytest.raises(ApiException) as info:
        for _ in watch.Watch().stream(core.list_namespaced_config_map, "history",
                                      resource_version=first.metadata.resource_version,
                                      timeout_seconds=10):
            pass
    assert info.value.status == 410

    # What the client saw: an ERROR event carrying a 410 Status (or a plain 410).
    response = srv.raw().get("/api/v1/namespaces/history/configmaps", stream=True, params={
        "watch": "true", "resourceVersion": first.metadata.resource_version,
        "timeoutSeconds": "10"})
    with response:
        if response.status_code == 200:
            event = json.loads(next(response.iter_lines()))
            assert event["type"] == "ERROR", event
            status = event["object"]
        else:
            assert response.status_code == 410
            status = response.json()
    assert status["kind"] == "Status" and status["code"] == 410, status
    assert status["reason"] in ("Expired", "Gone"), status

    # A watch from a recent resourceVersion still works.
    recent = core.list_namespaced_config_map("history").metadata.resource_version
    watcher = Watcher(core.list_namespaced_config_map, "history", resource_version=recent)
    core.delete_namespaced_config_map("cm-0", "history")
    assert [(e["type"], e["object"].metadata.name) for e in watcher.take(1)] == [
        ("DELETED", "cm-0")]
    watcher.stop(lambda: core.delete_namespaced_config_map("cm-1", "history"))
