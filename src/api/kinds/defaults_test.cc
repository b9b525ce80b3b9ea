// Golden defaults: a minimal object of each kind and what kube-apiserver
// stores for it.
#include <gtest/gtest.h>

#include <cctype>

#include "api/kinds/test_util.h"
#include "api/kinds/util.h"

namespace flotilla::api::kinds {
namespace {

struct DefaultCase {
  std::string name;
  std::string group, version, plural;
  std::string input;
  std::string want;
};

// Applies the kind's defaults to `input` (twice: defaulting is idempotent).
json::value Defaulted(const DefaultCase& c) {
  const Resource& r = Res(c.group, c.version, c.plural);
  json::object obj = Obj(c.input);
  EXPECT_TRUE(r.default_fn != nullptr) << c.plural;
  if (r.default_fn == nullptr) return obj;
  r.default_fn(obj);
  json::object again = obj;
  r.default_fn(again);
  EXPECT_EQ(json::value(again), json::value(obj)) << c.name << ": defaulting is not idempotent";
  return obj;
}

void PrintTo(const DefaultCase& c, std::ostream* os) { *os << c.name; }

class Defaults : public ::testing::TestWithParam<DefaultCase> {};

TEST_P(Defaults, Golden) {
  const DefaultCase& c = GetParam();
  json::value got = Defaulted(c);
  json::value want = Obj(c.want);
  EXPECT_EQ(got, want) << c.name << "\n got: " << json::serialize(got)
                       << "\nwant: " << json::serialize(want);
}

const char kPodSpecDefaults[] =
    R"("restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",)"
    R"("securityContext":{},"schedulerName":"default-scheduler")";
const char kContainerDefaults[] =
    R"("resources":{},"terminationMessagePath":"/dev/termination-log",)"
    R"("terminationMessagePolicy":"File")";

std::string Template(std::string extra_container = "") {
  return R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.25")" +
         extra_container + "}]}}";
}

std::string DefaultedTemplate() {
  return std::string(
             R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.25",)") +
         kContainerDefaults +
         R"(,"imagePullPolicy":"IfNotPresent","ports":[{"containerPort":80,"protocol":"TCP"}]}],)" +
         kPodSpecDefaults + "}}";
}

const DefaultCase kDefaultCases[] = {
    {"namespace", "", "v1", "namespaces", R"({"metadata":{"name":"team-a"}})",
     R"({"metadata":{"name":"team-a","labels":{"kubernetes.io/metadata.name":"team-a"}},
         "spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}})"},
    {"namespace being finalized keeps its empty finalizers", "", "v1", "namespaces",
     R"({"metadata":{"name":"team-a","labels":{"kubernetes.io/metadata.name":"old"}},
         "spec":{"finalizers":[]},"status":{"phase":"Terminating"}})",
     R"({"metadata":{"name":"team-a","labels":{"kubernetes.io/metadata.name":"team-a"}},
         "spec":{"finalizers":[]},"status":{"phase":"Terminating"}})"},
    {"secret merges stringData into data", "", "v1", "secrets",
     R"({"metadata":{"name":"creds"},"data":{"pw":"c2VjcmV0"},"stringData":{"user":"admin"}})",
     R"({"metadata":{"name":"creds"},"type":"Opaque","data":{"pw":"c2VjcmV0","user":"YWRtaW4="}})"},
    {"service", "", "v1", "services",
     R"({"metadata":{"name":"web"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}})",
     R"({"metadata":{"name":"web"},"spec":{"selector":{"app":"web"},
         "ports":[{"port":80,"protocol":"TCP","targetPort":80}],"type":"ClusterIP",
         "sessionAffinity":"None","internalTrafficPolicy":"Cluster",
         "ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"]}})"},
    {"service with a cluster IP and client IP affinity", "", "v1", "services",
     R"({"spec":{"clusterIP":"fd00::10","sessionAffinity":"ClientIP","ports":[{"port":53,"protocol":"UDP","targetPort":"dns"}]}})",
     R"({"spec":{"clusterIP":"fd00::10","clusterIPs":["fd00::10"],"sessionAffinity":"ClientIP",
         "sessionAffinityConfig":{"clientIP":{"timeoutSeconds":10800}},
         "ports":[{"port":53,"protocol":"UDP","targetPort":"dns"}],"type":"ClusterIP",
         "internalTrafficPolicy":"Cluster","ipFamilyPolicy":"SingleStack","ipFamilies":["IPv6"]}})"},
    {"load balancer service", "", "v1", "services",
     R"({"spec":{"type":"LoadBalancer","ports":[{"port":443,"nodePort":30443}]},
         "status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"},{"hostname":"lb.example.com"}]}}})",
     R"({"spec":{"type":"LoadBalancer","ports":[{"port":443,"nodePort":30443,"protocol":"TCP","targetPort":443}],
         "sessionAffinity":"None","externalTrafficPolicy":"Cluster","internalTrafficPolicy":"Cluster",
         "ipFamilyPolicy":"SingleStack","ipFamilies":["IPv4"],"allocateLoadBalancerNodePorts":true},
         "status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7","ipMode":"VIP"},{"hostname":"lb.example.com"}]}}})"},
    {"external name service", "", "v1", "services",
     R"({"spec":{"type":"ExternalName","externalName":"db.example.com"}})",
     R"({"spec":{"type":"ExternalName","externalName":"db.example.com","sessionAffinity":"None"}})"},
    {"deployment", "apps", "v1", "deployments",
     R"({"metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":)" +
         Template(R"(,"ports":[{"containerPort":80}])") + "}}",
     R"({"metadata":{"name":"web"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},
         "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},
         "revisionHistoryLimit":10,"progressDeadlineSeconds":600,"template":)" +
         DefaultedTemplate() + "}}"},
    {"recreate deployment gets no rolling update", "apps", "v1", "deployments",
     R"({"spec":{"replicas":0,"strategy":{"type":"Recreate"},"template":{"spec":{}}}})",
     std::string(R"({"spec":{"replicas":0,"strategy":{"type":"Recreate"},"revisionHistoryLimit":10,
         "progressDeadlineSeconds":600,"template":{"spec":{)") +
         kPodSpecDefaults + "}}}}"},
    {"replicaset", "apps", "v1", "replicasets",
     R"({"spec":{"selector":{"matchLabels":{"app":"web"}},"template":)" +
         Template(R"(,"ports":[{"containerPort":80}])") + "}}",
     R"({"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":)" +
         DefaultedTemplate() + "}}"},
    {"statefulset", "apps", "v1", "statefulsets",
     R"({"spec":{"serviceName":"web","selector":{"matchLabels":{"app":"web"}},"template":)" +
         Template(R"(,"ports":[{"containerPort":80}])") +
         R"(,"volumeClaimTemplates":[{"metadata":{"name":"www"},"spec":{"accessModes":["ReadWriteOnce"],
         "resources":{"requests":{"storage":"1Gi"}}}}]}})",
     R"({"spec":{"serviceName":"web","replicas":1,"selector":{"matchLabels":{"app":"web"}},
         "podManagementPolicy":"OrderedReady",
         "updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}},
         "persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"},
         "revisionHistoryLimit":10,"template":)" +
         DefaultedTemplate() +
         R"(,"volumeClaimTemplates":[{"metadata":{"name":"www"},"spec":{"accessModes":["ReadWriteOnce"],
         "resources":{"requests":{"storage":"1Gi"}},"volumeMode":"Filesystem"},"status":{"phase":"Pending"}}]}})"},
    {"statefulset with an explicit rolling update type", "apps", "v1", "statefulsets",
     R"({"spec":{"updateStrategy":{"type":"RollingUpdate"},"template":{"spec":{}}}})",
     std::string(R"({"spec":{"replicas":1,"podManagementPolicy":"OrderedReady",
         "updateStrategy":{"type":"RollingUpdate"},
         "persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Retain","whenScaled":"Retain"},
         "revisionHistoryLimit":10,"template":{"spec":{)") +
         kPodSpecDefaults + "}}}}"},
    {"hpa v2", "autoscaling", "v2", "horizontalpodautoscalers",
     R"({"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5}})",
     R"({"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,
         "minReplicas":1,"metrics":[{"type":"Resource","resource":{"name":"cpu",
         "target":{"type":"Utilization","averageUtilization":80}}}]}})"},
    {"hpa v2 behavior is filled in", "autoscaling", "v2", "horizontalpodautoscalers",
     R"({"spec":{"minReplicas":2,"maxReplicas":5,"metrics":[{"type":"Pods","pods":{"metric":{"name":"qps"},
         "target":{"type":"AverageValue","averageValue":"10"}}}],
         "behavior":{"scaleDown":{"stabilizationWindowSeconds":60}}}})",
     R"({"spec":{"minReplicas":2,"maxReplicas":5,"metrics":[{"type":"Pods","pods":{"metric":{"name":"qps"},
         "target":{"type":"AverageValue","averageValue":"10"}}}],
         "behavior":{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[
           {"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},
         "scaleDown":{"stabilizationWindowSeconds":60,"selectPolicy":"Max","policies":[
           {"type":"Percent","value":100,"periodSeconds":15}]}}}})"},
    {"hpa v1", "autoscaling", "v1", "horizontalpodautoscalers",
     R"({"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":5}})",
     R"({"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":5,"minReplicas":1}})"},
    {"pod", "", "v1", "pods",
     R"({"spec":{"containers":[{"name":"app","image":"registry.local:5000/app",
         "resources":{"limits":{"cpu":"1","memory":"1Gi"}},
         "readinessProbe":{"httpGet":{"port":8080}},"env":[{"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}],
         "volumeMounts":[{"name":"cfg","mountPath":"/etc/app"}]}],
         "volumes":[{"name":"cfg","configMap":{"name":"app"}},{"name":"scratch"}]}})",
     std::string(R"({"spec":{"containers":[{"name":"app","image":"registry.local:5000/app",
         "resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1","memory":"1Gi"}},
         "readinessProbe":{"httpGet":{"port":8080,"path":"/","scheme":"HTTP"},"timeoutSeconds":1,
           "periodSeconds":10,"successThreshold":1,"failureThreshold":3},
         "env":[{"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName","apiVersion":"v1"}}}],
         "volumeMounts":[{"name":"cfg","mountPath":"/etc/app"}],
         "terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
         "imagePullPolicy":"Always"}],
         "volumes":[{"name":"cfg","configMap":{"name":"app","defaultMode":420}},{"name":"scratch","emptyDir":{}}],)") +
         kPodSpecDefaults +
         R"(,"enableServiceLinks":true,"serviceAccountName":"default","serviceAccount":"default",
         "priority":0,"preemptionPolicy":"PreemptLowerPriority","tolerations":[
           {"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},
           {"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]},
         "status":{"phase":"Pending","qosClass":"Guaranteed"}})"},
    {"node allocatable defaults to capacity", "", "v1", "nodes",
     R"({"status":{"capacity":{"cpu":"4","pods":"110"}}})",
     R"({"status":{"capacity":{"cpu":"4","pods":"110"},"allocatable":{"cpu":"4","pods":"110"}}})"},
    {"endpoints", "", "v1", "endpoints",
     R"({"subsets":[{"addresses":[{"ip":"10.0.0.1"}],"ports":[{"port":80}]}]})",
     R"({"subsets":[{"addresses":[{"ip":"10.0.0.1"}],"ports":[{"port":80,"protocol":"TCP"}]}]})"},
    {"persistentvolumeclaim", "", "v1", "persistentvolumeclaims",
     R"({"spec":{"accessModes":["ReadWriteOnce"]}})",
     R"({"spec":{"accessModes":["ReadWriteOnce"],"volumeMode":"Filesystem"},"status":{"phase":"Pending"}})"},
    {"rolebinding subjects", "rbac.authorization.k8s.io", "v1", "rolebindings",
     R"({"subjects":[{"kind":"User","name":"ann"},{"kind":"Group","name":"ops"},
                     {"kind":"ServiceAccount","name":"ci","namespace":"shop"}]})",
     R"({"subjects":[{"kind":"User","name":"ann","apiGroup":"rbac.authorization.k8s.io"},
                     {"kind":"Group","name":"ops","apiGroup":"rbac.authorization.k8s.io"},
                     {"kind":"ServiceAccount","name":"ci","namespace":"shop","apiGroup":""}]})"},
    {"storageclass", "storage.k8s.io", "v1", "storageclasses",
     R"({"provisioner":"example.com/ssd"})",
     R"({"provisioner":"example.com/ssd","reclaimPolicy":"Delete","volumeBindingMode":"Immediate"})"},
    {"endpointslice", "discovery.k8s.io", "v1", "endpointslices",
     R"({"addressType":"IPv4","ports":[{"port":80}]})",
     R"({"addressType":"IPv4","ports":[{"port":80,"name":"","protocol":"TCP"}]})"},
};

