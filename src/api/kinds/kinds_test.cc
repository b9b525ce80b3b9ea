#include "api/kinds/kinds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/kinds/test_util.h"

namespace flotilla::api::kinds {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get",
                                            "list",   "patch",  "update",           "watch"};

struct DiscoveryCase {
  std::string group, version, plural, kind;
  bool namespaced;
  std::vector<std::string> short_names, categories;
  bool has_status, has_scale;
  std::string schema_name;
};

TEST(Registration, DiscoveryFactsMatchKubeApiserver) {
  const DiscoveryCase cases[] = {
      {"",
       "v1",
       "namespaces",
       "Namespace",
       false,
       {"ns"},
       {},
       true,
       false,
       "io.k8s.api.core.v1.Namespace"},
      {"",
       "v1",
       "configmaps",
       "ConfigMap",
       true,
       {"cm"},
       {},
       false,
       false,
       "io.k8s.api.core.v1.ConfigMap"},
      {"", "v1", "secrets", "Secret", true, {}, {}, false, false, "io.k8s.api.core.v1.Secret"},
      {"",
       "v1",
       "services",
       "Service",
       true,
       {"svc"},
       {"all"},
       true,
       false,
       "io.k8s.api.core.v1.Service"},
      {"", "v1", "events", "Event", true, {"ev"}, {}, false, false, "io.k8s.api.core.v1.Event"},
      {"",
       "v1",
       "serviceaccounts",
       "ServiceAccount",
       true,
       {"sa"},
       {},
       false,
       false,
       "io.k8s.api.core.v1.ServiceAccount"},
      {"apps",
       "v1",
       "replicasets",
       "ReplicaSet",
       true,
       {"rs"},
       {"all"},
       true,
       true,
       "io.k8s.api.apps.v1.ReplicaSet"},
      {"apps",
       "v1",
       "deployments",
       "Deployment",
       true,
       {"deploy"},
       {"all"},
       true,
       true,
       "io.k8s.api.apps.v1.Deployment"},
      {"apps",
       "v1",
       "statefulsets",
       "StatefulSet",
       true,
       {"sts"},
       {"all"},
       true,
       true,
       "io.k8s.api.apps.v1.StatefulSet"},
      {"autoscaling",
       "v2",
       "horizontalpodautoscalers",
       "HorizontalPodAutoscaler",
       true,
       {"hpa"},
       {"all"},
       true,
       false,
       "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"},
      {"autoscaling",
       "v1",
       "horizontalpodautoscalers",
       "HorizontalPodAutoscaler",
       true,
       {"hpa"},
       {"all"},
       true,
       false,
       "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler"},
      {"coordination.k8s.io",
       "v1",
       "leases",
       "Lease",
       true,
       {},
       {},
       false,
       false,
       "io.k8s.api.coordination.v1.Lease"},
      {"federation",
       "v1beta1",
       "clusters",
       "Cluster",
       false,
       {},
       {},
       true,
       false,
       "io.flotilla.federation.v1beta1.Cluster"},
      {"", "v1", "pods", "Pod", true, {"po"}, {"all"}, true, false, "io.k8s.api.core.v1.Pod"},
      {"", "v1", "nodes", "Node", false, {"no"}, {}, true, false, "io.k8s.api.core.v1.Node"},
      {"",
       "v1",
       "endpoints",
       "Endpoints",
       true,
       {"ep"},
       {},
       false,
       false,
       "io.k8s.api.core.v1.Endpoints"},
      {"",
       "v1",
       "persistentvolumeclaims",
       "PersistentVolumeClaim",
       true,
       {"pvc"},
       {},
       true,
       false,
       "io.k8s.api.core.v1.PersistentVolumeClaim"},
      {"discovery.k8s.io",
       "v1",
       "endpointslices",
       "EndpointSlice",
       true,
       {},
       {},
       false,
       false,
       "io.k8s.api.discovery.v1.EndpointSlice"},
      {"storage.k8s.io",
       "v1",
       "storageclasses",
       "StorageClass",
       false,
       {"sc"},
       {},
       false,
       false,
       "io.k8s.api.storage.v1.StorageClass"},
      {"apps",
       "v1",
       "controllerrevisions",
       "ControllerRevision",
       true,
       {},
       {},
       false,
       false,
       "io.k8s.api.apps.v1.ControllerRevision"},
      {"batch", "v1", "jobs", "Job", true, {}, {"all"}, true, false, "io.k8s.api.batch.v1.Job"},
      {"batch",
       "v1",
       "cronjobs",
       "CronJob",
       true,
       {"cj"},
       {"all"},
       true,
       false,
       "io.k8s.api.batch.v1.CronJob"},
  };
  for (const DiscoveryCase& c : cases) {
    SCOPED_TRACE(c.group + "/" + c.version + " " + c.plural);
    const Resource& r = Res(c.group, c.version, c.plural);
    EXPECT_EQ(r.kind, c.kind);
    EXPECT_EQ(r.namespaced, c.namespaced);
    EXPECT_EQ(r.short_names, c.short_names);
    EXPECT_EQ(r.categories, c.categories);
    EXPECT_EQ(r.has_status, c.has_status);
    EXPECT_EQ(r.has_scale, c.has_scale);
    EXPECT_EQ(r.schema_name, c.schema_name);
    std::vector<std::string> verbs = kAllVerbs;
    if (c.plural == "namespaces") std::erase(verbs, "deletecollection");
    EXPECT_EQ(r.verbs, verbs);
    std::string singular = c.kind;
    for (char& ch : singular) ch = static_cast<char>(std::tolower(ch));
    EXPECT_EQ(r.singular, singular);
    ASSERT_FALSE(r.columns.empty());
    EXPECT_EQ(AllKinds().FindKind(r.ApiVersion(), r.kind), &r);
  }
}

