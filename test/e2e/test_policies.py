"""Propagation policies end to end (docs/policies.md): Karmada's
policy.karmada.io/v1alpha1 kinds served by `flotilla server` and placing
federated objects in three `flotilla member` clusters, driven with the real
kubectl.

The members: `on-prem` (provider on-prem, labelled location=on-prem),
`east` (provider aws) and `west` (provider gcp), both labelled
location=cloud. What the members run is read from the members themselves.

Covered: the kinds in discovery, `kubectl get pp,cpp,op,cop,frq`, `explain`,
printer columns, defaults, 422s with field paths and the Warning header for
fields kept but not acted on; seed 003's story (a ClusterPropagationPolicy
keeps privacy=sensitive workloads on premise, and labelling a running
Deployment moves it there); which policy wins (annotations, namespaced
before cluster, priority, preemption); Duplicated and static Weighted
replicas; a provider dropped from a policy's field selector moves what it
placed; deleting a policy gives the objects back their default placement;
conflictResolution and preserveResourcesOnDeletion; override policies on
member copies (images, a plaintext patch, labels, a document inside a
ConfigMap key), restored after a hand edit, and one that cannot apply;
cluster-affinity groups (on premise first, the cloud when it cannot hold
the workload); a StatefulSet and its HPA placed and overridden by policies;
propagateDeps; Cluster taints against a policy's
tolerations, with the cordon taint; spread constraints.
"""

import json
import time

import pytest

from conftest import namespace_name, table, wait_for
from federation import FED_ARGS, MANAGED_BY, module_federation, plugin

MEMBER_ARGS = ["--nodes", "1", "--node-cpu", "100", "--node-pods", "200",
               "--pod-startup", "200ms"]
# --recheck-delay: how soon a workload placed in a later cluster-affinity
# group looks again whether the first group has room.
SERVER_ARGS = FED_ARGS + ["--cluster-failure-threshold", "2", "--member-change-delay", "200ms",
                          "--recheck-delay", "2s"]
CLUSTERS = {
    "on-prem": ({"location": "on-prem"}, MEMBER_ARGS, ["--provider", "on-prem"]),
    "east": ({"location": "cloud"}, MEMBER_ARGS, ["--provider", "aws", "--region", "us-east"]),
    "west": ({"location": "cloud"}, MEMBER_ARGS, ["--provider", "gcp", "--region", "us-west"]),
}
CPP_ANNOTATION = "clusterpropagationpolicy.karmada.io/name"
PP_ANNOTATION = "propagationpolicy.karmada.io/name"
DEPLOY = "/apis/apps/v1/namespaces/{ns}/deployments/{name}"
CM = "/api/v1/namespaces/{ns}/configmaps/{name}"

fed = module_federation("fed-policies", CLUSTERS, SERVER_ARGS)


@pytest.fixture
def ns(request, fed):
    name = namespace_name(request.node.name)
    fed.create_namespace(name)
    yield name
    fed.kubectl("delete", "cpp", "--all", "--wait=false", check=False)
    fed.kubectl("delete", "deploy,cm,pp", "--all", "-n", name, "--wait=false", check=False)


def apply(fed, obj, ns=None):
    args = ["apply", "-f", "-"] + (["-n", ns] if ns else [])
    return fed.kubectl(*args, input=json.dumps(obj))


def cpp(name, selectors, placement=None, **spec):
    spec = dict(spec, resourceSelectors=selectors)
    if placement is not None:
        spec["placement"] = placement
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterPropagationPolicy",
            "metadata": {"name": name}, "spec": spec}


def pp(name, selectors, placement=None, **spec):
    policy = cpp(name, selectors, placement, **spec)
    policy["kind"] = "PropagationPolicy"
    return policy


def deployment(name, replicas, labels=None, annotations=None):
    meta = {"name": name, "labels": dict(labels or {}, app=name)}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.25",
                                                           "resources": {"requests": {"cpu": "10m"}}}]}}}}


def layout(fed, ns, name):
    """{cluster: spec.replicas of its local Deployment} (absent: 0)."""
    out = {}
    for c, m in fed.members.items():
        d = m.get_json(DEPLOY.format(ns=ns, name=name))
        out[c] = 0 if d is None else d["spec"]["replicas"]
    return out


def wait_layout(fed, ns, name, want, timeout=60):
    want = {c: want.get(c, 0) for c in fed.members}
    deadline = time.monotonic() + timeout
    while (seen := layout(fed, ns, name)) != want:
        if time.monotonic() > deadline:
            pytest.fail(f"deployment {ns}/{name}: wanted {want}, saw {seen}; annotations "
                        f"{annotations(fed, ns, name)}")
        time.sleep(0.1)


def deploy_selector(**fields):
    return dict({"apiVersion": "apps/v1", "kind": "Deployment"}, **fields)


def annotations(fed, ns, name, resource="deployment"):
    out = fed.kubectl("get", resource, name, "-n", ns, "-o", "json")
    return json.loads(out.stdout)["metadata"].get("annotations", {})


def test_the_kinds_are_served_with_short_names_columns_and_explain(fed, ns):
    out = fed.kubectl("api-resources", "--api-group", "policy.karmada.io")
    headers, rows = table(out.stdout)
    by_name = {r["NAME"]: r for r in rows}
    assert set(by_name) == {"propagationpolicies", "clusterpropagationpolicies", "overridepolicies",
                            "clusteroverridepolicies", "federatedresourcequotas"}
    assert by_name["propagationpolicies"]["SHORTNAMES"] == "pp"
    assert by_name["clusterpropagationpolicies"]["NAMESPACED"] == "false"
    apply(fed, pp("spread", [deploy_selector()]), ns)
    out = fed.kubectl("get", "pp,cpp,op,cop,frq", "-n", ns)
    assert "propagationpolicy.policy.karmada.io/spread" in out.stdout
    headers, rows = table(fed.kubectl("get", "pp", "-n", ns).stdout)
    assert headers == ["NAME", "CONFLICT-RESOLUTION", "PRIORITY", "AGE"]
    # The CRD's defaults, and the resource selector's namespace (Karmada's webhook).
    assert rows[0]["CONFLICT-RESOLUTION"] == "Abort" and rows[0]["PRIORITY"] == "0"
    stored = json.loads(fed.kubectl("get", "pp", "spread", "-n", ns, "-o", "json").stdout)
    assert stored["spec"]["preemption"] == "Never"
    assert stored["spec"]["resourceSelectors"][0]["namespace"] == ns
    explain = fed.kubectl("explain", "propagationpolicy.spec.placement.replicaScheduling")
    assert "replicaDivisionPreference" in explain.stdout
    assert "weightPreference" in explain.stdout
    # What a quota does not enforce is kept, with a Warning.
    quota = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "FederatedResourceQuota",
             "metadata": {"name": "q"}, "spec": {"overall": {"cpu": "10", "limits.cpu": "20"}}}
    out = fed.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(quota))
    assert "Warning: spec.overall[limits.cpu] is kept but not acted on" in out.stderr
    assert "cpu" not in out.stderr.replace("limits.cpu", "")


