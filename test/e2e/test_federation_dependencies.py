"""What a workload uses follows it, and the namespace's access rules reach
every member (docs/federation.md, "Propagation" and "Dependencies"):
objects created on `flotilla server` with the real kubectl, three
`flotilla member` clusters.

Covered: a Deployment placed in one cluster that mounts a ConfigMap and a
PersistentVolumeClaim has them there; the ConfigMap also where its own
selector places it and nowhere else, the claim (which nothing else
places) only there, bound, and `kubectl get pvc` on the federation shows it
Bound; moved to another cluster, both follow it, and the claim leaves the
first cluster only after the pods there that used it have gone.
ServiceAccounts, Roles and RoleBindings reach every member, where the
member's RBAC lets the bound user do what the Role allows and nothing
more; kube's 422 for a claim without storage and for a RoleBinding whose
roleRef changes.
"""

import json

from conftest import wait_for
from federation import FED_ARGS, MANAGED_BY, module_federation, plugin

CLUSTERS = {c: ({"name": c}, ["--nodes", "2", "--pod-startup", "300ms"])
            for c in ("a", "b", "c")}
SERVER_ARGS = FED_ARGS + ["--member-change-delay", "200ms"]
PREFERENCES = "federation.kubernetes.io/deployment-preferences"
SELECTOR = "federation.alpha.kubernetes.io/cluster-selector"
CM = "/api/v1/namespaces/{ns}/configmaps/{name}"
PVC = "/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}"

fed = module_federation("fed-deps", CLUSTERS, SERVER_ARGS)


def only_in(cluster):
    return json.dumps({"clusters": {cluster: {"weight": 1}}})


def database(cluster):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "db", "annotations": {PREFERENCES: only_in(cluster)}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"terminationGracePeriodSeconds": 1,
                                           "containers": [{"name": "db", "image": "postgres:16",
                                                           "envFrom": [{"configMapRef": {
                                                               "name": "settings"}}]}],
                                           "volumes": [{"name": "data", "persistentVolumeClaim": {
                                               "claimName": "data"}}]}}}}


def present(fed, c, path):
    return fed[c].get_json(path) is not None


def test_what_a_deployment_mounts_goes_where_it_runs(fed):
    ns = "deps"
    fed.create_namespace(ns)
    fed.create({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "annotations": {SELECTOR: json.dumps(
                    [{"key": "name", "operator": "In", "values": ["c"]}])}},
                "data": {"MODE": "primary"}}, ns)
    fed.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "1Gi"}}}}, ns)
    cm, pvc = CM.format(ns=ns, name="settings"), PVC.format(ns=ns, name="data")
    # Nothing uses the claim yet: it waits on the federation, as for its
    # first consumer.
    wait_for(lambda: present(fed, "c", cm), "the ConfigMap in c, its own placement")
    assert not any(present(fed, c, pvc) for c in CLUSTERS)
    assert fed.kubectl("get", "pvc", "data", "-n", ns, "-o",
                       "jsonpath={.status.phase}").stdout == "Pending"

    fed.create(database("b"), ns)
    fed.kubectl("rollout", "status", "deploy/db", "-n", ns, "--timeout=120s")
    wait_for(lambda: fed["b"].running_pods(ns, "app=db") == 1, "db running in b")
    # The member's kubelet started the pod only once its ConfigMap and its
    # bound claim were there, as a real kubelet does; the copy got the
    # member's default class.
    assert present(fed, "b", cm) and present(fed, "b", pvc)
    assert present(fed, "c", cm) and not present(fed, "c", pvc)
    assert not present(fed, "a", cm) and not present(fed, "a", pvc)
    copy = fed["b"].get_json(pvc)
    assert copy["metadata"]["labels"][MANAGED_BY] == "flotilla"
    assert copy["spec"]["storageClassName"] == "standard", copy["spec"]
    wait_for(lambda: fed.kubectl("get", "pvc", "data", "-n", ns, "-o",
                                 "jsonpath={.status.phase}").stdout == "Bound",
             "the federated claim Bound once its copy is")
    # (Its copies' volumes are theirs: the federated claim names none, so
    # kubectl prints no volume, capacity or modes, as for any claim without
    # a volumeName; the status has them.)
    claim = json.loads(fed.kubectl("get", "pvc", "data", "-n", ns, "-o", "json").stdout)
    assert claim["status"]["capacity"] == {"storage": "1Gi"}, claim["status"]
    assert claim["status"]["accessModes"] == ["ReadWriteOnce"], claim["status"]
    # `kubectl flotilla status` lists the claim by its copies, Bound ones ready.
    doc = json.loads(plugin(fed, "status", "-n", ns, "pvc/data", "-o", "json").stdout)
    [row] = doc["workloads"]
    assert row["kind"] == "PersistentVolumeClaim", row
    assert {c: (v["ready"], v["planned"]) for c, v in row["clusters"].items()} == {"b": (1, 1)}, row

    # Moved to a: they follow; the claim leaves b only once b's pod is gone.
    fed.apply(database("a"), ns)
    wait_for(lambda: fed["a"].running_pods(ns, "app=db") == 1, "db running in a")
    wait_for(lambda: present(fed, "a", cm) and present(fed, "a", pvc),
             "the ConfigMap and the claim in a")
    seen_in_b = []

    def claim_gone_from_b():
        # The claim first, then the pods: no new pod comes to b, so a pod
        # seen after the claim was found gone was there when it went. (The
        # other order can see the last pod, then the claim gone: both can
        # go between the two reads.)
        has_claim = present(fed, "b", pvc)
        seen_in_b.append((has_claim, len(fed["b"].pods(ns, "app=db"))))
        return not has_claim
    wait_for(claim_gone_from_b, lambda: f"the claim gone from b: {seen_in_b[-3:]}", timeout=90)
    # Never a pod in b (running or terminating) without its claim there.
    assert all(has_claim or pods == 0 for has_claim, pods in seen_in_b), seen_in_b
    wait_for(lambda: not present(fed, "b", cm), "the ConfigMap gone from b")
    assert present(fed, "c", cm) and not present(fed, "c", pvc)