TEST(Registration, GroupsListPreferredVersionsFirst) {
  auto groups = AllKinds().Groups();
  ASSERT_EQ(groups.size(), 14u);
  EXPECT_EQ(groups[0].first, "");
  EXPECT_EQ(groups[1].first, "apps");
  EXPECT_EQ(groups[2].first, "authentication.k8s.io");
  EXPECT_EQ(groups[3].first, "authorization.k8s.io");
  EXPECT_EQ(groups[4].first, "autoscaling");
  EXPECT_THAT(groups[4].second, ElementsAre("v2", "v1"));
  EXPECT_EQ(groups[5].first, "batch");
  EXPECT_EQ(groups[6].first, "networking.k8s.io");
  EXPECT_EQ(groups[7].first, "policy");
  EXPECT_EQ(groups[8].first, "rbac.authorization.k8s.io");
  EXPECT_EQ(groups[9].first, "apiextensions.k8s.io");
  EXPECT_EQ(groups[10].first, "coordination.k8s.io");
  EXPECT_EQ(groups[11].first, "federation");
  EXPECT_EQ(groups[12].first, "discovery.k8s.io");
  EXPECT_EQ(groups[13].first, "storage.k8s.io");
}

TEST(Registration, BothHpaVersionsShareV2Storage) {
  const Resource& v1 = Res("autoscaling", "v1", "horizontalpodautoscalers");
  const Resource& v2 = Res("autoscaling", "v2", "horizontalpodautoscalers");
  EXPECT_EQ(v1.StorageVersion(), "v2");
  EXPECT_EQ(v2.StorageVersion(), "v2");
  EXPECT_TRUE(v1.convert != nullptr);
  EXPECT_TRUE(v2.convert == nullptr);
  EXPECT_EQ(v1.GroupResource(), "horizontalpodautoscalers.autoscaling");
}

TEST(Registration, EveryTableStartsWithNameExceptEvents) {
  for (const auto& r : AllKinds().All()) {
    SCOPED_TRACE(r->plural);
    const TableColumn& first = r->plural == "events" ? r->columns.back() : r->columns.front();
    EXPECT_EQ(first.name, "Name");
    EXPECT_EQ(first.format, "name");
    EXPECT_EQ(first.priority, r->plural == "events" ? 1 : 0);
    for (const TableColumn& c : r->columns) EXPECT_TRUE(c.cell != nullptr) << c.name;
  }
}

