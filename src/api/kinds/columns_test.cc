// Table rows for sample objects, at a fixed `now` three minutes after they
// were created. Cells are compared serialized: strings quoted, integers bare.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>

#include "api/kinds/test_util.h"

namespace flotilla::api::kinds {
namespace {

using ::testing::ElementsAreArray;

TimePoint Now() {
  TimePoint now;
  EXPECT_TRUE(ParseRfc3339("2024-05-01T12:00:00Z", &now));
  return now;
}

// metadata with the creation time three minutes before Now().
std::string Meta(std::string_view name) {
  return R"("metadata":{"name":")" + std::string(name) +
         R"(","namespace":"default","creationTimestamp":"2024-05-01T11:57:00Z"})";
}

struct RowCase {
  std::string name;
  std::string group, version, plural;
  std::string object;
  std::vector<std::string> cells;
};

void PrintTo(const RowCase& c, std::ostream* os) { *os << c.name; }

class Columns : public ::testing::TestWithParam<RowCase> {};

TEST_P(Columns, Row) {
  const RowCase& c = GetParam();
  EXPECT_THAT(Row(Res(c.group, c.version, c.plural), Obj(c.object), Now()),
              ElementsAreArray(c.cells))
      << c.name;
}

const std::string kTemplate = R"("template":{"spec":{"containers":[
    {"name":"nginx","image":"nginx:1.25"},{"name":"proxy","image":"envoy"}]}})";