def test_accounts_roles_and_bindings_reach_every_member(fed):
    ns = "access"
    fed.create_namespace(ns)
    fed.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "builder"},
                "automountServiceAccountToken": False}, ns)
    fed.kubectl("create", "role", "config-reader", "-n", ns, "--verb=get,list",
                "--resource=configmaps")
    fed.kubectl("create", "rolebinding", "ann-reads", "-n", ns, "--role=config-reader",
                "--user=ann", "--serviceaccount=" + ns + ":builder")
    path = "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/{kind}/{name}"
    for c in CLUSTERS:
        wait_for(lambda c=c: fed[c].get_json(path.format(ns=ns, kind="rolebindings",
                                                         name="ann-reads")) is not None,
                 f"the RoleBinding in {c}")
        sa = fed[c].get_json(f"/api/v1/namespaces/{ns}/serviceaccounts/builder")
        assert sa is not None and sa["automountServiceAccountToken"] is False
        assert fed[c].get_json(path.format(ns=ns, kind="roles", name="config-reader")) is not None
        # The member's RBAC acts on the copies.
        can = fed[c].kubectl("auth", "can-i", "list", "configmaps", "-n", ns, "--as", "ann",
                             check=False).stdout.strip()
        cannot = fed[c].kubectl("auth", "can-i", "delete", "configmaps", "-n", ns, "--as", "ann",
                                check=False).stdout.strip()
        assert (can, cannot) == ("yes", "no"), (c, can, cannot)

    # A roleRef does not change (kube's 422), here as in any cluster.
    binding = json.loads(fed.kubectl("get", "rolebinding", "ann-reads", "-n", ns,
                                     "-o", "json").stdout)
    binding["roleRef"]["name"] = "other"
    out = fed.kubectl("apply", "-f", "-", input=json.dumps(binding), check=False)
    assert out.returncode != 0 and "cannot change roleRef" in out.stderr, out.stderr

    # A claim needs an access mode and a size.
    out = fed.kubectl("create", "-n", ns, "-f", "-", check=False, input=json.dumps(
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "bad"},
         "spec": {"accessModes": ["ReadWriteOnce"]}}))
    assert out.returncode != 0
    assert "spec.resources[storage]: Required value" in out.stderr, out.stderr