@pytest.mark.parametrize("spec,field", [
    ({"placement": {"replicaScheduling": {"replicaSchedulingType": "Divided"}}},
     "spec.placement.replicaScheduling.replicaDivisionPreference: Required value"),
    ({"placement": {"replicaScheduling": {"replicaDivisionPreference": "Weighted",
                                          "weightPreference": {"staticWeightList": [
                                              {"targetCluster": {"clusterNames": ["east"]},
                                               "weight": 0}]}}}},
     "spec.placement.replicaScheduling.weightPreference.staticWeightList[0].weight: Invalid value: 0"),
    ({"placement": {"clusterAffinity": {"fieldSelector": {"matchExpressions": [
        {"key": "cloud", "operator": "In", "values": ["aws"]}]}}}},
     "spec.placement.clusterAffinity.fieldSelector.matchExpressions[0].key: Unsupported value: \"cloud\""),
    ({"placement": {"clusterAffinity": {"labelSelector": {"matchLabels": {"a": "b c"}}}}},
     "spec.placement.clusterAffinity.labelSelector.matchLabels: Invalid value: \"b c\""),
    ({"priority": "high"}, "spec.priority"),
])
def test_bad_policies_are_refused_with_the_field(fed, ns, spec, field):
    policy = cpp("bad", [deploy_selector()], **spec)
    out = fed.kubectl("create", "-f", "-", input=json.dumps(policy), check=False)
    assert out.returncode != 0
    assert field in out.stderr, out.stderr
    assert fed.kubectl("get", "cpp", "bad", check=False).returncode != 0  # nothing stored


def test_bad_overrides_and_quotas_are_refused_with_the_field(fed, ns):
    op = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy",
          "metadata": {"name": "bad"},
          "spec": {"resourceSelectors": [deploy_selector()],
                   "overrideRules": [{"overriders": {
                       "plaintext": [{"path": "spec/replicas", "operator": "replace", "value": 1}],
                       "imageOverrider": [{"component": "Host", "operator": "replace",
                                           "value": "r"}]}}]}}
    out = fed.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(op), check=False)
    assert out.returncode != 0
    assert "spec.overrideRules[0].overriders.plaintext[0].path: Invalid value" in out.stderr
    assert ("spec.overrideRules[0].overriders.imageOverrider[0].component: Unsupported value: "
            "\"Host\"") in out.stderr
    frq = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "FederatedResourceQuota",
           "metadata": {"name": "bad"}, "spec": {"overall": {"cpu": "-1"}}}
    out = fed.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(frq), check=False)
    assert "spec.overall[cpu]: Invalid value: \"-1\": must be greater than or equal to 0" in out.stderr


def test_fields_kept_but_not_acted_on_are_warned(fed, ns):
    policy = pp("assoc", [deploy_selector()], association=True)
    out = apply(fed, policy, ns)
    assert "Warning: spec.association is kept but not acted on" in out.stderr
    stored = json.loads(fed.kubectl("get", "pp", "assoc", "-n", ns, "-o", "json").stdout)
    assert stored["spec"]["association"] is True


def test_privacy_sensitive_workloads_stay_on_premise_and_move_there_when_labelled(fed, ns):
    """Seed 003: "some [workloads] are privacy-sensitive, and should be
    automatically diverted to run in my secure, on-premise cluster(s)"."""
    apply(fed, cpp("privacy", [deploy_selector(labelSelector={"matchLabels": {"privacy": "sensitive"}})],
                   {"clusterAffinity": {"labelSelector": {"matchLabels": {"location": "on-prem"}}}}))
    apply(fed, deployment("ledger", 2, labels={"privacy": "sensitive"}), ns)
    apply(fed, deployment("shop", 3), ns)
    # Without replicaScheduling every selected cluster runs all replicas
    # (Karmada's Duplicated); what no policy selects spreads as before.
    wait_layout(fed, ns, "ledger", {"on-prem": 2})
    wait_layout(fed, ns, "shop", {"on-prem": 1, "east": 1, "west": 1})
    assert annotations(fed, ns, "ledger")[CPP_ANNOTATION] == "privacy"
    assert CPP_ANNOTATION not in annotations(fed, ns, "shop")
    event = fed.wait_event(ns, "ledger", "ApplyPolicySucceed", kind="Deployment")[0]
    assert event["message"] == "Apply policy(privacy) succeed"
    # The member copies do not carry the federation's record.
    local = fed["on-prem"].get_json(DEPLOY.format(ns=ns, name="ledger"))
    assert CPP_ANNOTATION not in local["metadata"].get("annotations", {})
    # The list of sensitive workloads changes: labelling one moves it.
    fed.kubectl("label", "deployment", "shop", "-n", ns, "privacy=sensitive")
    wait_layout(fed, ns, "shop", {"on-prem": 3})
    out = fed.kubectl("rollout", "status", f"deployment/shop", "-n", ns, "--timeout=60s")
    assert "successfully rolled out" in out.stdout
    # kubectl flotilla explain names the policy and why each cluster is in or out.
    out = plugin(fed, "explain", "deployment/shop", "-n", ns).stdout
    assert "Placed by:   ClusterPropagationPolicy privacy" in out, out
    verdicts = {c["name"]: c for c in json.loads(
        plugin(fed, "explain", "deployment/shop", "-n", ns, "-o", "json").stdout)["clusters"]}
    assert verdicts["on-prem"]["admitted"] and verdicts["on-prem"]["planned"] == 3, verdicts
    assert not verdicts["east"]["admitted"]
    assert verdicts["east"]["why"] == "its labels do not match labelSelector"
    # The policy counts what it places and hears of each object it took.
    wait_for(lambda: json.loads(fed.kubectl("get", "cpp", "privacy", "-o", "json").stdout)
             .get("status", {}).get("placedObjects") == 2, "status.placedObjects 2")
    wait_for(lambda: f"places Deployment {ns}/shop" in fed.kubectl("describe", "cpp", "privacy").stdout,
             "the Matched Event in kubectl describe")
    # The policy goes: the objects go back to their default placement
    # (every cluster, an even spread, running replicas left where they
    # are), so a scale-up reaches the cloud clusters.
    fed.kubectl("delete", "cpp", "privacy")
    wait_for(lambda: CPP_ANNOTATION not in annotations(fed, ns, "ledger"),
             "the policy's annotation removed")
    fed.kubectl("scale", "deployment", "ledger", "-n", ns, "--replicas=6")
    wait_for(lambda: (l := layout(fed, ns, "ledger"))["east"] > 0 and l["west"] > 0
             and sum(l.values()) == 6, "ledger scaled into the cloud clusters")


