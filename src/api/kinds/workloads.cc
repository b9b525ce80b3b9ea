// apps/v1 ReplicaSet, Deployment, StatefulSet and ControllerRevision: defaults
// (pkg/apis/apps/v1/defaults.go), columns and registration.
#include <cctype>

#include "api/kinds/pod_spec.h"
#include "api/kinds/resources.h"
#include "api/kinds/workload_validation.h"
#include "api/labels.h"

namespace flotilla::api::kinds {
namespace {

// The template a workload always has (a Go struct, never nil), defaulted.
void DefaultTemplate(json::object& spec) {
  json::object& tmpl = EnsureObject(spec, "template");
  EnsureObject(tmpl, "spec");
  DefaultPodTemplate(tmpl);
}

void DefaultReplicaSet(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  SetIfUnset(spec, "replicas", 1);
  DefaultTemplate(spec);
}

void DefaultDeployment(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  SetIfUnset(spec, "replicas", 1);
  json::object& strategy = EnsureObject(spec, "strategy");
  SetIfEmpty(strategy, "type", "RollingUpdate");
  if (StringAt(strategy, "type") == "RollingUpdate") {
    json::object& ru = EnsureObject(strategy, "rollingUpdate");
    SetIfUnset(ru, "maxUnavailable", "25%");
    SetIfUnset(ru, "maxSurge", "25%");
  }
  SetIfUnset(spec, "revisionHistoryLimit", 10);
  SetIfUnset(spec, "progressDeadlineSeconds", 600);
  DefaultTemplate(spec);
}

// SetDefaults_PersistentVolumeClaim(Spec), as applied to claim templates.
void DefaultClaimTemplate(json::object& claim) {
  SetIfUnset(EnsureObject(claim, "spec"), "volumeMode", "Filesystem");
  SetIfEmpty(EnsureObject(claim, "status"), "phase", "Pending");
}

void DefaultStatefulSet(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  SetIfEmpty(spec, "podManagementPolicy", "OrderedReady");
  json::object& strategy = EnsureObject(spec, "updateStrategy");
  if (StringAt(strategy, "type").empty()) {
    strategy["type"] = "RollingUpdate";
    EnsureObject(strategy, "rollingUpdate");
  }
  json::object* ru = MutableObject(strategy, "rollingUpdate");
  if (StringAt(strategy, "type") == "RollingUpdate" && ru != nullptr) {
    SetIfUnset(*ru, "partition", 0);
  }
  json::object& retention = EnsureObject(spec, "persistentVolumeClaimRetentionPolicy");
  SetIfEmpty(retention, "whenDeleted", "Retain");
  SetIfEmpty(retention, "whenScaled", "Retain");
  SetIfUnset(spec, "replicas", 1);
  SetIfUnset(spec, "revisionHistoryLimit", 10);
  DefaultTemplate(spec);
  ForEachObject(spec, "volumeClaimTemplates", DefaultClaimTemplate);
}

void DefaultDaemonSet(json::object& obj) {
  json::object& spec = EnsureObject(obj, "spec");
  json::object& strategy = EnsureObject(spec, "updateStrategy");
  SetIfEmpty(strategy, "type", "RollingUpdate");
  if (StringAt(strategy, "type") == "RollingUpdate") {
    json::object& ru = EnsureObject(strategy, "rollingUpdate");
    SetIfUnset(ru, "maxUnavailable", 1);
    SetIfUnset(ru, "maxSurge", 0);
  }
  SetIfUnset(spec, "revisionHistoryLimit", 10);
  DefaultTemplate(spec);
}

// "ready/desired", as the READY column of Deployments and StatefulSets.
json::value ReadyOfDesired(const json::object& obj, TimePoint) {
  return json::string(std::to_string(IntOr(obj, "status.readyReplicas", 0)) + "/" +
                      std::to_string(IntOr(obj, "spec.replicas", 0)));
}

constexpr std::string_view kSelectorDescription =
    "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the "
    "ones affected by this deployment. It must match the pod template's labels.";

}  // namespace

Resource ReplicaSetResource() {
  Resource r = MakeResource("apps", "v1", "ReplicaSet", "replicasets", true,
                            "io.k8s.api.apps.v1.ReplicaSet");
  r.short_names = {"rs"};
  r.categories = {"all"};
  r.has_status = true;
  r.has_scale = true;
  r.default_fn = DefaultReplicaSet;
  r.validate_fn = ValidateReplicaSet;
  r.columns = {
      NameColumn(),
      Column("Desired", "integer", "Replicas is the number of desired replicas.", 0,
             IntCell("spec.replicas")),
      Column("Current", "integer", "Replicas is the most recently observed number of replicas.", 0,
             IntCell("status.replicas")),
      Column("Ready", "integer", "The number of ready replicas for this replica set.", 0,
             IntCell("status.readyReplicas")),
      AgeColumn(),
      ContainersColumn(),
      ImagesColumn(),
      Column("Selector", "string", std::string(kSelectorDescription), 1,
             [](const json::object& obj, TimePoint) -> json::value {
               return json::string(FormatLabelSelector(Find(obj, "spec.selector")));
             })};
  return r;
}

Resource DeploymentResource() {
  Resource r = MakeResource("apps", "v1", "Deployment", "deployments", true,
                            "io.k8s.api.apps.v1.Deployment");
  r.short_names = {"deploy"};
  r.categories = {"all"};
  r.has_status = true;
  r.status_keeps_metadata = {"labels"};
  r.has_scale = true;
  r.default_fn = DefaultDeployment;
  r.validate_fn = ValidateDeployment;
  r.columns = {
      NameColumn(),
      Column("Ready", "string", "Number of the pod with ready state", 0, ReadyOfDesired),
      Column("Up-to-date", "string",
             "Total number of non-terminated pods targeted by this deployment that have the "
             "desired template spec.",
             0, IntCell("status.updatedReplicas")),
      Column("Available", "string",
             "Total number of available pods (ready for at least minReadySeconds) targeted by "
             "this deployment.",
             0, IntCell("status.availableReplicas")),
      AgeColumn(),
      ContainersColumn(),
      ImagesColumn(),
      Column("Selector", "string", std::string(kSelectorDescription), 1,
             [](const json::object& obj, TimePoint) -> json::value {
               StatusOr<LabelSelector> s =
                   LabelSelector::FromJson(Find(obj, "spec.selector"), "spec.selector");
               return json::string(s.ok() ? s->ToString() : "<invalid>");
             })};
  return r;
}

Resource StatefulSetResource() {
  Resource r = MakeResource("apps", "v1", "StatefulSet", "statefulsets", true,
                            "io.k8s.api.apps.v1.StatefulSet");
  r.short_names = {"sts"};
  r.categories = {"all"};
  r.has_status = true;
  r.has_scale = true;
  r.default_fn = DefaultStatefulSet;
  r.validate_fn = ValidateStatefulSet;
  r.columns = {NameColumn(),
               Column("Ready", "string", "Number of the pod with ready state", 0, ReadyOfDesired),
               AgeColumn(), ContainersColumn(), ImagesColumn()};
  return r;
}

// printDaemonSet's columns.
Resource DaemonSetResource() {
  Resource r =
      MakeResource("apps", "v1", "DaemonSet", "daemonsets", true, "io.k8s.api.apps.v1.DaemonSet");
  r.short_names = {"ds"};
  r.categories = {"all"};
  r.has_status = true;
  r.default_fn = DefaultDaemonSet;
  r.validate_fn = ValidateDaemonSet;
  r.columns = {
      NameColumn(),
      Column("Desired", "integer",
             "The total number of nodes that should be running the daemon pod (including nodes "
             "correctly running the daemon pod).",
             0, IntCell("status.desiredNumberScheduled")),
      Column("Current", "integer",
             "The number of nodes that are running at least 1 daemon pod and are supposed to run "
             "the daemon pod.",
             0, IntCell("status.currentNumberScheduled")),
      Column("Ready", "integer",
             "numberReady is the number of nodes that should be running the daemon pod and have "
             "one or more of the daemon pod running with a Ready Condition.",
             0, IntCell("status.numberReady")),
      Column("Up-to-date", "integer",
             "The total number of nodes that are running updated daemon pod", 0,
             IntCell("status.updatedNumberScheduled")),
      Column("Available", "integer",
             "The number of nodes that should be running the daemon pod and have one or more of "
             "the daemon pod running and available (ready for at least spec.minReadySeconds)",
             0, IntCell("status.numberAvailable")),
      Column("Node Selector", "string",
             "NodeSelector is a selector which must be true for the pod to fit on a node. "
             "Selector which must match a node's labels for the pod to be scheduled on that node.",
             0,
             [](const json::object& obj, TimePoint) -> json::value {
               return json::string(FormatLabels(ObjectAt(obj, "spec.template.spec.nodeSelector")));
             }),
      AgeColumn(),
      ContainersColumn(),
      ImagesColumn(),
      Column("Selector", "string",
             "A label query over pods that are managed by the daemon set. Must match in order to "
             "be controlled. It must match the pod template's labels.",
             1, [](const json::object& obj, TimePoint) -> json::value {
               return json::string(FormatLabelSelector(Find(obj, "spec.selector")));
             })};
  return r;
}

// printControllerRevision's CONTROLLER cell: "<kind.group>/<name>" of the
// controller owner, lowercased kind, "<none>" without one.
json::value RevisionController(const json::object& obj, TimePoint) {
  for (const json::object* ref : ObjectsAt(obj, "metadata.ownerReferences")) {
    if (!GetBool(*ref, "controller").value_or(false)) continue;
    std::string api_version = StringAt(*ref, "apiVersion");
    size_t slash = api_version.find('/');
    std::string kind = StringAt(*ref, "kind");
    if (slash != std::string::npos) kind += "." + api_version.substr(0, slash);
    for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return json::string(kind + "/" + StringAt(*ref, "name"));
  }
  return json::string("<none>");
}

Resource ControllerRevisionResource() {
  Resource r = MakeResource("apps", "v1", "ControllerRevision", "controllerrevisions", true,
                            "io.k8s.api.apps.v1.ControllerRevision");
  r.columns = {
      NameColumn(),
      Column("Controller", "string", "Controller of the object", 0, RevisionController),
      Column("Revision", "integer", "Revision of the ControllerRevision", 0, IntCell("revision")),
      AgeColumn()};
  return r;
}

}  // namespace flotilla::api::kinds