TEST(Registration, ColumnsAreKubectlGetColumns) {
  struct Case {
    std::string group, version, plural;
    std::vector<std::string> columns;
  };
  const Case cases[] = {
      {"", "v1", "namespaces", {"Name", "Status", "Age"}},
      {"", "v1", "configmaps", {"Name", "Data", "Age"}},
      {"", "v1", "secrets", {"Name", "Type", "Data", "Age"}},
      {"",
       "v1",
       "services",
       {"Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"}},
      {"",
       "v1",
       "events",
       {"Last Seen", "Type", "Reason", "Object", "Subobject", "Source", "Message", "First Seen",
        "Count", "Name"}},
      {"", "v1", "serviceaccounts", {"Name", "Secrets", "Age"}},
      {"apps",
       "v1",
       "replicasets",
       {"Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"}},
      {"apps",
       "v1",
       "deployments",
       {"Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"}},
      {"apps", "v1", "statefulsets", {"Name", "Ready", "Age", "Containers", "Images"}},
      {"autoscaling",
       "v2",
       "horizontalpodautoscalers",
       {"Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"}},
      {"autoscaling",
       "v1",
       "horizontalpodautoscalers",
       {"Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"}},
      {"coordination.k8s.io", "v1", "leases", {"Name", "Holder", "Age"}},
      {"federation",
       "v1beta1",
       "clusters",
       {"Name", "Ready", "Scheduling", "Zones", "Region", "Age"}},
      {"",
       "v1",
       "pods",
       {"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node", "Nominated Node",
        "Readiness Gates"}},
      {"",
       "v1",
       "nodes",
       {"Name", "Status", "Roles", "Age", "Version", "Internal-IP", "External-IP", "OS-Image",
        "Kernel-Version", "Container-Runtime"}},
      {"", "v1", "endpoints", {"Name", "Endpoints", "Age"}},
      {"",
       "v1",
       "persistentvolumeclaims",
       {"Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass",
        "VolumeAttributesClass", "Age", "VolumeMode"}},
      {"discovery.k8s.io",
       "v1",
       "endpointslices",
       {"Name", "AddressType", "Ports", "Endpoints", "Age"}},
      {"apps", "v1", "controllerrevisions", {"Name", "Controller", "Revision", "Age"}},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(ColumnNames(Res(c.group, c.version, c.plural)), ElementsAreArray(c.columns))
        << c.plural;
  }
}

TEST(Registration, WideColumnsHavePriorityOne) {
  const Resource& deploy = Res("apps", "v1", "deployments");
  std::vector<int> priorities;
  for (const TableColumn& c : deploy.columns) priorities.push_back(c.priority);
  EXPECT_THAT(priorities, ElementsAre(0, 0, 0, 0, 0, 1, 1, 1));
  const Resource& svc = Res("", "v1", "services");
  EXPECT_EQ(svc.columns.back().name, "Selector");
  EXPECT_EQ(svc.columns.back().priority, 1);
}

TEST(HumanDuration, MatchesApimachinery) {
  using std::chrono::hours;
  using std::chrono::milliseconds;
  using std::chrono::minutes;
  using std::chrono::seconds;
  const std::pair<Duration, std::string> cases[] = {
      {seconds(-2), "<invalid>"},
      {milliseconds(-1500), "0s"},
      {seconds(0), "0s"},
      {seconds(5), "5s"},
      {seconds(119), "119s"},
      {seconds(120), "2m"},
      {seconds(182), "3m2s"},
      {minutes(9) + seconds(59), "9m59s"},
      {minutes(10), "10m"},
      {minutes(179), "179m"},
      {minutes(180), "3h"},
      {hours(5) + minutes(3), "5h3m"},
      {hours(8), "8h"},
      {hours(47), "47h"},
      {hours(48), "2d"},
      {hours(52), "2d4h"},
      {hours(24 * 8), "8d"},
      {hours(24 * 729), "729d"},
      {hours(24 * 730), "2y"},
      {hours(24 * 770), "2y40d"},
      {hours(24 * 365 * 8), "8y"},
      {hours(24 * 365 * 9 + 100), "9y"},
  };
  for (const auto& [d, want] : cases) {
    EXPECT_EQ(HumanDuration(d), want) << std::chrono::duration_cast<milliseconds>(d).count();
  }
}

}  // namespace
}  // namespace flotilla::api::kinds