def test_which_policy_wins(fed, ns):
    apply(fed, cpp("everything-east", [deploy_selector()],
                   {"clusterAffinity": {"clusterNames": ["east"]}}))
    apply(fed, deployment("api", 1), ns)
    wait_layout(fed, ns, "api", {"east": 1})
    # A namespaced policy comes before a cluster policy, but the object is
    # bound to the cluster policy: without preemption it stays there.
    apply(fed, pp("api-west", [deploy_selector(name="api")],
                  {"clusterAffinity": {"clusterNames": ["west"]}}), ns)
    apply(fed, deployment("api", 2), ns)
    wait_layout(fed, ns, "api", {"east": 2})
    apply(fed, pp("api-west", [deploy_selector(name="api")],
                  {"clusterAffinity": {"clusterNames": ["west"]}}, preemption="Always"), ns)
    wait_layout(fed, ns, "api", {"west": 2})
    ann = annotations(fed, ns, "api")
    assert ann[PP_ANNOTATION] == "api-west" and CPP_ANNOTATION not in ann
    # A new object goes to the namespaced policy at once; among namespaced
    # ones the higher priority wins, then the closer selector.
    apply(fed, pp("all-onprem", [deploy_selector()],
                  {"clusterAffinity": {"clusterNames": ["on-prem"]}}, priority=5), ns)
    apply(fed, deployment("batch", 1), ns)
    wait_layout(fed, ns, "batch", {"on-prem": 1})
    apply(fed, pp("batch-east", [deploy_selector(name="batch")],
                  {"clusterAffinity": {"clusterNames": ["east"]}}, priority=5), ns)
    apply(fed, deployment("report", 1), ns)
    wait_layout(fed, ns, "report", {"on-prem": 1})
    # An object's own placement annotations come before every policy.
    apply(fed, deployment("pinned", 1, annotations={"federation.kubernetes.io/cluster": "west"}), ns)
    wait_layout(fed, ns, "pinned", {"west": 1})
    assert PP_ANNOTATION not in annotations(fed, ns, "pinned")


def test_weighted_replicas_and_a_provider_dropped(fed, ns):
    weighted = {"clusterAffinity": {"fieldSelector": {"matchExpressions": [
                    {"key": "provider", "operator": "In", "values": ["aws", "gcp", "on-prem"]}]}},
                "replicaScheduling": {"replicaSchedulingType": "Divided",
                                      "replicaDivisionPreference": "Weighted",
                                      "weightPreference": {"staticWeightList": [
                                          {"targetCluster": {"clusterNames": ["on-prem"]}, "weight": 2},
                                          {"targetCluster": {"labelSelector": {"matchLabels": {"location": "cloud"}}},
                                           "weight": 1}]}}}
    apply(fed, pp("weighted", [deploy_selector(name="web")], weighted), ns)
    apply(fed, deployment("web", 8), ns)
    wait_layout(fed, ns, "web", {"on-prem": 4, "east": 2, "west": 2})
    # "We no longer use cloud provider X": dropping aws from the policy
    # moves what it placed off the aws cluster (8 by 2:1 is 5.33:2.67; the
    # remainder goes to the heavier cluster, as in Karmada).
    weighted["clusterAffinity"]["fieldSelector"]["matchExpressions"][0]["values"] = ["gcp", "on-prem"]
    apply(fed, pp("weighted", [deploy_selector(name="web")], weighted), ns)
    wait_layout(fed, ns, "web", {"on-prem": 6, "west": 2})


def test_plain_objects_follow_a_policy_too(fed, ns):
    apply(fed, cpp("no-aws", [{"apiVersion": "v1", "kind": "ConfigMap"}],
                   {"clusterAffinity": {"fieldSelector": {"matchExpressions": [
                       {"key": "provider", "operator": "NotIn", "values": ["aws"]}]}}}))
    apply(fed, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                "data": {"k": "v"}}, ns)
    path = CM.format(ns=ns, name="settings")
    wait_for(lambda: fed["on-prem"].get_json(path) and fed["west"].get_json(path),
             "the ConfigMap in on-prem and west")
    assert fed["east"].get_json(path) is None


def configmap(name, value):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"k": value}}


def test_conflict_resolution_and_preserved_copies(fed, ns):
    """A member object of the same name the federation did not create is
    left alone under Abort (the default) and taken over under Overwrite;
    preserveResourcesOnDeletion keeps the copies when the object goes."""
    for m in fed.members.values():
        m.create_namespace(ns)
    path = CM.format(ns=ns, name="shared")
    fed["east"].kubectl("create", "configmap", "shared", "-n", ns, "--from-literal=k=local")
    select = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "shared"}]
    apply(fed, pp("abort", select), ns)
    apply(fed, configmap("shared", "federated"), ns)
    wait_for(lambda: (fed["west"].get_json(path) or {}).get("data", {}).get("k") == "federated",
             "the copy in west")
    wait_for(lambda: [e for e in fed.events(ns, "shared", kind="ConfigMap")
                      if e["reason"] == "NotManagedInCluster"], "NotManagedInCluster")
    assert fed["east"].get_json(path)["data"]["k"] == "local"
    apply(fed, pp("abort", select, conflictResolution="Overwrite"), ns)
    wait_for(lambda: fed["east"].get_json(path)["data"]["k"] == "federated",
             "the member's object taken over")
    assert fed["east"].get_json(path)["metadata"]["labels"][MANAGED_BY] == "flotilla"
    # Kept on deletion: the federation's object goes, the copies stay.
    apply(fed, pp("abort", select, conflictResolution="Overwrite",
                  preserveResourcesOnDeletion=True), ns)
    fed.kubectl("delete", "configmap", "shared", "-n", ns)
    wait_for(lambda: fed.kubectl("get", "configmap", "shared", "-n", ns,
                                 check=False).returncode != 0, "the federated ConfigMap gone")
    for m in fed.members.values():
        assert m.get_json(path)["data"]["k"] == "federated", m.name