INSTANTIATE_TEST_SUITE_P(Kinds, Defaults, ::testing::ValuesIn(kDefaultCases),
                         [](const ::testing::TestParamInfo<DefaultCase>& info) {
                           return CaseName(info.param.name);
                         });

TEST(Defaults, ImagePullPolicyFollowsTheTag) {
  const std::pair<std::string, std::string> cases[] = {
      {"nginx", "Always"},
      {"nginx:latest", "Always"},
      {"nginx:1.25", "IfNotPresent"},
      {"registry:5000/app", "Always"},
      {"registry:5000/app:v1", "IfNotPresent"},
      {"localhost:5000/team/app:latest", "Always"},
      {"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
       "IfNotPresent"},
      {"Nginx", "IfNotPresent"},
      {"", "IfNotPresent"},
  };
  const Resource& pods = Res("", "v1", "pods");
  for (const auto& [image, policy] : cases) {
    json::object pod = Obj(R"({"spec":{"containers":[{"name":"c"}]}})");
    pod["spec"].as_object()["containers"].as_array()[0].as_object()["image"] = image;
    pods.default_fn(pod);
    std::vector<const json::object*> containers = ObjectsAt(pod, "spec.containers");
    ASSERT_EQ(containers.size(), 1u);
    EXPECT_EQ(StringAt(*containers[0], "imagePullPolicy"), policy) << image;
  }
}