const RowCase kRowCases[] = {
    {"namespace",
     "",
     "v1",
     "namespaces",
     "{" + Meta("team-a") + R"(,"status":{"phase":"Active"}})",
     {R"("team-a")", R"("Active")", R"("3m")"}},
    {"configmap counts data and binaryData",
     "",
     "v1",
     "configmaps",
     "{" + Meta("cfg") + R"(,"data":{"a":"1","b":"2"},"binaryData":{"c":"Mw=="}})",
     {R"("cfg")", "3", R"("3m")"}},
    {"secret",
     "",
     "v1",
     "secrets",
     "{" + Meta("s") + R"(,"type":"Opaque","data":{"a":"MQ=="}})",
     {R"("s")", R"("Opaque")", "1", R"("3m")"}},
    {"serviceaccount",
     "",
     "v1",
     "serviceaccounts",
     "{" + Meta("default") + R"(,"secrets":[{"name":"t"}]})",
     {R"("default")", "1", R"("3m")"}},
    {"cluster IP service",
     "",
     "v1",
     "services",
     "{" + Meta("web") +
         R"(,"spec":{"type":"ClusterIP","clusterIP":"10.96.0.10","clusterIPs":["10.96.0.10"],
       "selector":{"tier":"front","app":"web"},"ports":[{"port":80,"protocol":"TCP"},{"port":53,"protocol":"UDP"}]}})",
     {R"("web")", R"("ClusterIP")", R"("10.96.0.10")", R"("<none>")", R"("80/TCP,53/UDP")",
      R"("3m")", R"("app=web,tier=front")"}},
    {"pending load balancer",
     "",
     "v1",
     "services",
     "{" + Meta("lb") + R"(,"spec":{"type":"LoadBalancer","clusterIPs":["10.96.0.11"],
       "ports":[{"port":80,"nodePort":30080,"protocol":"TCP"}]}})",
     {R"("lb")", R"("LoadBalancer")", R"("10.96.0.11")", R"("<pending>")", R"("80:30080/TCP")",
      R"("3m")", R"("<none>")"}},
    {"load balancer with ingress and external IPs",
     "",
     "v1",
     "services",
     "{" + Meta("lb") +
         R"(,"spec":{"type":"LoadBalancer","clusterIPs":["10.96.0.11"],"externalIPs":["192.0.2.1"],
       "ports":[{"port":443,"nodePort":30443,"protocol":"TCP"}]},
       "status":{"loadBalancer":{"ingress":[{"hostname":"lb.example.com"},{"ip":"203.0.113.7"}]}}})",
     {R"("lb")", R"("LoadBalancer")", R"("10.96.0.11")",
      R"("203.0.113.7,lb.example.com,192.0.2.1")", R"("443:30443/TCP")", R"("3m")", R"("<none>")"}},
    {"external name service",
     "",
     "v1",
     "services",
     "{" + Meta("db") + R"(,"spec":{"type":"ExternalName","externalName":"db.example.com"}})",
     {R"("db")", R"("ExternalName")", R"("<none>")", R"("db.example.com")", R"("<none>")",
      R"("3m")", R"("<none>")"}},
    {"event",
     "",
     "v1",
     "events",
     "{" + Meta("web-1.17a") +
         R"(,"involvedObject":{"kind":"Pod","name":"web-1","fieldPath":"spec.containers{nginx}"},
       "reason":"Pulled","message":"  Pulled image nginx\n","type":"Normal",
       "source":{"component":"kubelet","host":"node-1"},
       "firstTimestamp":"2024-05-01T11:50:00Z","lastTimestamp":"2024-05-01T11:59:00Z","count":5})",
     {R"("60s")", R"("Normal")", R"("Pulled")", R"("pod/web-1")", R"("spec.containers{nginx}")",
      R"("kubelet, node-1")", R"("Pulled image nginx")", R"("10m")", "5", R"("web-1.17a")"}},
    {"new-style event with a series",
     "",
     "v1",
     "events",
     "{" + Meta("e") + R"(,"involvedObject":{"kind":"Deployment"},"type":"Warning","reason":"Stuck",
       "eventTime":"2024-05-01T11:58:00.000000Z","reportingComponent":"ctrl","reportingInstance":"ctrl-1",
       "series":{"count":3,"lastObservedTime":"2024-05-01T11:59:30.000000Z"}})",
     {R"("30s")", R"("Warning")", R"("Stuck")", R"("deployment")", R"("")", R"("ctrl, ctrl-1")",
      R"("")", R"("2m")", "3", R"("e")"}},
    {"event without times",
     "",
     "v1",
     "events",
     R"({"metadata":{"name":"e"}})",
     {R"("<unknown>")", R"("")", R"("")", R"("")", R"("")", R"("")", R"("")", R"("<unknown>")", "1",
      R"("e")"}},
    {"replicaset",
     "apps",
     "v1",
     "replicasets",
     "{" + Meta("web-5d4") + R"(,"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"},
       "matchExpressions":[{"key":"pod-template-hash","operator":"In","values":["5d4"]}]},)" +
         kTemplate + R"(},"status":{"replicas":3,"readyReplicas":1}})",
     {R"("web-5d4")", "3", "3", "1", R"("3m")", R"("nginx,proxy")", R"("nginx:1.25,envoy")",
      "\"app=web,pod-template-hash in (5d4)\""}},
    {"deployment",
     "apps",
     "v1",
     "deployments",
     "{" + Meta("web") + R"(,"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},)" +
         kTemplate + R"(},"status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}})",
     {R"("web")", R"("2/3")", "3", "2", R"("3m")", R"("nginx,proxy")", R"("nginx:1.25,envoy")",
      R"("app=web")"}},
    {"new deployment without status",
     "apps",
     "v1",
     "deployments",
     "{" + Meta("web") + R"(,"spec":{"replicas":1},"status":{}})",
     {R"("web")", R"("0/1")", "0", "0", R"("3m")", R"("")", R"("")", R"("")"}},
    {"statefulset",
     "apps",
     "v1",
     "statefulsets",
     "{" + Meta("db") + R"(,"spec":{"replicas":3,)" + kTemplate +
         R"(},"status":{"readyReplicas":1}})",
     {R"("db")", R"("1/3")", R"("3m")", R"("nginx,proxy")", R"("nginx:1.25,envoy")"}},
    {"hpa v2 utilization",
     "autoscaling",
     "v2",
     "horizontalpodautoscalers",
     "{" + Meta("web") +
         R"(,"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"minReplicas":2,"maxReplicas":10,
       "metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}}]},
       "status":{"currentReplicas":4,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":45}}}]}})",
     {R"("web")", R"("Deployment/web")", R"("cpu: 45%/80%")", R"("2")", "10", "4", R"("3m")"}},
    {"hpa v2 before the first metrics",
     "autoscaling",
     "v2",
     "horizontalpodautoscalers",
     "{" + Meta("web") +
         R"(,"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":10,
       "metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":80}}},
                  {"type":"Resource","resource":{"name":"memory","target":{"type":"AverageValue","averageValue":"1Gi"}}},
                  {"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"10"}}},
                  {"type":"External","external":{"metric":{"name":"q"},"target":{"type":"Value","value":"30"}}}]}})",
     {R"("web")", R"("Deployment/web")",
      R"("cpu: <unknown>/80%, memory: <unknown>/1Gi + 2 more...")", R"("<unset>")", "10", "0",
      R"("3m")"}},
    {"hpa v2 values",
     "autoscaling",
     "v2",
     "horizontalpodautoscalers",
     "{" + Meta("q") +
         R"(,"spec":{"scaleTargetRef":{"kind":"Deployment","name":"w"},"minReplicas":1,"maxReplicas":3,
       "metrics":[{"type":"External","external":{"metric":{"name":"q"},"target":{"type":"AverageValue","averageValue":"30"}}},
                  {"type":"Object","object":{"metric":{"name":"rps"},"target":{"type":"Value","value":"2k"}}}]},
       "status":{"currentMetrics":[{"type":"External","external":{"metric":{"name":"q"},"current":{"averageValue":"12"}}},
                                   {"type":"Object","object":{"metric":{"name":"rps"},"current":{"value":"1500"}}}]}})",
     {R"("q")", R"("Deployment/w")", R"("12/30 (avg), 1500/2k")", R"("1")", "3", "0", R"("3m")"}},
    {"hpa v1",
     "autoscaling",
     "v1",
     "horizontalpodautoscalers",
     "{" + Meta("web") +
         R"(,"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":5,
       "targetCPUUtilizationPercentage":50},"status":{"currentReplicas":2,"desiredReplicas":2,"currentCPUUtilizationPercentage":30}})",
     {R"("web")", R"("Deployment/web")", R"("cpu: 30%/50%")", R"("1")", "5", "2", R"("3m")"}},
    {"lease",
     "coordination.k8s.io",
     "v1",
     "leases",
     "{" + Meta("flotilla-controllers") + R"(,"spec":{"holderIdentity":"server-1"}})",
     {R"("flotilla-controllers")", R"("server-1")", R"("3m")"}},
    {"ready cluster",
     "federation",
     "v1beta1",
     "clusters",
     "{" + Meta("east") +
         R"(,"status":{"conditions":[{"type":"Offline","status":"False"},{"type":"Ready","status":"True"}],
       "zones":["us-east-1a","us-east-1b"],"region":"us-east-1"}})",
     {R"("east")", R"("True")", R"("Enabled")", R"("us-east-1a,us-east-1b")", R"("us-east-1")",
      R"("3m")"}},
    {"new cluster",
     "federation",
     "v1beta1",
     "clusters",
     "{" + Meta("west") + "}",
     {R"("west")", R"("Unknown")", R"("Enabled")", R"("<none>")", R"("<none>")", R"("3m")"}},
    {"cordoned cluster",
     "federation",
     "v1beta1",
     "clusters",
     "{" + Meta("north") + R"(,"spec":{"unschedulable":true}})",
     {R"("north")", R"("Unknown")", R"("Disabled")", R"("<none>")", R"("<none>")", R"("3m")"}},
    {"running pod",
     "",
     "v1",
     "pods",
     "{" + Meta("web-1") +
         R"(,"spec":{"nodeName":"node-1","containers":[{"name":"a"},{"name":"b"}]},
       "status":{"phase":"Running","podIPs":[{"ip":"10.244.0.5"}],"conditions":[{"type":"Ready","status":"True"}],
       "containerStatuses":[
         {"name":"a","ready":true,"restartCount":2,"state":{"running":{}},
          "lastState":{"terminated":{"exitCode":1,"finishedAt":"2024-05-01T11:55:00Z"}}},
         {"name":"b","ready":true,"restartCount":0,"state":{"running":{}}}]}})",
     {R"("web-1")", R"("2/2")", R"("Running")", "\"2 (5m ago)\"", R"("3m")", R"("10.244.0.5")",
      R"("node-1")", R"("<none>")", R"("<none>")"}},
    {"crash looping pod",
     "",
     "v1",
     "pods",
     "{" + Meta("web-2") +
         R"(,"spec":{"containers":[{"name":"a"}],"readinessGates":[{"conditionType":"lb"}]},
       "status":{"phase":"Running","conditions":[{"type":"lb","status":"False"}],
       "containerStatuses":[{"name":"a","ready":false,"restartCount":7,
         "state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}})",
     {R"("web-2")", R"("0/1")", R"("CrashLoopBackOff")", R"("7")", R"("3m")", R"("<none>")",
      R"("<none>")", R"("<none>")", R"("0/1")"}},
    {"initializing pod",
     "",
     "v1",
     "pods",
     "{" + Meta("web-3") +
         R"(,"spec":{"initContainers":[{"name":"i1"},{"name":"i2"}],"containers":[{"name":"a"}]},
       "status":{"phase":"Pending","initContainerStatuses":[
         {"name":"i1","state":{"terminated":{"exitCode":0}}},{"name":"i2","state":{"running":{}}}]}})",
     {R"("web-3")", R"("0/1")", R"("Init:1/2")", R"("0")", R"("3m")", R"("<none>")", R"("<none>")",
      R"("<none>")", R"("<none>")"}},
    {"terminating pod",
     "",
     "v1",
     "pods",
     R"({"metadata":{"name":"web-4","creationTimestamp":"2024-04-29T08:00:00Z","deletionTimestamp":"2024-05-01T11:59:00Z"},
       "spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running"}})",
     {R"("web-4")", R"("0/1")", R"("Terminating")", R"("0")", R"("2d4h")", R"("<none>")",
      R"("<none>")", R"("<none>")", R"("<none>")"}},
    {"node",
     "",
     "v1",
     "nodes",
     R"({"metadata":{"name":"node-1","creationTimestamp":"2024-05-01T11:57:00Z",
       "labels":{"node-role.kubernetes.io/control-plane":"","kubernetes.io/role":"edge"}},
       "spec":{"unschedulable":true},
       "status":{"conditions":[{"type":"Ready","status":"True"}],
       "addresses":[{"type":"Hostname","address":"node-1"},{"type":"InternalIP","address":"172.18.0.2"}],
       "nodeInfo":{"kubeletVersion":"v1.32.4","osImage":"Flotilla simulated node"}}})",
     {R"("node-1")", R"("Ready,SchedulingDisabled")", R"("control-plane,edge")", R"("3m")",
      R"("v1.32.4")", R"("172.18.0.2")", R"("<none>")", R"("Flotilla simulated node")",
      R"("<unknown>")", R"("<unknown>")"}},
    {"endpoints",
     "",
     "v1",
     "endpoints",
     "{" + Meta("web") + R"(,"subsets":[{"addresses":[{"ip":"10.0.0.1"},{"ip":"10.0.0.2"}],
       "ports":[{"port":80},{"port":443}]}]})",
     {R"("web")", R"("10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...")", R"("3m")"}},
    {"bound claim",
     "",
     "v1",
     "persistentvolumeclaims",
     "{" + Meta("data") +
         R"(,"spec":{"volumeName":"pv-1","storageClassName":"standard","volumeMode":"Filesystem"},
       "status":{"phase":"Bound","accessModes":["ReadWriteMany","ReadWriteOnce"],"capacity":{"storage":"10Gi"}}})",
     {R"("data")", R"("Bound")", R"("pv-1")", R"("10Gi")", R"("RWO,RWX")", R"("standard")",
      R"("<unset>")", R"("3m")", R"("Filesystem")"}},
    {"default storageclass",
     "storage.k8s.io",
     "v1",
     "storageclasses",
     R"({"metadata":{"name":"standard","creationTimestamp":"2024-05-01T11:57:00Z",
         "annotations":{"storageclass.kubernetes.io/is-default-class":"true"}},
         "provisioner":"flotilla.io/simulated","allowVolumeExpansion":true})",
     {R"x("standard (default)")x", R"("flotilla.io/simulated")", R"("Delete")", R"("Immediate")",
      "true", R"("3m")"}},
    {"storageclass",
     "storage.k8s.io",
     "v1",
     "storageclasses",
     R"({"metadata":{"name":"slow","creationTimestamp":"2024-05-01T11:57:00Z"},
         "provisioner":"example.com/hdd","reclaimPolicy":"Retain",
         "volumeBindingMode":"WaitForFirstConsumer"})",
     {R"("slow")", R"("example.com/hdd")", R"("Retain")", R"("WaitForFirstConsumer")", "false",
      R"("3m")"}},
    {"endpointslice",
     "discovery.k8s.io",
     "v1",
     "endpointslices",
     "{" + Meta("web-abc") +
         R"(,"addressType":"IPv4","ports":[{"name":"http","port":80},{"name":"x"}],
       "endpoints":[{"addresses":["10.0.0.1"]},{"addresses":["10.0.0.2"]}]})",
     {R"("web-abc")", R"("IPv4")", R"("80,x")", R"("10.0.0.1,10.0.0.2")", R"("3m")"}},
    {"empty endpointslice",
     "discovery.k8s.io",
     "v1",
     "endpointslices",
     "{" + Meta("web-abc") + R"(,"addressType":"IPv4"})",
     {R"("web-abc")", R"("IPv4")", R"("<unset>")", R"("<unset>")", R"("3m")"}},
};

INSTANTIATE_TEST_SUITE_P(Kinds, Columns, ::testing::ValuesIn(kRowCases),
                         [](const ::testing::TestParamInfo<RowCase>& info) {
                           return CaseName(info.param.name);
                         });

TEST(Columns, AgeWithoutCreationTimestampIsUnknown) {
  EXPECT_EQ(Row(Res("", "v1", "configmaps"), Obj(R"({"metadata":{"name":"c"}})"), Now()).back(),
            R"("<unknown>")");
}

}  // namespace
}  // namespace flotilla::api::kinds