def cop(name, selectors, rules):
    return {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "ClusterOverridePolicy",
            "metadata": {"name": name},
            "spec": {"resourceSelectors": selectors, "overrideRules": rules}}


def replicaset(name, replicas, image):
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": image}]}}}}


def test_overrides_change_member_copies_only(fed, ns):
    """An override policy varies the copies per cluster: the cloud clusters
    pull from a mirror registry, east gets its own setting; the
    federation's object stays as written, a copy edited by hand comes back
    overridden, an override that cannot apply leaves the copy alone."""
    fed.kubectl("delete", "cop", "--all", check=False)
    cloud = {"labelSelector": {"matchLabels": {"location": "cloud"}}}
    apply(fed, cop("mirror", [{"apiVersion": "apps/v1", "kind": "ReplicaSet"}],
                   [{"targetCluster": cloud, "overriders": {"imageOverrider": [
                       {"component": "Registry", "operator": "replace", "value": "mirror.example.com"}]}}]))
    apply(fed, cop("east-settings", [{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"}],
                   [{"targetCluster": {"clusterNames": ["east"]}, "overriders": {
                       "plaintext": [{"path": "/data/k", "operator": "replace", "value": "east"}],
                       "labelsOverrider": [{"operator": "add", "value": {"tier": "east"}}],
                       "fieldOverrider": [{"fieldPath": "/data/app.json", "json": [
                           {"subPath": "/db", "operator": "replace", "value": "east.db"}]}]}}]))
    try:
        apply(fed, replicaset("api", 3, "docker.io/library/nginx:1.25"), ns)
        apply(fed, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                    "data": {"k": "v", "app.json": '{"db": "main.db"}'}}, ns)
        rs = "/apis/apps/v1/namespaces/{ns}/replicasets/api".format(ns=ns)

        def image(member):
            local = fed[member].get_json(rs)
            return local and local["spec"]["template"]["spec"]["containers"][0]["image"]
        wait_for(lambda: image("east") == "mirror.example.com/library/nginx:1.25"
                 and image("west") == "mirror.example.com/library/nginx:1.25"
                 and image("on-prem") == "docker.io/library/nginx:1.25", "images overridden in the clouds")
        wait_for(lambda: (fed.get_rs(ns, "api") or {}).get("status", {}).get("readyReplicas") == 3,
                 "the federated ReplicaSet ready")
        assert fed.get_rs(ns, "api")["spec"]["template"]["spec"]["containers"][0]["image"] == \
            "docker.io/library/nginx:1.25"
        applied = json.loads(fed["east"].get_json(rs)["metadata"]["annotations"]
                             ["policy.karmada.io/applied-cluster-overrides"])
        assert [a["policyName"] for a in applied] == ["mirror"]

        path = CM.format(ns=ns, name="settings")

        def east_copy():
            return fed["east"].get_json(path) or {}
        wait_for(lambda: east_copy().get("data", {}).get("k") == "east", "east's own setting")
        assert east_copy()["metadata"]["labels"]["tier"] == "east"
        assert json.loads(east_copy()["data"]["app.json"]) == {"db": "east.db"}
        assert fed["west"].get_json(path)["data"] == {"k": "v", "app.json": '{"db": "main.db"}'}
        federated = json.loads(fed.kubectl("get", "cm", "settings", "-n", ns, "-o", "json").stdout)
        assert federated["data"]["k"] == "v"
        # A hand edit in the member comes back as the override says.
        fed["east"].kubectl("patch", "configmap", "settings", "-n", ns, "--type=merge",
                            "-p", '{"data":{"k":"by-hand"}}')
        wait_for(lambda: east_copy().get("data", {}).get("k") == "east", "the override restored")
        # An override that cannot apply: the copy is left as it was.
        apply(fed, cop("east-settings", [{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"}],
                       [{"targetCluster": {"clusterNames": ["east"]}, "overriders": {
                           "plaintext": [{"path": "/data/absent", "operator": "remove"}]}}]))
        fed.kubectl("patch", "configmap", "settings", "-n", ns, "--type=merge", "-p", '{"data":{"k":"v2"}}')
        wait_for(lambda: (fed["west"].get_json(path) or {}).get("data", {}).get("k") == "v2",
                 "west updated")
        wait_for(lambda: [e for e in fed.events(ns, "settings", kind="ConfigMap")
                          if e["reason"] == "ApplyOverridePolicyFailed"
                          and "ClusterOverridePolicy east-settings" in e["message"]],
                 "ApplyOverridePolicyFailed")
        assert east_copy()["data"]["k"] == "east"
        # The policy says so too: its status lists the copy, an Event on it.
        def failures():
            cop_obj = json.loads(fed.kubectl("get", "cop", "east-settings", "-o", "json").stdout)
            return cop_obj.get("status", {}).get("failures")
        wait_for(lambda: failures() and failures()[0]["object"] == f"ConfigMap {ns}/settings",
                 "status.failures of the override policy")
        assert [(f["cluster"], "/data/absent" in f["message"]) for f in failures()] == [("east", True)]
        assert "ApplyOverridePolicyFailed" in fed.kubectl("describe", "cop", "east-settings").stdout
        # Fixed: the copy takes the overrides again and the failure goes.
        apply(fed, cop("east-settings", [{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"}],
                       [{"targetCluster": {"clusterNames": ["east"]}, "overriders": {
                           "plaintext": [{"path": "/data/k", "operator": "replace", "value": "east2"}]}}]))
        wait_for(lambda: east_copy().get("data", {}).get("k") == "east2", "the fixed override applied")
        wait_for(lambda: failures() == [], "status.failures empty")
    finally:
        fed.kubectl("delete", "cop", "--all", check=False)


def test_the_first_affinity_group_that_holds_the_workload(fed, ns):
    """placement.clusterAffinities: on premise first; when on-prem cannot
    hold the workload, the cloud group takes it whole (make-before-break),
    and it comes back when on-prem can again."""
    apply(fed, cpp("onprem-then-cloud", [deploy_selector(name="elastic")],
                   {"clusterAffinities": [
                       {"affinityName": "on-prem", "clusterNames": ["on-prem"]},
                       {"affinityName": "cloud",
                        "labelSelector": {"matchLabels": {"location": "cloud"}}}],
                    "replicaScheduling": {"replicaSchedulingType": "Divided",
                                          "replicaDivisionPreference": "Weighted",
                                          "weightPreference": {"staticWeightList": [
                                              {"targetCluster": {}, "weight": 1}]}}}))
    big = deployment("elastic", 2)
    # 30 CPUs a pod: a member's node of 100 CPUs holds 3.
    big["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "30"
    apply(fed, big, ns)
    wait_layout(fed, ns, "elastic", {"on-prem": 2})
    fed.kubectl("scale", "deployment", "elastic", "-n", ns, "--replicas=5")
    # Even weights: 3 and 2, the planner's tie-break says which has 3.
    wait_for(lambda: (l := layout(fed, ns, "elastic"))["on-prem"] == 0
             and sorted([l["east"], l["west"]]) == [2, 3], "elastic moved to the cloud group", 90)
    fed.kubectl("scale", "deployment", "elastic", "-n", ns, "--replicas=2")
    wait_layout(fed, ns, "elastic", {"on-prem": 2}, timeout=90)


def test_overridden_deployments_roll_out_as_usual(fed, ns):
    """A registry mirror for the cloud clusters' Deployments: the template
    each cloud cluster runs is the overridden one, `kubectl rollout status`
    finishes, a new image rolls out cluster by cluster with the override
    kept, and a change of the override rolls out too."""
    fed.kubectl("delete", "cop", "--all", check=False)
    cloud = {"labelSelector": {"matchLabels": {"location": "cloud"}}}

    def mirror(registry):
        return cop("mirror", [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "front"}],
                   [{"targetCluster": cloud, "overriders": {"imageOverrider": [
                       {"component": "Registry", "operator": "replace", "value": registry}]}}])
    apply(fed, mirror("mirror.example.com"))
    try:
        apply(fed, deployment("front", 3), ns)
        path = DEPLOY.format(ns=ns, name="front")

        def images():
            out = {}
            for c, m in fed.members.items():
                d = m.get_json(path)
                out[c] = d and d["spec"]["template"]["spec"]["containers"][0]["image"]
            return out

        def wait_images(on_prem, cloud_image):
            want = {"on-prem": on_prem, "east": cloud_image, "west": cloud_image}
            wait_for(lambda: images() == want, f"images {want}", 60)

        wait_images("nginx:1.25", "mirror.example.com/nginx:1.25")
        # kubectl describe says which overrides change which cluster's copy.
        wait_for(lambda: "federation.kubernetes.io/overrides" in annotations(fed, ns, "front"),
                 "the overrides annotation " + json.dumps(annotations(fed, ns, "front")))
        assert json.loads(annotations(fed, ns, "front")["federation.kubernetes.io/overrides"]) == {
            "east": ["ClusterOverridePolicy mirror"], "west": ["ClusterOverridePolicy mirror"]}
        assert "ClusterOverridePolicy mirror" in fed.kubectl("describe", "deploy", "front", "-n", ns).stdout
        explained = json.loads(plugin(fed, "explain", "deploy/front", "-n", ns, "-o", "json").stdout)
        assert {c["name"]: c["overrides"] for c in explained["clusters"]} == {
            "on-prem": [], "east": ["ClusterOverridePolicy mirror"],
            "west": ["ClusterOverridePolicy mirror"]}
        rollout = ["rollout", "status", "deployment/front", "-n", ns, "--timeout=90s"]
        assert "successfully rolled out" in fed.kubectl(*rollout).stdout
        fed.kubectl("set", "image", "deployment/front", "-n", ns, "c=nginx:1.27")
        assert "successfully rolled out" in fed.kubectl(*rollout).stdout
        wait_images("nginx:1.27", "mirror.example.com/nginx:1.27")
        federated = json.loads(fed.kubectl("get", "deploy", "front", "-n", ns, "-o", "json").stdout)
        assert federated["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
        assert federated["status"]["updatedReplicas"] == 3
        apply(fed, mirror("mirror2.example.com"))
        wait_images("nginx:1.27", "mirror2.example.com/nginx:1.27")
        assert "successfully rolled out" in fed.kubectl(*rollout).stdout
    finally:
        fed.kubectl("delete", "cop", "--all", check=False)


def test_statefulsets_and_hpas_follow_a_policy(fed, ns):
    """One policy for a StatefulSet and its HPA: its affinity and static
    weights place the local StatefulSets (named <name>-<cluster>), an image
    override for the cloud is in east's copy only, `kubectl rollout status`
    finishes, and the HPA's local copies share its bounds over the same
    clusters."""
    fed.kubectl("delete", "cop", "--all", check=False)
    selectors = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "store"},
                 {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "name": "store"}]
    apply(fed, cpp("stores", selectors, {
        "clusterAffinity": {"clusterNames": ["on-prem", "east"]},
        "replicaScheduling": {"replicaSchedulingType": "Divided",
                              "replicaDivisionPreference": "Weighted",
                              "weightPreference": {"staticWeightList": [
                                  {"targetCluster": {"clusterNames": ["on-prem"]}, "weight": 1},
                                  {"targetCluster": {"clusterNames": ["east"]}, "weight": 2}]}}}))
    apply(fed, cop("mirror", [{"apiVersion": "apps/v1", "kind": "StatefulSet"}],
                   [{"targetCluster": {"labelSelector": {"matchLabels": {"location": "cloud"}}},
                     "overriders": {"imageOverrider": [{"component": "Registry", "operator": "replace",
                                                        "value": "mirror.example.com"}]}}]))
    try:
        apply(fed, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "store"},
                    "spec": {"clusterIP": "None", "selector": {"app": "store"},
                             "ports": [{"port": 80}]}}, ns)
        apply(fed, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "store"},
                    "spec": {"serviceName": "store", "replicas": 3,
                             "selector": {"matchLabels": {"app": "store"}},
                             "template": {"metadata": {"labels": {"app": "store"}},
                                          "spec": {"containers": [{"name": "c", "image": "etcd:3.5"}]}}}},
                 ns)
        path = "/apis/apps/v1/namespaces/{ns}/statefulsets/store-{c}"

        def local(c):
            s = fed[c].get_json(path.format(ns=ns, c=c)) or {}
            return (s.get("spec", {}).get("replicas"),
                    s and s["spec"]["template"]["spec"]["containers"][0]["image"])
        want = {"on-prem": (1, "etcd:3.5"), "east": (2, "mirror.example.com/etcd:3.5"),
                "west": (None, {})}
        wait_for(lambda: {c: local(c) for c in fed.members} == want, f"local StatefulSets {want}", 60)
        assert annotations(fed, ns, "store", "sts")[CPP_ANNOTATION] == "stores"
        out = fed.kubectl("rollout", "status", "statefulset/store", "-n", ns, "--timeout=90s")
        assert "complete" in out.stdout or "rolling update complete" in out.stdout, out.stdout
        apply(fed, {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                    "metadata": {"name": "store"},
                    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet",
                                                "name": "store"},
                             "minReplicas": 2, "maxReplicas": 6,
                             "metrics": [{"type": "Resource", "resource": {
                                 "name": "cpu", "target": {"type": "Utilization",
                                                           "averageUtilization": 50}}}]}}, ns)
        hpa = "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers/store".format(ns=ns)

        def bounds(c):
            h = fed[c].get_json(hpa)
            return h and (h["spec"]["minReplicas"], h["spec"]["maxReplicas"])
        wait_for(lambda: bounds("on-prem") == (1, 3) and bounds("east") == (1, 3)
                 and bounds("west") is None, "the HPA shared over on-prem and east", 60)
    finally:
        fed.kubectl("delete", "cop", "--all", check=False)
        fed.kubectl("delete", "hpa,sts,svc", "--all", "-n", ns, "--wait=false", check=False)