TEST(Defaults, QosClassFromRequestsAndLimits) {
  const Resource& pods = Res("", "v1", "pods");
  const std::pair<std::string, std::string> cases[] = {
      {R"({"name":"c","image":"i"})", "BestEffort"},
      {R"({"name":"c","image":"i","resources":{"requests":{"cpu":"100m"}}})", "Burstable"},
      {R"({"name":"c","image":"i","resources":{"limits":{"cpu":"1","memory":"1Gi"}}})",
       "Guaranteed"},
      {R"({"name":"c","image":"i","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m"}}})",
       "Burstable"},
  };
  for (const auto& [container, qos] : cases) {
    json::object pod = Obj(R"({"spec":{"containers":[)" + container + "]}}");
    pods.default_fn(pod);
    EXPECT_EQ(StringAt(pod, "status.qosClass"), qos) << container;
  }
}

TEST(Defaults, KindsWithoutDefaults) {
  for (auto [group, plural] :
       {std::pair{"", "configmaps"}, std::pair{"", "events"}, std::pair{"", "serviceaccounts"},
        std::pair{"coordination.k8s.io", "leases"}}) {
    EXPECT_TRUE(Res(group, "v1", plural).default_fn == nullptr) << plural;
  }
  EXPECT_TRUE(Res("federation", "v1beta1", "clusters").default_fn == nullptr);
}

}  // namespace
}  // namespace flotilla::api::kinds