def test_propagate_deps_takes_what_a_deployment_uses_where_it_goes(fed, ns):
    """propagateDeps: true: the ConfigMap a Deployment's pods read goes to
    every cluster the Deployment goes to, beyond its own placement, and
    leaves when the policy no longer says so."""
    apply(fed, pp("settings-on-prem", [{"apiVersion": "v1", "kind": "ConfigMap",
                                        "name": "app-settings"}],
                  {"clusterAffinity": {"clusterNames": ["on-prem"]}}), ns)
    apply(fed, configmap("app-settings", "v"), ns)
    web = deployment("web", 1)
    web["spec"]["template"]["spec"]["containers"][0]["envFrom"] = [
        {"configMapRef": {"name": "app-settings"}}]
    apply(fed, web, ns)
    placement = {"clusterAffinity": {"clusterNames": ["on-prem", "west"]}}
    apply(fed, pp("web", [deploy_selector(name="web")], placement, propagateDeps=True), ns)
    wait_layout(fed, ns, "web", {"on-prem": 1, "west": 1})
    path = CM.format(ns=ns, name="app-settings")
    wait_for(lambda: fed["on-prem"].get_json(path) and fed["west"].get_json(path),
             "the ConfigMap where the Deployment runs")
    assert fed["east"].get_json(path) is None
    # Without propagateDeps it is placed by its own policy alone again.
    apply(fed, pp("web", [deploy_selector(name="web")], placement, propagateDeps=False), ns)
    wait_for(lambda: fed["west"].get_json(path) is None, "the ConfigMap gone from west")
    assert fed["on-prem"].get_json(path) is not None


def set_taints(fed, cluster, taints):
    fed.kubectl("patch", "clusters.federation", cluster, "--type", "merge",
                "-p", json.dumps({"spec": {"taints": taints}}))


def test_cluster_taints_keep_away_what_does_not_tolerate_them(fed, ns):
    """A Cluster's spec.taints against a policy's clusterTolerations: an
    untolerated NoSchedule taint keeps new copies out, a toleration lets
    them in, an untolerated NoExecute taint takes replicas away; a cordoned
    cluster carries Karmada's unschedulable taint."""
    everywhere = lambda tolerations: pp(  # noqa: E731
        "everywhere", [deploy_selector()], {"clusterTolerations": tolerations})
    try:
        apply(fed, everywhere([]), ns)
        apply(fed, deployment("probe", 1), ns)
        wait_layout(fed, ns, "probe", {"on-prem": 1, "east": 1, "west": 1})
        set_taints(fed, "east", [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
        # What east holds stays, it gets no more: when the probe's scale
        # shows that, the federation has seen the taint.
        fed.kubectl("scale", "deployment", "probe", "-n", ns, "--replicas=2")
        wait_layout(fed, ns, "probe", {"on-prem": 2, "east": 1, "west": 2})
        apply(fed, deployment("web", 1), ns)
        wait_layout(fed, ns, "web", {"on-prem": 1, "west": 1})
        apply(fed, everywhere([{"key": "dedicated", "operator": "Equal", "value": "gpu",
                                "effect": "NoSchedule"}]), ns)
        wait_layout(fed, ns, "web", {"on-prem": 1, "east": 1, "west": 1})
        # NoExecute on west: what is there leaves (the others run it).
        set_taints(fed, "west", [{"key": "maintenance", "effect": "NoExecute"}])
        wait_layout(fed, ns, "web", {"on-prem": 1, "east": 1})
        set_taints(fed, "west", None)
        wait_layout(fed, ns, "web", {"on-prem": 1, "east": 1, "west": 1})

        plugin(fed, "cordon", "west")
        taints = json.loads(fed.kubectl("get", "clusters.federation", "west", "-o",
                                        "jsonpath={.spec.taints}").stdout)
        assert taints == [{"key": "cluster.karmada.io/unschedulable", "effect": "NoSchedule"}]
        fed.kubectl("scale", "deployment", "probe", "-n", ns, "--replicas=3")
        wait_layout(fed, ns, "probe", {"on-prem": 3, "east": 3, "west": 2})  # cordon seen
        apply(fed, deployment("late", 1), ns)
        wait_layout(fed, ns, "late", {"on-prem": 1, "east": 1})
        # Tolerating the cordon taint lets it in all the same.
        apply(fed, everywhere([{"key": "dedicated", "operator": "Exists"},
                               {"key": "cluster.karmada.io/unschedulable", "operator": "Exists"}]),
              ns)
        wait_layout(fed, ns, "late", {"on-prem": 1, "east": 1, "west": 1})
    finally:
        plugin(fed, "uncordon", "west", check=False)
        set_taints(fed, "east", None)
        set_taints(fed, "west", None)
    assert fed.kubectl("get", "clusters.federation", "west", "-o",
                       "jsonpath={.spec.taints}").stdout == ""


def test_spread_constraints_choose_the_clusters(fed, ns):
    """spreadConstraints: two providers of the three, one cluster each;
    asking for more providers than there are places nothing new and says
    why."""
    apply(fed, pp("two-providers", [deploy_selector(name="web")], {"spreadConstraints": [
        {"spreadByField": "provider", "minGroups": 2, "maxGroups": 2},
        {"spreadByField": "cluster", "minGroups": 2, "maxGroups": 2}]}), ns)
    apply(fed, deployment("web", 1), ns)
    # Without room to tell them apart (Duplicated), by name: east, on-prem.
    wait_layout(fed, ns, "web", {"east": 1, "on-prem": 1})
    apply(fed, pp("four-providers", [deploy_selector(name="wide")], {"spreadConstraints": [
        {"spreadByField": "provider", "minGroups": 4, "maxGroups": 4},
        {"spreadByField": "cluster", "minGroups": 4, "maxGroups": 4}]}), ns)
    apply(fed, deployment("wide", 1), ns)
    wait_for(lambda: "SpreadConstraintsUnsatisfied" in fed.kubectl(
        "get", "events", "-n", ns, "--field-selector", "involvedObject.name=wide").stdout,
        "a Warning saying the constraints cannot be met")
    assert layout(fed, ns, "wide") == {c: 0 for c in fed.members}


def test_a_policy_placed_divided_workload_fails_over_and_comes_back(fed, ns):
    """A Deployment divided by a policy's weights leaves a cluster that stops
    answering, to the clusters the policy admits, and gets its share back
    when the cluster returns."""
    apply(fed, pp("even", [deploy_selector(name="web")], {
        "clusterAffinity": {"labelSelector": {"matchLabels": {"location": "cloud"}}},
        "replicaScheduling": {"replicaSchedulingType": "Divided",
                              "replicaDivisionPreference": "Weighted",
                              "weightPreference": {"staticWeightList": [
                                  {"targetCluster": {}, "weight": 1}]}}}), ns)
    apply(fed, deployment("web", 4), ns)
    wait_layout(fed, ns, "web", {"east": 2, "west": 2})
    try:
        fed["west"].sigstop()
        fed.wait_not_ready("west")
        # Only east is left of what the policy admits (on-prem is not).
        wait_for(lambda: fed["east"].get_json(DEPLOY.format(ns=ns, name="web"))["spec"]["replicas"]
                 == 4, "west's replicas in east", 90)
        assert fed["on-prem"].get_json(DEPLOY.format(ns=ns, name="web")) is None
    finally:
        fed["west"].sigcont()
    fed.wait_ready("west")
    wait_layout(fed, ns, "web", {"east": 2, "west": 2}, timeout=90)


def copies(fed, ns, names):
    """What the federation writes of each member copy: {(cluster, path):
    (generation, labels, annotations)}; absent copies left out."""
    out = {}
    for cluster, member in fed.members.items():
        for path in names:
            obj = member.get_json(path.format(ns=ns))
            if obj is not None:
                meta = obj["metadata"]
                out[(cluster, path)] = (meta.get("generation"), meta.get("labels"),
                                        meta.get("annotations"))
    return out


def test_a_restarted_federation_with_policies_changes_nothing(fed, ns):
    """Policies, overrides and propagateDeps in place: restarting the
    federation rewrites no member copy and moves nothing."""
    apply(fed, pp("settings", [{"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"}],
                  {"clusterAffinity": {"clusterNames": ["on-prem"]}}), ns)
    apply(fed, configmap("settings", "v"), ns)
    apply(fed, pp("weighted", [deploy_selector(name="web")], {
        "clusterAffinity": {"clusterNames": ["on-prem", "west"]},
        "replicaScheduling": {"replicaSchedulingType": "Divided",
                              "replicaDivisionPreference": "Weighted",
                              "weightPreference": {"staticWeightList": [
                                  {"targetCluster": {"clusterNames": ["on-prem"]}, "weight": 2},
                                  {"targetCluster": {"clusterNames": ["west"]}, "weight": 1}]}}},
                  propagateDeps=True), ns)
    apply(fed, {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "OverridePolicy",
                "metadata": {"name": "mirror"},
                "spec": {"resourceSelectors": [deploy_selector(name="web")],
                         "overrideRules": [{"targetCluster": {"clusterNames": ["west"]},
                                            "overriders": {"imageOverrider": [
                                                {"component": "Registry", "operator": "replace",
                                                 "value": "mirror.example.com"}]}}]}}, ns)
    web = deployment("web", 6)
    web["spec"]["template"]["spec"]["containers"][0]["envFrom"] = [
        {"configMapRef": {"name": "settings"}}]
    apply(fed, web, ns)
    wait_layout(fed, ns, "web", {"on-prem": 4, "west": 2})
    paths = [DEPLOY.format(ns="{ns}", name="web"), CM.format(ns="{ns}", name="settings")]
    wait_for(lambda: len(copies(fed, ns, paths)) == 4, "the Deployment and its ConfigMap in "
             "on-prem and west")
    west = fed["west"].get_json(DEPLOY.format(ns=ns, name="web"))
    assert west["spec"]["template"]["spec"]["containers"][0]["image"].startswith(
        "mirror.example.com/")
    before = copies(fed, ns, paths)

    fed.restart_server()
    for c in CLUSTERS:
        fed.wait_ready(c)
    # A Deployment created now is checked after every one there was.
    apply(fed, deployment("after", 1), ns)
    wait_for(lambda: sum(layout(fed, ns, "after").values()) == 1, "the federation at work again")
    assert copies(fed, ns, paths) == before
    assert layout(fed, ns, "web") == {"on-prem": 4, "east": 0, "west": 2}


def test_a_federated_resource_quota_caps_the_namespace(fed, ns):
    """FederatedResourceQuota spec.overall: a create or a scale that would
    take the namespace's requests beyond it is refused with Kubernetes'
    "exceeded quota" 403, a scale down passes, and status.overallUsed
    follows the workloads."""
    quota = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "FederatedResourceQuota",
             "metadata": {"name": "team"}, "spec": {"overall": {"requests.cpu": "100m",
                                                                "pods": "8"}}}
    fed.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(quota))
    apply(fed, deployment("web", 6), ns)  # 6 x 10m
    used = lambda: json.loads(fed.kubectl(  # noqa: E731
        "get", "frq", "team", "-n", ns, "-o", "json").stdout).get("status", {}).get(
            "overallUsed")
    wait_for(lambda: used() == {"requests.cpu": "60m", "pods": "6"}, "the usage in the status")
    # kubectl's columns, as Karmada's: OVERALL and OVERALL_USED.
    columns = fed.kubectl("get", "frq", "team", "-n", ns).stdout
    assert '{"pods":"8","requests.cpu":"100m"}' in columns, columns
    refused = fed.kubectl("scale", "deployment", "web", "-n", ns, "--replicas=11", check=False)
    assert refused.returncode != 0
    # Resources in name order, as Kubernetes writes them.
    assert ("exceeded quota: team, requested: pods=5,requests.cpu=50m, used: pods=6,"
            "requests.cpu=60m, limited: pods=8,requests.cpu=100m") in refused.stderr, refused.stderr
    assert "Forbidden" in refused.stderr or "forbidden" in refused.stderr
    # Nothing changed.
    assert json.loads(fed.kubectl("get", "deploy", "web", "-n", ns, "-o", "json").stdout)[
        "spec"]["replicas"] == 6
    big = deployment("big", 1)
    big["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "50m"
    refused = apply_unchecked(fed, big, ns)
    assert "exceeded quota: team, requested: requests.cpu=50m" in refused.stderr, refused.stderr
    fed.kubectl("scale", "deployment", "web", "-n", ns, "--replicas=2")
    wait_for(lambda: used() == {"requests.cpu": "20m", "pods": "2"}, "the lower usage")
    apply(fed, big, ns)  # fits now
    wait_for(lambda: used() == {"requests.cpu": "70m", "pods": "3"}, "the usage with big")


def apply_unchecked(fed, obj, ns):
    return fed.kubectl("apply", "-f", "-", "-n", ns, input=json.dumps(obj), check=False)


def test_static_assignments_become_member_quotas_that_the_members_enforce(fed, ns):
    """FederatedResourceQuota spec.staticAssignments: a ResourceQuota in each
    assigned cluster, enforced by that member (its pods beyond it refused in
    Kubernetes' words), its usage in status.aggregatedStatus; an assignment
    removed takes its member quota away."""
    quota = {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "FederatedResourceQuota",
             "metadata": {"name": "team"},
             "spec": {"overall": {"pods": "20", "requests.cpu": "2"},
                      "staticAssignments": [{"clusterName": "east", "hard": {"pods": "2"}},
                                            {"clusterName": "west",
                                             "hard": {"pods": "5", "requests.cpu": "1"}}]}}
    # As Karmada's webhook: the assignments fit in the overall.
    too_much = json.loads(json.dumps(quota))
    too_much["spec"]["overall"]["pods"] = "6"
    out = fed.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(too_much), check=False)
    assert ('spec.overall[pods]: Invalid value: "6": overall is less than assignments'
            in out.stderr), out.stderr
    out = fed.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(quota))
    assert "staticAssignments" not in out.stderr  # acted on: no Warning
    rq = "/api/v1/namespaces/{ns}/resourcequotas/team".format(ns=ns)
    wait_for(lambda: all(fed.members[c].get_json(rq) is not None for c in ("east", "west")),
             "the member quotas")
    east = fed.members["east"].get_json(rq)
    assert east["spec"]["hard"] == {"pods": "2"}
    assert east["metadata"]["labels"]["federation.kubernetes.io/federated-resource-quota"] == "team"
    assert fed.members["west"].get_json(rq)["spec"]["hard"] == {"pods": "5", "requests.cpu": "1"}
    assert fed.members["on-prem"].get_json(rq) is None

    # A Deployment of 3 whole in east: the member admits 2 pods and refuses the third.
    apply(fed, pp("east-only", [deploy_selector(name="web")],
                  {"clusterAffinity": {"clusterNames": ["east"]}}), ns)
    apply(fed, deployment("web", 3), ns)
    wait_layout(fed, ns, "web", {"east": 3})
    wait_for(lambda: len(fed.members["east"].pods(ns, "app=web")) == 2, "two pods in east")
    events = fed.members["east"].kubectl("get", "events", "-n", ns, "-o", "json").stdout
    assert ("exceeded quota: team, requested: pods=1, used: pods=2, limited: pods=2"
            in events), events
    # The member's own view, as kubectl prints it.
    columns = fed.members["east"].kubectl("get", "quota", "team", "-n", ns).stdout
    assert "pods: 2/2" in columns, columns

    def aggregated():
        status = json.loads(fed.kubectl("get", "frq", "team", "-n", ns, "-o", "json").stdout)[
            "status"]
        return {e["clusterName"]: (e.get("hard"), e.get("used"))
                for e in status.get("aggregatedStatus", [])}
    want = {"east": ({"pods": "2"}, {"pods": "2"}),
            "west": ({"pods": "5", "requests.cpu": "1"}, {"pods": "0", "requests.cpu": "0"})}
    wait_for(lambda: aggregated() == want,
             lambda: f"each cluster's quota and usage in the status: {aggregated()}")

    # The west assignment goes: its member quota goes with it.
    quota["spec"]["staticAssignments"] = quota["spec"]["staticAssignments"][:1]
    fed.kubectl("replace", "-n", ns, "-f", "-", input=json.dumps(quota))
    wait_for(lambda: fed.members["west"].get_json(rq) is None, "west's quota removed")
    wait_for(lambda: set(aggregated()) == {"east"}, "west gone from the status")
    fed.kubectl("delete", "frq", "team", "-n", ns)
    wait_for(lambda: fed.members["east"].get_json(rq) is None, "east's quota removed")
    # Without the quota, east runs all three.
    wait_for(lambda: len(fed.members["east"].pods(ns, "app=web")) == 3, "three pods in east")
